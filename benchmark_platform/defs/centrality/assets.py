"""Support centrality (KINA App. B): signatures, calibrated alignment, bank, pair scores, C_d and the shortlist.

psi(q) comes from `selection.signature_model` (one of the spec's `models`) through the `llm` resource when the spec
names one, else from deterministic features; the run's metadata says which, with the gateway's totals.
"""

import dagster as dg

from benchmark_platform.centrality import NO_FACT_POOL, score_facts, scoring_version, signature_model
from benchmark_platform.defs.common import (
    SINGLE_RUN,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.inputs.versions import settings_hash
from benchmark_platform.defs.llm.resources import busiest_pool, gateway_sessions, llm_metadata
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources and spec.item_bank is None:
        return dg.Definitions()
    embedder = StaticEmbedder()
    model = signature_model(spec)

    @dg.asset(
        key=key(spec, "support_centrality"),
        partitions_def=discipline_partitions(spec),
        group_name="centrality",
        deps=[*([key(spec, "facts")] if spec.sources else []), key(spec, "anchors")],
        automation_condition=dg.AutomationCondition.eager(),  # new anchors (or facts) re-score the discipline
        code_version=f"support-centrality-1:{scoring_version(spec, embedder)}:{settings_hash(spec.taxonomy, spec.seed)}",
        required_resource_keys={"database", *(["llm"] if model else [])},
        backfill_policy=SINGLE_RUN,
        # with a signature model, the pool of its provider (one per step: it bounds the calls); else the stage's
        pool=busiest_pool([model] if model else []) or stage_pool("support_centrality"),
        description="psi(q), A^_d with BootLQ, reference bank B-bar_d, N_k by exact search, S_d pair scores, "
        "C^_d with the anchor tail surrogate and BootLQ, and the shortlist K_d of each fact pool.",
    )
    def support_centrality(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            if not spec.sources:  # an item-bank spec: nothing to do here, and the metadata says so
                return dg.MaterializeResult(metadata={"nothing_to_do": NO_FACT_POOL})
            scoring = score_facts(
                context.resources.database.db,
                spec,
                discipline,
                embedder,
                gateway_sessions(context, spec.llm),
                context.log.info,
            )
            if scoring is None:
                context.log.warning(f"{discipline}: no anchor files; manual review")
                return dg.MaterializeResult(metadata={"manual_review": "no anchor files"})
            result = scoring.scored.result
            if result.manual_review:
                context.log.warning(f"{discipline}: manual review: {result.manual_review}")
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(**result.counts),
                    "fallback_signatures_used": result.fallback_used,
                    "manual_review": result.manual_review or "",
                    "anchor_version": scoring.anchor_version,
                    "signature_source": scoring.scored.signature_source,
                    **llm_metadata(scoring.scored.gateway_totals),
                }
            )

        return per_partition(context, one)

    return dg.Definitions(assets=[support_centrality])
