"""Generation benchmark: deterministic items per second, and the LLM strategies' throughput over the gateway's bound.

Facts: the TTB list of wine permittees (../shared/data/ttb_permittees), one structured fact per permittee and field
(City, Prem_County, Operating_Name), as the facts stage writes them.

- template_items_per_s: every wine-spec template that applies, over every fact (field indexes built inside the
  timing); cloze_items_per_s and pseudo_mcq_items_per_s likewise for deterministic distractor mining and 10-option
  pseudo-MCQs.
- llm_throughput_over_bound: one generation round of LLM_ITEMS items (fact-to-question, distractor mining, scenario,
  comparative in OenoBench's ratio) by five generators on one loopback provider (the gateway's scripted server in its
  own process, fixed LATENCY_S per call, CONCURRENCY slots), wall time of the whole round (planning, mining,
  clustering, prompts, parsing) against the bound CONCURRENCY / LATENCY_S calls per second (median of REPEATS
  rounds, each with fresh model ids so nothing comes from the cache);
  llm_request_phase_over_bound the same calls over the span from the first request sent to the last answer (what
  is left once planning and the capacity check, which must finish before the first call, are set aside).
"""

from __future__ import annotations

import csv
import json
import os
import tempfile
import time
from pathlib import Path

import uvloop

from benchmark_platform.bench.llm_gateway import CLIENT_CORE, ScriptedProcess, _drop, _fresh_database
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.generation.build import generate
from benchmark_platform.generation.config import PseudoMcqConfig
from benchmark_platform.generation.distractors import EntityCatalogue
from benchmark_platform.generation.model import Entity, Fact, norm
from benchmark_platform.generation.pseudo_mcq import pseudo_item
from benchmark_platform.generation.strategies import cloze_item, mine_all
from benchmark_platform.generation.templates import FieldIndex, matching_templates, template_item
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.double import Latency, Rule, Script
from benchmark_platform.llm.gateway import Gateway
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec

PERMITTEES = PROJECT_ROOT.parent / "shared" / "data" / "ttb_permittees" / "ttb_wine_producers.csv"
FIELDS = ("City", "Prem_County", "Operating_Name")
LLM_ITEMS, POOL, CONCURRENCY, LATENCY_S, REPEATS = 2_000, 6_000, 64, 0.2, 3
DRAFT = json.dumps(
    {
        "question": "Which option is grounded in the verified fact?",
        "answer": "Alpha",
        "distractors": ["Beta", "Gamma", "Delta"],
        "explanation": "Alpha is what the fact states.",
    }
)
MINED = json.dumps(
    {
        "question": "Which producer does the verified statement describe?",
        "explanation": "The statement names the answer; the others are confusable neighbours.",
    }
)


def permittee_facts() -> list[Fact]:
    facts = []
    with PERMITTEES.open(encoding="cp1252", newline="") as f:
        for row_no, row in enumerate(csv.DictReader(f), start=2):
            owner = row["Owner_Name"].strip()
            for field in FIELDS:
                value = row[field].strip()
                if owner and value and value not in owner:
                    text = f"{owner} holds TTB wine permit {row['Permit_Number']} with {field} {value}."
                    facts.append(
                        Fact(
                            f"{row_no}:{field}",
                            text,
                            f"{PERMITTEES.name}#row={row_no}",
                            owner,
                            field,
                            value,
                            "producer",
                            (Entity(f"producer:{norm(owner)}", "producer", owner),),
                        )
                    )
    return facts


def deterministic_rates(facts: list[Fact]) -> dict[str, float]:
    spec = load_spec("wine")
    templates = spec.generation.templates
    t0 = time.perf_counter()
    index = FieldIndex(facts)
    made = sum(
        template_item("bench", 1, t, f, index, 4, i % 4, "v") is not None
        for i, f in enumerate(facts)
        for t in matching_templates(templates, f)
    )
    template_rate = made / (time.perf_counter() - t0)
    subset = facts[:POOL]
    t0 = time.perf_counter()
    catalogue = EntityCatalogue(subset, StaticEmbedder())
    cloze = sum(
        cloze_item("bench", m, 0, "comprehension") is not None
        for m in mine_all(subset[:1000], catalogue, FieldIndex(subset))
        if m is not None
    )
    cloze_rate = cloze / (time.perf_counter() - t0)
    config = PseudoMcqConfig()
    by_field: dict[str | None, list[Fact]] = {}
    for f in facts:
        by_field.setdefault(f.field, []).append(f)
    t0 = time.perf_counter()
    pseudo = sum(
        pseudo_item("bench", 1, group[i : i + 6], index, config, i % 10, "L3", "analysis") is not None
        for group in by_field.values()
        for i in range(0, min(len(group), 6_000), 6)
    )
    pseudo_rate = pseudo / (time.perf_counter() - t0)
    return {
        "template_items": made,
        "template_items_per_s": round(template_rate, 1),
        "cloze_items_per_s": round(cloze_rate, 1),
        "pseudo_mcq_items_per_s": round(pseudo_rate, 1),
    }


async def _llm_round(
    db,
    models: list[ModelConfig],
    facts: list[Fact],
    journal: Path,
    only: str | None = None,
):
    spec = load_spec("wine")
    shares = {s: v for s, v in spec.generation.strategy_shares.items() if s != "template" and only in (None, s)}
    config = spec.generation.model_validate(
        {
            **spec.generation.model_dump(),
            "generators": [m.name for m in models],
            "items_per_discipline": LLM_ITEMS,
            "strategy_shares": {s: v / sum(shares.values()) for s, v in shares.items()},
            # the scripted provider answers each task with one fixed reply, which cannot be a valid pseudo-MCQ of every
            # fact group (its statements cite the group's fact ids): LLM pseudo-MCQs are covered by the tests instead
            "pseudo_mcq": {**spec.generation.pseudo_mcq.model_dump(), "share_of_scenarios": 0.0},
        }
    )
    seen, selected = set(), []
    for f in facts:  # one fact per permittee, so no two items share a fact
        if f.subject not in seen:
            seen.add(f.subject)
            selected.append(f)
    selected = selected[:LLM_ITEMS]
    embedder = StaticEmbedder()
    async with Gateway(models, GatewaySettings(), db, run_id="bench-generation", journal_dir=journal) as gw:
        t0 = time.perf_counter()
        result = await generate("bench", spec.seed, "producers", config, selected, facts[:POOL], {}, embedder, gw)
        wall = time.perf_counter() - t0
    return result, gw.totals, wall


def main() -> None:
    os.sched_setaffinity(0, {CLIENT_CORE})
    facts = permittee_facts()
    figures = deterministic_rates(facts)
    db, admin_url = _fresh_database()
    server = ScriptedProcess(
        Script(
            latency=Latency(mean_s=LATENCY_S),
            rules=[Rule(match="TASK: distractor_mining", reply=MINED), Rule(match="TASK:", reply=DRAFT)],
        )
    )
    try:
        models = [
            ModelConfig(
                name=f"gen{i}",
                family=f"family{i}",
                base_url=server.base_url,
                provider="loopback",
                model=f"m{i}",
                max_tokens=64,
                max_concurrency=CONCURRENCY,
            )
            for i in range(5)
        ]
        journal = Path(tempfile.mkdtemp(prefix="gen_bench_"))
        mixed, f2q = [], []
        for repeat in range(REPEATS):  # fresh model ids each time: nothing is answered from the cache
            fresh = [m.model_copy(update={"model": f"{m.model}-{repeat}"}) for m in models]
            mixed.append(uvloop.run(_llm_round(db, fresh, facts, journal)))
            # reference in the same run: fact-to-question only (no mining, pairing or clustering)
            fresh = [m.model_copy(update={"model": f"{m.model}-f2q-{repeat}"}) for m in models]
            f2q.append(uvloop.run(_llm_round(db, fresh, facts, journal, only="fact_to_question")))
    finally:
        server.stop()
        _drop(db, admin_url)
    bound = CONCURRENCY / LATENCY_S

    def ratio(run: tuple) -> float:
        return run[1].provider_calls / run[2] / bound

    result, totals, wall = sorted(mixed, key=ratio)[REPEATS // 2]  # the median round
    calls = totals.provider_calls
    print(
        json.dumps(
            {
                "bench": "generation",
                **figures,
                "llm_items": len(result.items),
                "llm_calls": calls,
                "llm_invalid": sum(result.invalid.values()),
                "llm_items_per_strategy": result.tally("strategy"),
                "llm_items_per_generator": result.tally("generator"),
                "llm_round_seconds": round(wall, 2),
                "llm_bound_calls_per_s": bound,
                "llm_throughput_over_bound": round(ratio((result, totals, wall)), 4),
                "llm_throughput_over_bound_runs": [round(ratio(run), 4) for run in mixed],
                "llm_request_phase_over_bound": round(calls / totals.provider_seconds / bound, 4),
                "llm_f2q_only_throughput_over_bound": round(sorted(map(ratio, f2q))[REPEATS // 2], 4),
                "cpu_count": os.cpu_count(),
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
