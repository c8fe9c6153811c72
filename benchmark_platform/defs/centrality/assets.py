"""Support centrality (KINA App. B): signatures, calibrated alignment, bank, pair scores, C_d and the shortlist.

psi(q) comes from `selection.signature_model` (one of the spec's `models`) through the `llm` resource when the spec
names one, else from deterministic features; the run's metadata says which, with the gateway's totals.
"""

import asyncio
import hashlib
from collections.abc import Sequence
from typing import Any

import dagster as dg

from benchmark_platform.anchors import AnchorSet, load_anchor_set
from benchmark_platform.anchors.io import MAIN_FILE
from benchmark_platform.anchors.persist import record_import
from benchmark_platform.centrality import CentralityResult, score_discipline
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.persist import fact_candidates, write_centrality
from benchmark_platform.centrality.signature import PROMPT_PATH, gateway_completion
from benchmark_platform.defs.common import counts_metadata, discipline_partitions, key
from benchmark_platform.defs.llm.resources import busiest_pool, llm_metadata
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import BenchmarkSpec

NO_FACT_POOL = (
    "no fact pool: the spec has no sources; its items come from the item bank and are scored in selected_items"
)


def signature_model(spec: BenchmarkSpec) -> ModelConfig | None:
    """The model config `selection.signature_model` names (None: deterministic signatures); unknown names fail."""
    name = spec.selection.signature_model
    if name is None:
        return None
    model = next((m for m in spec.models if m.name == name), None)
    if model is None:
        raise ValueError(
            f"spec {spec.name!r}: selection.signature_model {name!r} is not one of the spec's models "
            f"{sorted(m.name for m in spec.models)}"
        )
    return model


def scoring_version(spec: BenchmarkSpec, embedder: StaticEmbedder) -> str:
    """Changes with the embedder, the centrality parameters and, when an LLM gives psi, its config and prompt."""
    payload = spec.selection.centrality.model_dump_json()
    model = signature_model(spec)
    if model is not None:
        payload += model.model_dump_json() + PROMPT_PATH.read_text(encoding="utf-8")
    return f"{embedder.version[:12]}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


def score_pool(
    context: dg.AssetExecutionContext,
    spec: BenchmarkSpec,
    candidates: Sequence[Candidate],
    anchor_set: AnchorSet,
    embedder: StaticEmbedder,
) -> tuple[CentralityResult, dict[str, Any]]:
    """score_discipline with psi from the signature model through the gateway (or deterministic features), and the
    metadata saying which. An invalid answer raises SignatureError naming the item, so nothing is written."""
    params, model = spec.selection.centrality, signature_model(spec)
    if model is None:
        result = score_discipline(candidates, anchor_set, params, embedder.encode)
        return result, {"signature_source": "deterministic fallback (no signature_model)"}

    async def run() -> tuple[CentralityResult, dict[str, Any]]:
        async with context.resources.llm.open([model], spec.llm, context.run.run_id) as gateway:
            # scoring is synchronous: it runs in a worker thread and sends each batch to this loop's gateway
            complete = gateway_completion(gateway, model.name, asyncio.get_running_loop(), seed=spec.seed)
            result = await asyncio.to_thread(
                score_discipline, candidates, anchor_set, params, embedder.encode, complete
            )
        return result, llm_metadata(gateway.totals)

    result, totals = asyncio.run(run())
    return result, {"signature_source": f"llm {model.name}", **totals}


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
        code_version=f"support-centrality-1:{scoring_version(spec, embedder)}",
        required_resource_keys={"database", *(["llm"] if model else [])},
        pool=busiest_pool([model] if model else []),
        description="psi(q), A^_d with BootLQ, reference bank B-bar_d, N_k by faiss, S_d pair scores, "
        "C^_d with the anchor tail surrogate and BootLQ, and the shortlist K_d of each fact pool.",
    )
    def support_centrality(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        discipline = context.partition_key
        if not spec.sources:  # an item-bank spec: nothing to do here, and the metadata says so
            return dg.MaterializeResult(metadata={"nothing_to_do": NO_FACT_POOL})
        db = context.resources.database.db
        folder = spec.anchors_dir / discipline
        if not (folder / MAIN_FILE).is_file():
            context.log.warning(f"{discipline}: no anchor files; manual review")
            return dg.MaterializeResult(metadata={"manual_review": "no anchor files"})
        anchor_set = load_anchor_set(folder)
        import_id, _ = record_import(db, spec.name, anchor_set)
        candidates = fact_candidates(db, spec.name, discipline)
        context.log.info(
            f"{discipline}: scoring {len(candidates)} facts against {len(anchor_set.anchor_items)} anchors"
        )
        result, signature_metadata = score_pool(context, spec, candidates, anchor_set, embedder)
        write_centrality(db, spec.name, result, import_id, spec.selection.centrality)
        if result.manual_review:
            context.log.warning(f"{discipline}: manual review: {result.manual_review}")
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(**result.counts),
                "fallback_signatures_used": result.fallback_used,
                "manual_review": result.manual_review or "",
                "anchor_version": anchor_set.version,
                **signature_metadata,
            }
        )

    return dg.Definitions(assets=[support_centrality])
