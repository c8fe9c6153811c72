"""Selection (KINA 3.1, Prop. 1, App. B): certified constrained greedy maximising F_d^sp -> selected_facts."""

import hashlib

import dagster as dg

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.anchors.io import MAIN_FILE
from benchmark_platform.anchors.persist import record_import
from benchmark_platform.centrality import build_problem, select
from benchmark_platform.centrality.persist import read_scores
from benchmark_platform.defs.common import DatabaseResource, discipline_partitions, key
from benchmark_platform.selection.persist import write_selection
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()
    params = spec.selection.centrality
    params_version = hashlib.sha256(params.model_dump_json().encode()).hexdigest()[:12]

    @dg.asset(key=key(spec, "selected_facts"), partitions_def=discipline_partitions(spec), group_name="selection",
              deps=[key(spec, "support_centrality")],
              code_version=f"kina-selection-1:{params_version}",
              description="Topic pre-approval: the K_d facts maximising F_d^sp under stratum quotas and the "
                          "duplicate bound (lazy greedy with repair, exact MIP for small shortlists), with a "
                          "certified ratio F(S) / upper bound on the optimum.")
    def selected_facts(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        db = database.db
        folder = spec.anchors_dir / discipline
        run = db.query("SELECT manual_review FROM centrality_runs WHERE spec = %s AND discipline = %s",
                       (spec.name, discipline))
        if not (folder / MAIN_FILE).is_file() or not run or run[0]["manual_review"]:
            reason = run[0]["manual_review"] if run and run[0]["manual_review"] else "no anchor files"
            k_total = load_anchor_set(folder).k_total if (folder / MAIN_FILE).is_file() else 0
            write_selection(db, spec.name, discipline, "facts", max(k_total, 1), None, None, manual_review=reason)
            context.log.warning(f"{discipline}: manual review ({reason}); no automatic selection")
            return dg.MaterializeResult(metadata={"manual_review": reason, "selected": 0})
        anchor_set = load_anchor_set(folder)
        import_id, _ = record_import(db, spec.name, anchor_set)
        items, pairs = read_scores(db, spec.name, discipline)
        problem = build_problem(items, pairs, anchor_set, params)
        result = select(problem, params)  # InfeasibleSelectionError names the stratum; nothing is written then
        write_selection(db, spec.name, discipline, "facts", anchor_set.k_total, import_id, result)
        context.log.info(f"{discipline}: {len(result.selected_ids)} of {problem.n} shortlisted facts, "
                         f"F={result.objective:.4f}, certified ratio {result.certified_ratio:.4f}")
        return dg.MaterializeResult(metadata={
            "selected": len(result.selected_ids),
            "shortlisted": problem.n,
            "method": result.method,
            "objective": dg.MetadataValue.float(result.objective),
            "upper_bound": dg.MetadataValue.float(result.upper_bound),
            "certified_ratio": dg.MetadataValue.float(result.certified_ratio),
            "repairs": result.repairs,
            "stratum_counts": dg.MetadataValue.json(result.stratum_counts),
        })

    return dg.Definitions(assets=[selected_facts])
