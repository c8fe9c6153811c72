"""Selection (KINA 3.1, Prop. 1, App. B): certified constrained greedy maximising F_d^sp, from one implementation
before generation (selected_facts: topic pre-approval) and after audit (selected_items)."""

import dataclasses
import hashlib

import dagster as dg

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.anchors.io import MAIN_FILE
from benchmark_platform.anchors.persist import record_import
from benchmark_platform.centrality import build_problem, select
from benchmark_platform.centrality.persist import audited_item_candidates, read_scores
from benchmark_platform.defs.centrality.assets import NO_FACT_POOL, score_pool, scoring_version, signature_model
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.defs.llm.resources import busiest_pool
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.selection import SelectionResult
from benchmark_platform.selection.persist import write_selection
from benchmark_platform.spec import BenchmarkSpec


def _certificate(result: SelectionResult) -> dict[str, dg.MetadataValue]:
    return {
        "selected": dg.MetadataValue.int(len(result.selected_ids)),
        "method": dg.MetadataValue.text(result.method),
        "objective": dg.MetadataValue.float(result.objective),
        "upper_bound": dg.MetadataValue.float(result.upper_bound),
        "certified_ratio": dg.MetadataValue.float(result.certified_ratio),
        "repairs": dg.MetadataValue.int(result.repairs),
        "stratum_counts": dg.MetadataValue.json(result.stratum_counts),
    }


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources and spec.item_bank is None:
        return dg.Definitions()
    params = spec.selection.centrality
    params_version = hashlib.sha256(params.model_dump_json().encode()).hexdigest()[:12]
    embedder = StaticEmbedder()
    model = signature_model(spec)

    @dg.asset(
        key=key(spec, "selected_facts"),
        partitions_def=discipline_partitions(spec),
        group_name="selection",
        deps=[key(spec, "support_centrality")],
        code_version=f"kina-selection-1:{params_version}",
        description="Topic pre-approval: the K_d facts maximising F_d^sp under stratum quotas and the "
        "duplicate bound (lazy greedy with repair, exact MIP for small shortlists), with a "
        "certified ratio F(S) / upper bound on the optimum.",
    )
    def selected_facts(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        if not spec.sources:  # an item-bank spec: nothing to do here, and the metadata says so
            return dg.MaterializeResult(metadata={"nothing_to_do": NO_FACT_POOL})
        db = database.db
        folder = spec.anchors_dir / discipline
        run = db.query(
            "SELECT manual_review FROM centrality_runs WHERE spec = %s AND discipline = %s", (spec.name, discipline)
        )
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
        context.log.info(
            f"{discipline}: {len(result.selected_ids)} of {problem.n} shortlisted facts, "
            f"F={result.objective:.4f}, certified ratio {result.certified_ratio:.4f}"
        )
        return dg.MaterializeResult(metadata={**_certificate(result), "shortlisted": problem.n})

    @dg.asset(
        key=key(spec, "selected_items"),
        partitions_def=discipline_partitions(spec),
        group_name="selection",
        deps=[key(spec, "audit_findings"), key(spec, "anchors")],
        automation_condition=dg.AutomationCondition.eager(),  # a new audit run (or anchors) re-selects
        code_version=f"kina-item-selection-1:{scoring_version(spec, embedder)}",
        required_resource_keys={"database", *(["llm"] if model else [])},
        pool=busiest_pool([model] if model else []),
        description="After audit: the audited items the policy did not drop, scored by the same support "
        "centrality as the facts (against the discipline's anchors and strata), and the K items "
        "maximising F_d^sp under the quotas and the duplicate bound, with a certified ratio.",
    )
    def selected_items(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        discipline = context.partition_key
        db = context.resources.database.db
        folder = spec.anchors_dir / discipline

        def manual(
            reason: str, k_total: int, import_id: int | None = None, extra: dict | None = None
        ) -> dg.MaterializeResult:
            write_selection(db, spec.name, discipline, "items", max(k_total, 1), import_id, None, manual_review=reason)
            context.log.warning(f"{discipline}: manual review ({reason}); no automatic item selection")
            return dg.MaterializeResult(metadata={"manual_review": reason, "selected": 0, **(extra or {})})

        if not (folder / MAIN_FILE).is_file():
            return manual("no anchor files", 0)
        anchor_set = load_anchor_set(folder)
        import_id, _ = record_import(db, spec.name, anchor_set)
        candidates, audit_run = audited_item_candidates(db, spec.name, discipline)
        if audit_run is None:
            return manual("no audit run: items are selected after audit", anchor_set.k_total, import_id)
        context.log.info(
            f"{discipline}: scoring {len(candidates)} audited items (audit run {audit_run}) against "
            f"{len(anchor_set.anchor_items)} anchors"
        )
        # The item scores are not stored: centrality_* hold the fact pool's run (one per partition); the selection
        # and its certificate are, in selections (target 'items') and selected_items.
        scored, signature_metadata = score_pool(context, spec, candidates, anchor_set, embedder)
        counts = counts_metadata(
            **{f"scored_{k}": v for k, v in scored.counts.items()}, audit_run_id=audit_run, k_total=anchor_set.k_total
        )
        if scored.manual_review or scored.problem is None:
            return manual(
                scored.manual_review or "no selection problem",
                anchor_set.k_total,
                import_id,
                {**counts, **signature_metadata},
            )
        # K for items: the anchors' K_d, capped by what the surviving shortlist allows. Generation made the pool
        # from the K_d pre-approved facts and the audit dropped some, so it may hold fewer than K_d selectable
        # items; the cap (upper quotas and duplicate bound, `attainable_size`) keeps every one that fits rather
        # than failing. Lower quotas are not relaxed: a stratum the audit left short still stops with its name.
        problem = dataclasses.replace(scored.problem, k=min(anchor_set.k_total, scored.problem.attainable_size()))
        result = select(problem, params)  # InfeasibleSelectionError names the stratum; nothing is written then
        write_selection(db, spec.name, discipline, "items", problem.k, import_id, result)
        context.log.info(
            f"{discipline}: {len(result.selected_ids)} of {problem.n} shortlisted items (K={problem.k}, "
            f"K_d={anchor_set.k_total}), F={result.objective:.4f}, certified ratio "
            f"{result.certified_ratio:.4f}"
        )
        return dg.MaterializeResult(
            metadata={
                **_certificate(result),
                **counts,
                **counts_metadata(k=problem.k, shortlisted=problem.n),
                "fallback_signatures_used": scored.fallback_used,
                **signature_metadata,
            }
        )

    return dg.Definitions(assets=[selected_facts, selected_items])
