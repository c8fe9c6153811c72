"""The orchestrator's arithmetic: quotas within one item, the hard per-generator cap, adaptive shares, positions."""

from __future__ import annotations

import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from benchmark_platform.generation.config import DETERMINISTIC, GenerationConfig
from benchmark_platform.generation.plan import (
    balanced_positions,
    capped_allocation,
    expected_calls,
    largest_remainder,
    pass_rate_weights,
    plan,
)

GENERATORS = ["claude", "gpt", "gemini", "llama", "qwen"]


@settings(max_examples=200, deadline=None)
@given(hs.integers(0, 500), hs.lists(hs.floats(0.01, 1.0), min_size=1, max_size=6))
def test_largest_remainder_sums_and_stays_within_one(total, weights):
    shares = {f"s{i}": w for i, w in enumerate(weights)}
    counts = largest_remainder(total, shares)
    assert sum(counts.values()) == total
    for k, w in shares.items():
        assert abs(counts[k] - total * w / sum(weights)) < 1


@settings(max_examples=200, deadline=None)
@given(hs.integers(0, 400), hs.lists(hs.floats(0.01, 1.0), min_size=1, max_size=6), hs.integers(1, 100))
def test_capped_allocation_never_exceeds_the_cap(total, weights, cap):
    w = {f"g{i}": x for i, x in enumerate(weights)}
    counts = capped_allocation(total, w, cap)
    assert sum(counts.values()) == min(total, cap * len(w))
    assert max(counts.values()) <= cap


def test_oenobench_mix_with_five_generators_meets_quotas_and_cap():
    config = GenerationConfig(generators=GENERATORS)
    for n in (40, 100, 389, 3266):
        p = plan(n, config, {})
        strategies = Counter(s.strategy for s in p.slots)
        for strategy, quota in p.strategy_quota.items():
            assert abs(strategies[strategy] - quota) <= 1, (n, strategy)
        generators = Counter(s.generator for s in p.slots)
        assert max(generators[g] for g in GENERATORS) <= math.floor(0.21 * n) == p.generator_cap
        assert generators[DETERMINISTIC] == strategies["template"] and p.cap_overflow == 0
        assert len(p.slots) == n


def test_too_few_generators_for_the_cap_fall_back_to_deterministic_slots():
    p = plan(100, GenerationConfig(generators=["only"]), {})
    generators = Counter(s.generator for s in p.slots)
    assert generators["only"] == 21 and generators[DETERMINISTIC] == 79 and len(p.slots) == 100
    assert p.cap_overflow == 100 - 12 - 21  # the LLM strategies' 88 slots, less what the one model may take


def test_no_generator_runs_the_deterministic_strategies_in_their_ratio():
    p = plan(40, GenerationConfig(), {})
    strategies = Counter(s.strategy for s in p.slots)
    assert set(strategies) == {"template", "distractor_mining"} and sum(strategies.values()) == 40
    assert abs(strategies["template"] - 40 * 0.119 / 0.243) <= 1
    assert {s.generator for s in p.slots} == {DETERMINISTIC}


def test_pass_rates_of_earlier_rounds_shift_shares_under_the_cap():
    audited = {"claude": (90, 100), "gpt": (70, 100), "gemini": (10, 100)}
    weights = pass_rate_weights(["claude", "gpt", "gemini", "llama"], audited)
    assert weights["claude"] > weights["gpt"] > weights["llama"] == 0.5 > weights["gemini"]
    p = plan(
        200,
        GenerationConfig(generators=["claude", "gpt", "gemini", "llama", "qwen", "mistral"], generator_cap=0.21),
        audited,
    )
    counts = Counter(s.generator for s in p.slots)
    assert counts["claude"] == 42 == p.generator_cap  # capped even though it passes most
    assert counts["gemini"] < counts["gpt"] and counts["gemini"] < counts["llama"]


def test_difficulty_tiers_and_pseudo_share():
    config = GenerationConfig(generators=GENERATORS)
    p = plan(1000, config, {})
    llm = [s for s in p.slots if s.generator != DETERMINISTIC]
    tiers = Counter(s.difficulty for s in llm)
    for tier, share in config.difficulty_shares.items():
        assert abs(tiers[tier] - share * len(llm)) <= 1
    templates = [s for s in p.slots if s.strategy == "template"]
    assert sum(s.format == "pseudo_mcq10" for s in templates) == round(0.2 * len(templates))


@settings(max_examples=50, deadline=None)
@given(hs.integers(1, 400), hs.sampled_from([4, 10]), hs.integers(0, 2**31))
def test_answer_positions_are_balanced_within_one(n, k, seed):
    counts = Counter(balanced_positions(n, k, seed, "x"))
    assert max(counts.values()) - min(counts.get(i, 0) for i in range(k)) <= 1


def test_llm_pseudo_slots_are_a_share_of_scenario_slots_and_change_no_count():
    with_pseudo = GenerationConfig(generators=GENERATORS)
    without = with_pseudo.model_copy(
        update={"pseudo_mcq": with_pseudo.pseudo_mcq.model_copy(update={"share_of_scenarios": 0.0})}
    )
    for n in (40, 100, 389, 3266):
        p, q = plan(n, with_pseudo, {}), plan(n, without, {})
        assert [(s.strategy, s.generator, s.difficulty) for s in p.slots] == [
            (s.strategy, s.generator, s.difficulty) for s in q.slots
        ]  # quotas, cap and tiers untouched
        llm_pseudo = [s for s in p.slots if s.format == "pseudo_mcq10" and s.generator != DETERMINISTIC]
        scenarios = sum(s.strategy == "scenario" for s in p.slots)
        assert {s.strategy for s in llm_pseudo} == {"scenario"} and len(llm_pseudo) == round(0.2 * scenarios)
        assert not any(s.format == "pseudo_mcq10" and s.generator != DETERMINISTIC for s in q.slots)


def test_too_few_pseudo_groups_go_to_the_template_slots_first():
    config = GenerationConfig(generators=GENERATORS)
    full = plan(389, config, {})
    template = sum(s.format == "pseudo_mcq10" and s.strategy == "template" for s in full.slots)
    llm = sum(s.format == "pseudo_mcq10" and s.strategy == "scenario" for s in full.slots)
    assert template > 0 and llm > 0
    short = plan(389, config, {}, limits={"pseudo_mcq10": template + 1})
    assert Counter((s.strategy, s.format) for s in short.slots if s.format == "pseudo_mcq10") == {
        ("template", "pseudo_mcq10"): template,
        ("scenario", "pseudo_mcq10"): 1,
    }
    assert Counter(s.strategy for s in short.slots) == Counter(s.strategy for s in full.slots)


def test_expected_calls_rank_generators_and_gate_models():
    config = GenerationConfig(
        generators=["a", "b"], generator_cap=0.5, gate={"models": {"L1": "g", "L2": "g", "L3": "a"}}
    )
    calls = expected_calls(config)
    assert calls["b"] == pytest.approx((1 - 0.119) / 2) and calls["a"] == pytest.approx(calls["b"] + 0.25)
    assert calls["g"] == pytest.approx(0.3 + 0.3)
