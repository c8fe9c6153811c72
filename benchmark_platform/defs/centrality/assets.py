"""Support centrality (KINA App. B): signatures, calibrated alignment, bank, pair scores, C_d and the shortlist."""

import hashlib

import dagster as dg

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.anchors.io import MAIN_FILE
from benchmark_platform.anchors.persist import record_import
from benchmark_platform.centrality import score_discipline
from benchmark_platform.centrality.persist import fact_candidates, write_centrality
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()
    params = spec.selection.centrality
    params_version = hashlib.sha256(params.model_dump_json().encode()).hexdigest()[:12]
    embedder = StaticEmbedder()

    @dg.asset(key=key(spec, "support_centrality"), partitions_def=discipline_partitions(spec),
              group_name="centrality", deps=[key(spec, "facts"), key(spec, "anchors")],
              automation_condition=dg.AutomationCondition.eager(),  # new anchors (or facts) re-score the discipline
              code_version=f"support-centrality-1:{embedder.version[:12]}:{params_version}",
              description="psi(q), A^_d with BootLQ, reference bank B-bar_d, N_k by faiss, S_d pair scores, "
                          "C^_d with the anchor tail surrogate and BootLQ, and the shortlist K_d of each fact pool.")
    def support_centrality(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        db = database.db
        folder = spec.anchors_dir / discipline
        if not (folder / MAIN_FILE).is_file():
            context.log.warning(f"{discipline}: no anchor files; manual review")
            return dg.MaterializeResult(metadata={"manual_review": "no anchor files"})
        anchor_set = load_anchor_set(folder)
        import_id, _ = record_import(db, spec.name, anchor_set)
        candidates = fact_candidates(db, spec.name, discipline)
        context.log.info(f"{discipline}: scoring {len(candidates)} facts against {len(anchor_set.anchor_items)} anchors")
        # No LLM is configured for signatures here: psi falls back to deterministic features, and the run says so.
        result = score_discipline(candidates, anchor_set, params, embedder.encode)
        write_centrality(db, spec.name, result, import_id, params)
        if result.manual_review:
            context.log.warning(f"{discipline}: manual review: {result.manual_review}")
        return dg.MaterializeResult(metadata={
            **counts_metadata(**result.counts),
            "fallback_signatures_used": result.fallback_used,
            "manual_review": result.manual_review or "",
            "anchor_version": anchor_set.version,
        })

    return dg.Definitions(assets=[support_centrality])
