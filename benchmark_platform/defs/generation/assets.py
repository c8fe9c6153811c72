"""Generation: items from a discipline's selected facts (five strategies, quotas, per-generator cap, closed-book gate).

With `generation.generators` empty (the embedded default) only the deterministic strategies run: templates, 10-option
pseudo-MCQs built from facts, and distractor mining as a cloze. Generators and gate models name entries of the spec's
`models`; the asset then calls them through the `llm` resource (the LLM gateway) and queues on a provider's pool.
"""

import hashlib
import json

import dagster as dg

from benchmark_platform.defs.common import (
    SINGLE_RUN,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.llm import busiest_pool, gateway_sessions, llm_metadata
from benchmark_platform.generation import PROMPTS_DIR, expected_calls, generate_discipline, generation_is_automatic
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
    known = {m.name: m for m in spec.models}  # the spec's validators checked that every name used here is known
    models = [known[name] for name in dict.fromkeys([*config.generators, *config.gate.models.values()])]

    @dg.asset(
        key=key(spec, "items"),
        partitions_def=discipline_partitions(spec),
        group_name="generation",
        deps=[key(spec, "selected_facts")],
        # eager when generation spends no more LLM calls per item than the spec lets automation spend; else None:
        # a person (UI launch) or a scheduled backfill generates. New items are then audited by the re-audit sensor
        automation_condition=dg.AutomationCondition.eager() if generation_is_automatic(spec) else None,
        code_version=_code_version(spec),
        backfill_policy=SINGLE_RUN,
        pool=busiest_pool(models, expected_calls(config)) or stage_pool("items"),
        required_resource_keys={"database", "embedder", *(["llm"] if models else [])},
        description="Items generated from the discipline's selected facts by five strategies under per-strategy "
        "quotas and a per-generator cap, each linked to its facts, generator, prompt version and "
        "closed-book gate result.",
    )
    def items(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            if not spec.sources:  # an item-bank spec: nothing to generate from, and the metadata says so
                return dg.MaterializeResult(
                    metadata={
                        "nothing_to_do": "no facts to generate from: the spec has no sources; items come from the item bank"
                    }
                )
            done = generate_discipline(
                context.resources.database.db,
                spec,
                discipline,
                context.resources.embedder.embedder,
                models,
                gateway_sessions(context, spec.llm),
            )
            result, counts, selected = done.result, done.stored, done.selected_facts
            by = result.tally
            context.log.info(
                f"{discipline}: {len(result.items)} items ({by('strategy')}) from {selected} selected "
                f"facts; reserve {len(result.reserve)}; unfilled {dict(result.unfilled)}; "
                f"invalid {dict(result.invalid)}"
            )
            for reason in result.rejections[:10]:
                context.log.warning(f"{discipline}: LLM pseudo-MCQ rejected: {reason}")
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(**{**result.counts(), **counts}, selected_facts=selected),
                    **llm_metadata(done.gateway_totals),
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

        return per_partition(context, one)

    return dg.Definitions(assets=[items])
