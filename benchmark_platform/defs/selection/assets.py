"""Selection (KINA 3.1, Prop. 1, App. B): certified constrained greedy maximising F_d^sp, from one implementation
before generation (selected_facts: topic pre-approval) and after audit (selected_items)."""

import hashlib
from typing import Any

import dagster as dg

from benchmark_platform.centrality import NO_FACT_POOL, scoring_version, signature_model
from benchmark_platform.defs.common import (
    SINGLE_RUN,
    DatabaseResource,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.inputs.versions import settings_hash
from benchmark_platform.defs.llm.resources import busiest_pool, gateway_sessions, llm_metadata
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.selection import SelectionResult, select_facts, select_items
from benchmark_platform.selection.config import MOVED_FROM_CENTRALITY
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
    # the centrality thresholds and the selection's own (duplicate bound, MIP), without the response term (below)
    params_version = hashlib.sha256(
        spec.selection.model_dump_json(include={"centrality", *MOVED_FROM_CENTRALITY}).encode()
    ).hexdigest()[:12]
    taxonomy = settings_hash(spec.taxonomy, spec.seed)  # K_d targets and the seed
    response_version = hashlib.sha256(spec.selection.response.model_dump_json().encode()).hexdigest()[:12]
    embedder = StaticEmbedder()
    model = signature_model(spec)

    @dg.asset(
        key=key(spec, "selected_facts"),
        partitions_def=discipline_partitions(spec),
        group_name="selection",
        deps=[key(spec, "support_centrality")],
        # eager: a re-scored discipline re-selects (identity partitions: only that discipline); items are content-
        # derived, so an unchanged selection regenerates the same items and the audit finds nothing stale
        automation_condition=dg.AutomationCondition.eager(),
        code_version=f"kina-selection-1:{params_version}:{taxonomy}",
        backfill_policy=SINGLE_RUN,
        pool=stage_pool("selected_facts"),
        description="Topic pre-approval: the K_d facts maximising F_d^sp under stratum quotas and the "
        "duplicate bound (lazy greedy with repair, exact MIP for small shortlists), with a "
        "certified ratio F(S) / upper bound on the optimum.",
    )
    def selected_facts(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            if not spec.sources:  # an item-bank spec: nothing to do here, and the metadata says so
                return dg.MaterializeResult(metadata={"nothing_to_do": NO_FACT_POOL})
            outcome = select_facts(database.db, spec, discipline)
            if outcome.result is None:
                context.log.warning(f"{discipline}: manual review ({outcome.manual_review}); no automatic selection")
                return dg.MaterializeResult(metadata={"manual_review": outcome.manual_review, "selected": 0})
            result = outcome.result
            context.log.info(
                f"{discipline}: {len(result.selected_ids)} of {outcome.shortlisted} shortlisted facts, "
                f"F={result.objective:.4f}, certified ratio {result.certified_ratio:.4f}"
            )
            return dg.MaterializeResult(metadata={**_certificate(result), "shortlisted": outcome.shortlisted})

        return per_partition(context, one)

    @dg.asset(
        key=key(spec, "selected_items"),
        partitions_def=discipline_partitions(spec),
        group_name="selection",
        deps=[key(spec, "audit_findings"), key(spec, "anchors")],
        automation_condition=dg.AutomationCondition.eager(),  # a new audit run (or anchors) re-selects
        code_version=f"kina-item-selection-2:{scoring_version(spec, embedder)}:{response_version}:{taxonomy}",
        required_resource_keys={"database", *(["llm"] if model else [])},
        backfill_policy=SINGLE_RUN,
        pool=busiest_pool([model] if model else []) or stage_pool("selected_items"),
        description="After audit: the audited items the policy did not drop, scored by the same support "
        "centrality as the facts (against the discipline's anchors and strata), and the K items "
        "maximising F_d^sp (plus a response-pattern term when imported answers exist) under the quotas and the "
        "duplicate bound, with a certified ratio and, with answers, the held-out estimate of ranking fidelity.",
    )
    def selected_items(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            outcome = select_items(
                context.resources.database.db,
                spec,
                discipline,
                embedder,
                gateway_sessions(context, spec.llm),
                context.log.info,
            )
            counts: dict[str, dg.MetadataValue] = {}
            signature: dict[str, Any] = {}
            if outcome.scored is not None:
                counts = counts_metadata(
                    **{f"scored_{k}": v for k, v in outcome.scored.result.counts.items()},
                    audit_run_id=outcome.audit_run_id or 0,
                    k_total=outcome.k_total,
                )
                signature = {
                    "signature_source": outcome.scored.signature_source,
                    **llm_metadata(outcome.scored.gateway_totals),
                }
            if outcome.result is None:
                context.log.warning(
                    f"{discipline}: manual review ({outcome.manual_review}); no automatic item selection"
                )
                return dg.MaterializeResult(
                    metadata={"manual_review": outcome.manual_review, "selected": 0, **counts, **signature}
                )
            result = outcome.result
            context.log.info(
                f"{discipline}: {len(result.selected_ids)} of {outcome.shortlisted} shortlisted items (K={outcome.k}, "
                f"K_d={outcome.k_total}), F={result.objective:.4f}, certified ratio "
                f"{result.certified_ratio:.4f}"
            )
            return dg.MaterializeResult(
                metadata={
                    **_certificate(result),
                    **counts,
                    **counts_metadata(k=outcome.k, shortlisted=outcome.shortlisted),
                    "fallback_signatures_used": outcome.scored is not None and outcome.scored.result.fallback_used,
                    **signature,
                    **outcome.response,  # the response-pattern term and the held-out estimate (or why there is none)
                }
            )

        return per_partition(context, one)

    return dg.Definitions(assets=[selected_facts, selected_items])
