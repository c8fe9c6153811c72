"""Property tests of KINA's pseudo-MCQ validator and of the deterministic builder (KINA 4, E.2.3, E.3.4)."""

from __future__ import annotations

from itertools import combinations
from math import comb

import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from benchmark_platform.generation.config import PseudoMcqConfig
from benchmark_platform.generation.model import OptionExplanation
from benchmark_platform.generation.pseudo_mcq import PseudoMcq, Statement, assemble, explain, validate

CONFIG = PseudoMcqConfig()


def statements(n: int, true: set[int]) -> tuple[Statement, ...]:
    return tuple(
        Statement(f"statement number {i}", i in true, (f"fact{i}",), "" if i in true else "no") for i in range(n)
    )


@hs.composite
def stems(draw):
    n = draw(hs.integers(6, 9))
    k = draw(hs.integers(2, n - 2))
    true = set(draw(hs.permutations(range(n)))[:k])
    return statements(n, true), draw(hs.integers(0, 2**32)), draw(hs.integers(0, 9))


@settings(max_examples=150, deadline=None)
@given(stems())
def test_the_builder_always_yields_a_valid_item(stem):
    stmts, seed, position = stem
    k = sum(s.true for s in stmts)
    if comb(len(stmts), k) < 10:
        return
    config = PseudoMcqConfig(statements=len(stmts), true_statements=k, max_size_spread=0)
    item = assemble(stmts, config, seed, "key", position)
    assert item is not None and validate(item, config) == []
    assert item.answer_index == min(position, 9) and len(set(item.options)) == 10


@hs.composite
def families(draw):
    """Arbitrary 10-option families over 6-8 statements, with a truth assignment and an answer."""
    n = draw(hs.integers(6, 8))
    options = draw(hs.lists(hs.frozensets(hs.integers(0, n - 1), min_size=1, max_size=n), min_size=10, max_size=10))
    true = draw(hs.sampled_from(options))
    answer = draw(hs.integers(0, 9))
    stmts = statements(n, set(true))
    return PseudoMcq(stmts, tuple(options), answer, tuple(explain(stmts, o) for o in options))


@pytest.mark.slow  # over 3 s with its setup: the full suite only
@settings(max_examples=400, deadline=None)
@given(families())
def test_whatever_passes_has_no_subsets_balanced_sizes_and_one_correct_option(item):
    if validate(item, CONFIG):
        return
    assert len(set(item.options)) == 10 and len(item.statements) >= 6
    assert not any(a < b for a in item.options for b in item.options)
    sizes = [len(o) for o in item.options]
    assert max(sizes) - min(sizes) <= CONFIG.max_size_spread
    truth = frozenset(i for i, s in enumerate(item.statements) if s.true)
    assert [o == truth for o in item.options].count(True) == 1 and item.options[item.answer_index] == truth


@settings(max_examples=100, deadline=None)
@given(stems(), hs.integers(0, 9), hs.integers(0, 9))
def test_each_defect_is_rejected_with_its_reason(stem, victim, other):
    stmts, seed, position = stem
    k = sum(s.true for s in stmts)
    if comb(len(stmts), k) < 10:
        return
    config = PseudoMcqConfig(statements=len(stmts), true_statements=k)
    good = assemble(stmts, config, seed, "key", position)
    if good is None:
        return
    opts = list(good.options)
    # a proper subset of another option
    subset = list(opts)
    j = victim if victim != good.answer_index else (victim + 1) % 10
    subset[j] = frozenset(sorted(opts[(j + 1) % 10])[:-1])
    reasons = validate(PseudoMcq(stmts, tuple(subset), good.answer_index, good.explanations), config)
    assert any("proper subset" in r for r in reasons), reasons
    # a duplicate option
    dup = list(opts)
    if victim != other:
        dup[victim] = dup[other]
        assert any(
            "not distinct" in r
            for r in validate(PseudoMcq(stmts, tuple(dup), good.answer_index, good.explanations), config)
        )
    # the answer pointing elsewhere
    wrong = (good.answer_index + 1 + victim % 9) % 10
    assert any("is correct" in r for r in validate(PseudoMcq(stmts, good.options, wrong, good.explanations), config))
    # too few statements, too few options, a missing explanation
    assert any(
        "statements in the stem" in r
        for r in validate(PseudoMcq(stmts[:5], good.options, good.answer_index, good.explanations), config)
    )
    assert any(
        "exactly 10 required" in r
        for r in validate(PseudoMcq(stmts, good.options[:9], min(good.answer_index, 8), good.explanations[:9]), config)
    )
    blank = list(good.explanations)
    blank[victim] = OptionExplanation("", ())
    assert any(
        "lacks an explanation" in r
        for r in validate(PseudoMcq(stmts, good.options, good.answer_index, tuple(blank)), config)
    )


def test_unbalanced_sizes_are_rejected():
    stmts = statements(8, {0, 1, 2})
    options = (
        [frozenset({0, 1, 2})]
        + [frozenset(c) for c in combinations(range(3, 8), 1)]
        + [
            frozenset({0, 3, 4, 5, 6, 7}),
            frozenset({1, 3, 4, 5, 6, 7}),
            frozenset({2, 3, 4, 5, 6, 7}),
            frozenset({0, 1, 3, 4, 5, 6}),
        ]
    )
    item = PseudoMcq(stmts, tuple(options), 0, tuple(explain(stmts, o) for o in options))
    assert any("unbalanced option sizes" in r for r in validate(item, CONFIG))
