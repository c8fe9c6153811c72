"""Generation: items from a discipline's selected facts (five strategies, quotas, per-generator cap, closed-book gate).

With `generation.generators` empty (the embedded default) only the deterministic strategies run: templates, 10-option
pseudo-MCQs built from facts, and distractor mining as a cloze. Generators and gate models name entries of the spec's
`models`; the asset then calls them through the `llm` resource (the LLM gateway) and queues on a provider's pool.
"""

import asyncio
import hashlib
import json

import dagster as dg

from benchmark_platform.defs.common import counts_metadata, discipline_partitions, key
from benchmark_platform.defs.llm import busiest_pool, llm_metadata
from benchmark_platform.generation.persist import audit_pass_rates, load_pool, load_selected, store_items
from benchmark_platform.generation.plan import expected_calls
from benchmark_platform.generation.run import GenerationResult, generate
from benchmark_platform.generation.strategies import PROMPTS_DIR
from benchmark_platform.spec import BenchmarkSpec


def _code_version(spec: BenchmarkSpec) -> str:
    """Changes with the prompts, the generation section (quotas, caps, templates, models) or the seed."""
    prompts = [p.read_text(encoding="utf-8") for p in sorted(PROMPTS_DIR.glob("*.md"))]
    payload = json.dumps(
        [prompts, spec.generation.model_dump(mode="json"), [m.model_dump(mode="json") for m in spec.models], spec.seed],
        sort_keys=True,
    )
    return "generation-2-" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources and spec.item_bank is None:
        return dg.Definitions()
    config = spec.generation
    known = {m.name: m for m in spec.models}
    named = [*config.generators, *config.gate.models.values()]
    unknown = sorted({name for name in named if name not in known})
    if unknown:
        raise ValueError(
            f"spec {spec.name!r}: generation names models {unknown} that are not in `models` (known: {sorted(known)})"
        )
    models = [known[name] for name in dict.fromkeys(named)]

    @dg.asset(
        key=key(spec, "items"),
        partitions_def=discipline_partitions(spec),
        group_name="generation",
        deps=[key(spec, "selected_facts")],
        code_version=_code_version(spec),
        pool=busiest_pool(models, expected_calls(config)),
        required_resource_keys={"database", "embedder", *(["llm"] if models else [])},
        description="Items generated from the discipline's selected facts by five strategies under per-strategy "
        "quotas and a per-generator cap, each linked to its facts, generator, prompt version and "
        "closed-book gate result.",
    )
    def items(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        discipline, db = context.partition_key, context.resources.database.db
        if not spec.sources:  # an item-bank spec: nothing to generate from, and the metadata says so
            return dg.MaterializeResult(
                metadata={
                    "nothing_to_do": "no facts to generate from: the spec has no sources; items come from the item bank"
                }
            )
        selected = load_selected(db, spec.name, discipline)
        pool = load_pool(db, spec.name, discipline)
        audited = audit_pass_rates(db, spec.name)
        embedder = context.resources.embedder.embedder
        ordinal = spec.discipline_keys.index(discipline)

        async def run() -> tuple[GenerationResult, dict]:
            if not models:
                return await generate(
                    spec.name, spec.seed, discipline, config, selected, pool, audited, embedder, ordinal=ordinal
                ), {}
            async with context.resources.llm.open(models, spec.llm, context.run.run_id) as gateway:
                result = await generate(
                    spec.name,
                    spec.seed,
                    discipline,
                    config,
                    selected,
                    pool,
                    audited,
                    embedder,
                    gateway,
                    ordinal=ordinal,
                )
            return result, llm_metadata(gateway.totals)

        result, llm_totals = asyncio.run(run())
        counts = store_items(db, spec.name, discipline, result.items, result.reserve)
        by = result.tally
        context.log.info(
            f"{discipline}: {len(result.items)} items ({by('strategy')}) from {len(selected)} selected "
            f"facts; reserve {len(result.reserve)}; unfilled {dict(result.unfilled)}; "
            f"invalid {dict(result.invalid)}"
        )
        for reason in result.rejections[:10]:
            context.log.warning(f"{discipline}: LLM pseudo-MCQ rejected: {reason}")
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(**{**result.counts(), **counts}, selected_facts=len(selected)),
                **llm_totals,
                "per_strategy": dg.MetadataValue.json(by("strategy")),
                "per_generator": dg.MetadataValue.json(by("generator")),
                "strategy_quota": dg.MetadataValue.json(
                    {k: round(v, 3) for k, v in result.plan.strategy_quota.items()}
                ),
                "unfilled": dg.MetadataValue.json(dict(result.unfilled)),
                "invalid": dg.MetadataValue.json(dict(result.invalid)),
                "pseudo_mcq_rejections": dg.MetadataValue.json(result.rejections[:20]),
            }
        )

    return dg.Definitions(assets=[items])
