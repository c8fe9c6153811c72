"""The support-centrality stage for one partition: which model gives psi, scoring a pool, and the fact pool's run.

`score_pool` is also what the selection stage calls to score audited items; both go through the LLM gateway the
caller opens (the Dagster `llm` resource) when the spec names a signature model, else use deterministic features.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from benchmark_platform.anchors import AnchorSet, current_anchors
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.persist import fact_candidates, write_centrality
from benchmark_platform.centrality.scoring import CentralityResult, score_discipline
from benchmark_platform.centrality.signature import PROMPT_PATH, gateway_completion
from benchmark_platform.embed import Embedder
from benchmark_platform.llm import GatewayTotals, OpenGateway
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database


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


def scoring_version(spec: BenchmarkSpec, embedder: Embedder) -> str:
    """Changes with the embedder, the centrality parameters and, when an LLM gives psi, its config and prompt."""
    payload = spec.selection.centrality.model_dump_json() + f"tau_dup={spec.selection.tau_dup}"
    model = signature_model(spec)
    if model is not None:
        payload += model.model_dump_json() + PROMPT_PATH.read_text(encoding="utf-8")
    return f"{embedder.version[:12]}:{hashlib.sha256(payload.encode()).hexdigest()[:12]}"


@dataclass(frozen=True)
class ScoredPool:
    """A pool's scores, where psi came from, and the gateway's totals when a model gave it."""

    result: CentralityResult
    signature_source: str
    gateway_totals: GatewayTotals | None = None


def score_pool(
    spec: BenchmarkSpec,
    candidates: Sequence[Candidate],
    anchor_set: AnchorSet,
    embedder: Embedder,
    open_gateway: OpenGateway,
) -> ScoredPool:
    """score_discipline with psi from the signature model through the gateway (or deterministic features).
    An invalid answer raises SignatureError naming the item, so nothing is written."""
    params, model = spec.selection.centrality, signature_model(spec)
    if model is None:
        result = score_discipline(candidates, anchor_set, params, embedder.encode, tau_dup=spec.selection.tau_dup)
        return ScoredPool(result, "deterministic fallback (no signature_model)")

    async def run() -> tuple[CentralityResult, GatewayTotals]:
        async with open_gateway([model]) as gateway:
            # scoring is synchronous: it runs in a worker thread and sends each batch to this loop's gateway
            complete = gateway_completion(gateway, model.name, asyncio.get_running_loop(), seed=spec.seed)
            result = await asyncio.to_thread(
                lambda: score_discipline(
                    candidates, anchor_set, params, embedder.encode, complete, tau_dup=spec.selection.tau_dup
                )
            )
        return result, gateway.totals

    result, totals = asyncio.run(run())
    return ScoredPool(result, f"llm {model.name}", totals)


@dataclass(frozen=True)
class FactScoring:
    """The fact pool's centrality run as stored, with the anchor version it was scored against."""

    anchor_version: str
    scored: ScoredPool


def score_facts(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    embedder: Embedder,
    open_gateway: OpenGateway,
    log: Callable[[str], None],
) -> FactScoring | None:
    """Score the discipline's facts against its stored anchors (the anchors stage's current import) and replace its
    stored run; None without anchors (no files)."""
    stored = current_anchors(db, spec.name, discipline)
    if stored is None:
        return None
    anchor_set, import_id = stored.anchor_set, stored.import_id
    candidates = fact_candidates(db, spec.name, discipline)
    log(f"{discipline}: scoring {len(candidates)} facts against {len(anchor_set.anchor_items)} anchors")
    scored = score_pool(spec, candidates, anchor_set, embedder, open_gateway)
    write_centrality(db, spec.name, scored.result, import_id, spec.selection.centrality)
    return FactScoring(anchor_set.version, scored)


NO_FACT_POOL = (
    "no fact pool: the spec has no sources; its items come from the item bank and are scored in selected_items"
)
