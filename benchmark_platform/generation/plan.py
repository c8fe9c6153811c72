"""The orchestrator's arithmetic (OenoBench 3.4): how many items of each strategy, by which generator, at which
difficulty, in which format, with the answer where.

- Strategy counts: largest-remainder apportionment of the spec's shares over the strategies that can run (the
  deterministic ones only, when no generator is configured), so each count is within 1 of share x N.
- Generators: every slot of an LLM strategy goes to a model; each model gets at most floor(cap x N) items (the hard
  cap) and otherwise a share proportional to its audit pass rate in earlier rounds ((passed + 1) / (audited + 2), so
  a model never audited starts at 1/2), water-filled under the cap. Slots no model may take under the cap become
  deterministic distractor-mining slots.
- 10-option pseudo-MCQs: a share of the template slots (built from facts, deterministic) and, with generators, a
  share of the scenario slots (written by the slot's generator). Scenario, not template: templates are
  deterministic by definition and outside the generators' shares, while scenario synthesis is the LLM strategy that
  already combines several facts into one item. Only a slot's format changes, so every strategy count, generator
  count and difficulty tier is the same as without pseudo-MCQs: quotas and the cap hold by construction. When the
  facts allow fewer pseudo-MCQs than planned (`limits['pseudo_mcq10']`), the deterministic ones come first.
- Answer positions: each block of k consecutive items of a format holds every position once (seeded order), so the
  positions are balanced to within one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeVar

from benchmark_platform.generation.config import (
    DETERMINISTIC,
    DETERMINISTIC_STRATEGIES,
    DIFFICULTIES,
    STRATEGIES,
    GenerationConfig,
    Strategy,
)
from benchmark_platform.generation.model import seeded

if TYPE_CHECKING:
    from benchmark_platform.spec import BenchmarkSpec

K = TypeVar("K", bound=str)  # the keys an allocation splits over: strategies, generators, tiers, formats


@dataclass(frozen=True)
class Slot:
    index: int
    strategy: Strategy
    generator: str
    difficulty: str | None  # None: the template states it
    cognitive: str
    format: str  # 'mcq4' | 'pseudo_mcq10'


@dataclass(frozen=True)
class Plan:
    slots: tuple[Slot, ...]
    strategy_quota: dict[Strategy, float]  # share x N of each strategy that can run
    generator_cap: int
    generator_counts: dict[str, int]
    cap_overflow: int  # LLM slots the cap forced onto deterministic distractor mining


def largest_remainder(total: int, shares: Mapping[K, float]) -> dict[K, int]:
    """Integer counts summing to `total`, each within 1 of its exact share (Hamilton apportionment)."""
    weight = sum(shares.values())
    if total <= 0 or weight <= 0:
        return {k: 0 for k in shares}
    exact = {k: total * v / weight for k, v in shares.items()}
    counts = {k: math.floor(v) for k, v in exact.items()}
    for k in sorted(exact, key=lambda k: (counts[k] - exact[k], list(shares).index(k)))[: total - sum(counts.values())]:
        counts[k] += 1
    return counts


def water_fill(total: float, weights: Mapping[K, float], caps: Mapping[K, float]) -> dict[K, float]:
    """Split `total` in proportion to `weights` with no key above its cap, the excess going to the others in
    proportion (min(total, sum of caps) in all)."""
    alloc = dict.fromkeys(weights, 0.0)
    free, left = set(weights), min(float(total), float(sum(caps[k] for k in weights)))
    while free and left > 1e-9:
        weight = sum(weights[g] for g in free)
        share = {g: left * weights[g] / weight if weight > 0 else left / len(free) for g in free}
        capped = {g for g in free if alloc[g] + share[g] >= caps[g]}
        if not capped:
            for g in free:
                alloc[g] += share[g]
            break
        for g in capped:
            left -= caps[g] - alloc[g]
            alloc[g] = caps[g]
        free -= capped
    return alloc


def capped_allocation(total: int, weights: Mapping[K, float], cap: int | Mapping[K, int]) -> dict[K, int]:
    """Integer split of `total` in proportion to `weights`, no key above its cap (water-filling, then largest
    remainder under the caps), each within 1 of its water-filled share."""
    caps = {k: cap if isinstance(cap, int) else cap[k] for k in weights}
    alloc = water_fill(total, weights, caps)
    target = round(sum(alloc.values()))
    counts = {g: math.floor(v + 1e-9) for g, v in alloc.items()}
    order = sorted(
        (g for g in weights if counts[g] < caps[g]), key=lambda g: (counts[g] - alloc[g], list(weights).index(g))
    )
    for g in order[: target - sum(counts.values())]:
        counts[g] += 1
    return counts


def pass_rate_weights(generators: list[str], audited: Mapping[str, tuple[int, int]]) -> dict[str, float]:
    """(passed + 1) / (audited + 2) per generator from earlier rounds' audit findings ((passed, audited) pairs)."""
    return {g: (audited.get(g, (0, 0))[0] + 1) / (audited.get(g, (0, 0))[1] + 2) for g in generators}


def _interleave(counts: Mapping[K, int]) -> list[K]:
    """Each key `counts[key]` times, spread evenly (smooth weighted round robin)."""
    keys, weights = list(counts), list(counts.values())
    total, current, out = sum(weights), [0] * len(weights), list[K]()
    for _ in range(total):
        best = 0
        for i, w in enumerate(weights):
            current[i] += w
            if current[i] > current[best]:  # ties go to the earlier key
                best = i
        current[best] -= total
        out.append(keys[best])
    return out


def balanced_positions(n: int, k: int, seed: int, key: str) -> list[int]:
    """n answer positions out of k: every block of k holds each position once, in a seeded order."""
    rng = seeded(seed, "positions", key)
    out: list[int] = []
    while len(out) < n:
        block = list(range(k))
        rng.shuffle(block)
        out += block
    return out[:n]


def plan(
    n: int,
    config: GenerationConfig,
    audited: Mapping[str, tuple[int, int]],
    available: set[str] | None = None,
    limits: Mapping[str, int] | None = None,
) -> Plan:
    """Slots for `n` items. `available`: strategies the discipline's facts allow (default: all); `limits`: the most
    items a strategy can make from them (its share beyond goes to the others, in proportion), and under the key
    'pseudo_mcq10' the most slots (template and scenario together) that can be 10-option pseudo-MCQs."""
    generators = list(config.generators)
    runnable = [
        s
        for s in STRATEGIES
        if config.strategy_shares.get(s, 0) > 0
        and (generators or s in DETERMINISTIC_STRATEGIES)
        and (available is None or s in available)
    ]
    shares = {s: config.strategy_shares[s] for s in runnable}
    caps = {s: (limits or {}).get(s, n) for s in runnable}
    quota = water_fill(n, shares, caps)
    counts = capped_allocation(n, shares, caps)
    cap = math.floor(config.generator_cap * n + 1e-9)
    llm_slots = sum(c for s, c in counts.items() if s != "template") if generators else 0
    gen_counts = capped_allocation(llm_slots, pass_rate_weights(generators, audited), cap) if generators else {}
    overflow = llm_slots - sum(gen_counts.values())
    # the overflow is taken from the LLM strategies in proportion and rendered as deterministic distractor mining
    taken = largest_remainder(overflow, {s: counts[s] for s in counts if s != "template"}) if overflow else {}
    strategies = _interleave({s: counts[s] - taken.get(s, 0) for s in counts if s != "template"}) if generators else []
    model_for = _interleave(gen_counts)
    difficulty = _interleave(
        largest_remainder(len(strategies), {d: config.difficulty_shares.get(d, 0.0) for d in DIFFICULTIES})
    )
    n_templates = counts.get("template", 0)
    pseudo_limit = (limits or {}).get("pseudo_mcq10", n)
    n_pseudo = min(round(config.pseudo_mcq.share_of_templates * n_templates), pseudo_limit)
    n_scenarios = strategies.count("scenario")
    n_llm_pseudo = min(round(config.pseudo_mcq.share_of_scenarios * n_scenarios), pseudo_limit - n_pseudo)
    scenario_formats = iter(_interleave({"pseudo_mcq10": n_llm_pseudo, "mcq4": n_scenarios - n_llm_pseudo}))
    slots: list[Slot] = []
    for strategy, model, level in zip(strategies, model_for, difficulty, strict=True):
        fmt = next(scenario_formats) if strategy == "scenario" else "mcq4"
        slots.append(Slot(len(slots), strategy, model, level, config.cognitive[strategy], fmt))
    deterministic_dm = (counts.get("distractor_mining", 0) if not generators else 0) + overflow
    for _ in range(deterministic_dm):
        slots.append(
            Slot(len(slots), "distractor_mining", DETERMINISTIC, "L2", config.cognitive["distractor_mining"], "mcq4")
        )
    for fmt in _interleave({"pseudo_mcq10": n_pseudo, "mcq4": n_templates - n_pseudo}):
        slots.append(Slot(len(slots), "template", DETERMINISTIC, None, config.cognitive["template"], fmt))
    return Plan(tuple(slots), quota, cap, gen_counts, overflow)


def expected_calls(config: GenerationConfig) -> dict[str, float]:
    """Rough LLM calls per item of each model a round names: a generator its even share of the LLM strategies'
    slots (at most the cap), a gate model the difficulty shares of the tiers it answers. Audit-adapted shares are
    not known before the round; this only ranks providers by load (defs/generation picks its pool with it)."""
    out: dict[str, float] = dict.fromkeys(config.generators, 0.0)
    llm_share = sum(v for s, v in config.strategy_shares.items() if s != "template")
    for g in config.generators:
        out[g] += min(config.generator_cap, llm_share / len(config.generators))
    for tier, model in config.gate.models.items():
        out[model] = out.get(model, 0.0) + config.difficulty_shares.get(tier, 0.0)
    return out


def generation_is_automatic(spec: BenchmarkSpec) -> bool:
    """Whether automation may generate with no person deciding: the LLM calls it expects per item are within the
    spec's `automation.auto_llm_calls_per_item` (LLM-free generation always is)."""
    return sum(expected_calls(spec.generation).values()) <= spec.automation.auto_llm_calls_per_item
