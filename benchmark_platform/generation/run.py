"""The generation stage for one partition: load the discipline's selected facts, its fact pool and the audit's pass
rates, run the round (build.py, through the gateway when the spec names generators or gate models), store the items."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass

from benchmark_platform.embed import Embedder
from benchmark_platform.generation.build import GenerationResult, generate
from benchmark_platform.generation.persist import audit_pass_rates, load_pool, load_selected, store_items
from benchmark_platform.llm import GatewayTotals, OpenGateway
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database


@dataclass(frozen=True)
class DisciplineItems:
    result: GenerationResult
    selected_facts: int
    stored: dict[str, int]
    gateway_totals: GatewayTotals | None


def generate_discipline(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    embedder: Embedder,
    models: Sequence[ModelConfig],
    open_gateway: OpenGateway,
) -> DisciplineItems:
    """Replace the discipline's items (and reserve) with a new round over its selected facts."""
    selected = load_selected(db, spec.name, discipline)
    pool = load_pool(db, spec.name, discipline)
    audited = audit_pass_rates(db, spec.name)
    ordinal = spec.discipline_keys.index(discipline)

    async def run() -> tuple[GenerationResult, GatewayTotals | None]:
        if not models:
            result = await generate(
                spec.name, spec.seed, discipline, spec.generation, selected, pool, audited, embedder, ordinal=ordinal
            )
            return result, None
        async with open_gateway(models) as gateway:
            result = await generate(
                spec.name,
                spec.seed,
                discipline,
                spec.generation,
                selected,
                pool,
                audited,
                embedder,
                gateway,
                ordinal=ordinal,
            )
        return result, gateway.totals

    result, totals = asyncio.run(run())
    stored = store_items(db, spec.name, discipline, result.items, result.reserve)
    return DisciplineItems(result, len(selected), stored, totals)
