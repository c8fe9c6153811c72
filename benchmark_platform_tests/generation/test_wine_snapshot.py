"""Must show, on the wine snapshot (regions and grape_varieties, materialising only the `items` partitions on the
database prepared once): counts per strategy and per generator within one of their quotas and caps; every 10-option
item passes the pseudo-MCQ validator; answer positions balanced (chi-square p > 0.05). Figures in BENCHMARKS.md."""

from __future__ import annotations

from collections import Counter

import pytest
from scipy.stats import chisquare

from benchmark_platform.generation.config import DETERMINISTIC
from benchmark_platform.generation.model import OptionExplanation
from benchmark_platform.generation.plan import plan
from benchmark_platform.generation.pseudo_mcq import from_parameters, validate
from benchmark_platform.llm.double import Script
from benchmark_platform.spec import load_spec
from benchmark_platform_tests.generation.conftest import DISCIPLINES, generate_items, pseudo_rules, scripted_models
from benchmark_platform_tests.generation.test_strategies import VALID

pytestmark = pytest.mark.slow  # the `prepared` database: ingest to selection of two disciplines (~20 s)


def stored_items(db) -> list[dict]:
    return db.query("""
        SELECT i.item_id, i.discipline, i.format, i.options, i.answer_index, g.strategy, g.generator, g.parameters,
               coalesce((SELECT json_agg(json_build_array(e.explanation, e.sources) ORDER BY e.position)
                         FROM item_option_explanations e WHERE e.item_id = i.item_id), '[]') AS explanations
        FROM items i JOIN generation_metadata g USING (item_id) WHERE i.spec = 'wine' ORDER BY i.item_id""")


def check_set(db, spec) -> dict[str, object]:
    """Materialise every prepared discipline and check the three claims; returns the figures."""
    figures: dict[str, object] = {}
    for discipline in DISCIPLINES:
        meta = generate_items(db, spec, discipline).metadata
        quota = meta["strategy_quota"].value
        per_strategy, per_generator = meta["per_strategy"].value, meta["per_generator"].value
        n = meta["slots"].value
        assert (
            meta["unfilled"].value in ({}, {"template": 0, "distractor_mining": 0})
            or sum(meta["unfilled"].value.values()) == 0
        ), meta["unfilled"].value
        for strategy, q in quota.items():
            assert abs(per_strategy.get(strategy, 0) - q) <= 1, (discipline, strategy, per_strategy, quota)
        planned = plan(n, spec.generation, {}, set(quota)).generator_counts
        for generator, count in per_generator.items():
            if generator != DETERMINISTIC:
                assert count <= meta["generator_cap"].value and abs(count - planned[generator]) <= 1
        figures[discipline] = {
            "strategy": per_strategy,
            "quota": quota,
            "generator": per_generator,
            "cap": meta["generator_cap"].value,
        }
    rows = [r for r in stored_items(db) if r["discipline"] in DISCIPLINES]
    pseudo = [r for r in rows if r["format"] == "pseudo_mcq10"]
    for r in pseudo:
        item = from_parameters(
            r["options"],
            r["answer_index"],
            r["parameters"],
            [OptionExplanation(text, tuple(sources)) for text, sources in r["explanations"]],
        )
        assert validate(item, spec.generation.pseudo_mcq) == [], r["item_id"]
    for fmt, k in (("mcq4", 4), ("pseudo_mcq10", 10)):
        positions = Counter(r["answer_index"] for r in rows if r["format"] == fmt)
        if positions:
            p = chisquare([positions.get(i, 0) for i in range(k)]).pvalue
            assert p > 0.05, (fmt, positions)
            figures[f"{fmt}_positions"] = {"counts": [positions.get(i, 0) for i in range(k)], "p": round(p, 3)}
    figures["pseudo_mcq10_valid"] = len(pseudo)
    figures["pseudo_mcq10_llm"] = sum(r["generator"] != DETERMINISTIC for r in pseudo)
    return figures


def test_deterministic_default_meets_quotas_validator_and_balance(prepared):
    figures = check_set(prepared, load_spec("wine"))
    assert figures["pseudo_mcq10_valid"] > 0
    print(figures)


def test_five_scripted_generators_meet_quotas_caps_validator_and_balance(prepared, servers):
    server = servers(Script(rules=[*pseudo_rules(prepared, load_spec("wine"), DISCIPLINES), *VALID]))
    models = scripted_models(server.base_url, 5, "snapshot")
    spec = load_spec("wine")
    spec = spec.model_copy(
        update={
            "models": models,
            "generation": spec.generation.model_copy(update={"generators": [m.name for m in models]}),
        }
    )
    figures = check_set(prepared, spec)
    five = {"fact_to_question", "distractor_mining", "template", "scenario", "comparative"}
    assert set(figures["regions"]["strategy"]) == five, figures["regions"]
    # the grape list states only a colour per variety (no sentence of it can be blanked so that a single variety
    # fits), but the rulebooks' variety facts can be: distractor mining asks which variety an appellation permits
    assert set(figures["grape_varieties"]["strategy"]) == five
    for discipline in DISCIPLINES:
        assert set(figures[discipline]["generator"]) == {*(m.name for m in models), DETERMINISTIC}
    assert figures["pseudo_mcq10_llm"] > 0  # scenario slots written as 10-option items, all passing the validator
    print(figures)
