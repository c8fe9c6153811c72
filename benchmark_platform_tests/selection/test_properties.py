"""Proposition 1 and the greedy guarantees, checked by hypothesis on small random instances."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.mip import select_mip
from benchmark_platform.selection.problem import InfeasibleSelectionError, SelectionProblem


@st.composite
def problems(draw: st.DrawFn, *, quotas: bool, conflicts: bool) -> SelectionProblem:
    n = draw(st.integers(3, 8))
    m = draw(st.integers(1, 6))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    dense = rng.random((n, m)) * (rng.random((n, m)) < draw(st.floats(0.2, 1.0)))
    weights = rng.random(m)
    k = draw(st.integers(1, n - 1))
    h = draw(st.integers(1, 3)) if quotas else 1
    strata = rng.integers(0, h, n)
    counts = np.bincount(strata, minlength=h)
    lower = np.array([draw(st.integers(0, int(c))) for c in counts]) if quotas else np.zeros(h, int)
    upper = (
        np.array([draw(st.integers(int(lo), max(int(lo), int(c)))) for lo, c in zip(lower, counts, strict=True)])
        if quotas
        else np.array([n])
    )
    pairs = np.array([p for p in itertools.combinations(range(n), 2) if rng.random() < 0.15], dtype=np.int64)
    return _problem(
        strata,
        h,
        lower,
        upper,
        weights,
        dense,
        k,
        pairs.reshape(-1, 2) if conflicts else np.zeros((0, 2), dtype=np.int64),
    )


def _problem(
    strata: np.ndarray,
    h: int,
    lower: np.ndarray,
    upper: np.ndarray,
    weights: np.ndarray,
    dense: np.ndarray,
    k: int,
    conflicts: np.ndarray,
) -> SelectionProblem:
    return SelectionProblem(
        candidate_ids=tuple(f"c{i}" for i in range(len(strata))),
        strata=strata,
        stratum_names=tuple(f"h{i}" for i in range(h)),
        lower=lower,
        upper=upper,
        weights=weights,
        coverage=sp.csr_matrix(dense),
        k=k,
        conflicts=conflicts,
    )


def brute_force(problem: SelectionProblem) -> float | None:
    """The constrained optimum by enumeration, None when no feasible set exists."""
    best = None
    for subset in itertools.combinations(range(problem.n), problem.k):
        chosen = np.array(subset)
        if not problem.violations(chosen):
            value = problem.value(chosen)
            best = value if best is None else max(best, value)
    return best


@settings(max_examples=60, deadline=None)
@given(problems(quotas=False, conflicts=False), st.data())
def test_objective_is_monotone_and_submodular(problem: SelectionProblem, data: st.DataObject) -> None:
    items = list(range(problem.n))
    b = data.draw(st.lists(st.sampled_from(items), unique=True, max_size=problem.n - 1))
    a = data.draw(st.lists(st.sampled_from(b), unique=True)) if b else []
    x = data.draw(st.sampled_from([i for i in items if i not in b]))
    f = problem.value
    assert f(np.array(a)) <= f(np.array(b)) + 1e-12
    assert f(np.array(a + [x])) - f(np.array(a)) >= f(np.array(b + [x])) - f(np.array(b)) - 1e-12


@settings(max_examples=60, deadline=None)
@given(problems(quotas=False, conflicts=False))
def test_greedy_reaches_one_minus_one_over_e_and_bounds_the_optimum(problem: SelectionProblem) -> None:
    opt = brute_force(problem)
    assert opt is not None
    for lazy in (True, False):
        result = select_greedy(problem, lazy=lazy)
        assert result.objective >= (1 - 1 / math.e) * opt - 1e-12
        assert result.upper_bound >= opt - 1e-9
        assert result.certified_ratio <= (result.objective / opt if opt > 0 else 1.0) + 1e-9
    assert select_greedy(problem, lazy=True).objective == pytest.approx(select_greedy(problem, lazy=False).objective)


@settings(max_examples=80, deadline=None)
@given(problems(quotas=True, conflicts=False))
def test_quotas_alone_are_always_met_when_feasible(problem: SelectionProblem) -> None:
    opt = brute_force(problem)
    if opt is None:
        with pytest.raises(InfeasibleSelectionError):
            select_greedy(problem)
        return
    result = select_greedy(problem)
    assert problem.violations(np.array(result.selected)) == []
    assert result.upper_bound >= opt - 1e-9


@settings(max_examples=80, deadline=None)
@given(problems(quotas=True, conflicts=True))
def test_quotas_and_duplicate_bound_hold_in_every_returned_selection(problem: SelectionProblem) -> None:
    opt = brute_force(problem)
    for lazy in (True, False):
        try:
            result = select_greedy(problem, lazy=lazy)
        except InfeasibleSelectionError:
            continue
        assert problem.violations(np.array(result.selected)) == []
        assert opt is not None and result.objective <= opt + 1e-9 <= result.upper_bound + 2e-9


@settings(max_examples=25, deadline=None)
@given(problems(quotas=True, conflicts=True))
def test_mip_finds_the_constrained_optimum(problem: SelectionProblem) -> None:
    opt = brute_force(problem)
    if opt is None:
        with pytest.raises(InfeasibleSelectionError):
            select_mip(problem)
        return
    result = select_mip(problem)
    assert problem.violations(np.array(result.selected)) == []
    assert result.objective == pytest.approx(opt, abs=1e-7)


def test_infeasible_quota_names_the_stratum() -> None:
    problem = SelectionProblem(
        candidate_ids=("a", "b", "c"),
        strata=np.array([0, 0, 1]),
        stratum_names=("grapes", "regions"),
        lower=np.array([0, 2]),
        upper=np.array([3, 3]),
        weights=np.ones(2),
        coverage=sp.csr_matrix(np.eye(3, 2)),
        k=2,
    )
    with pytest.raises(InfeasibleSelectionError, match="regions") as err:
        select_greedy(problem)
    assert err.value.stratum == "regions"


def test_repair_swaps_a_blocking_item_out_for_a_short_stratum() -> None:
    # Candidate 0 covers most but duplicates 2, the only member of stratum "b" (L_b = 1); greedy takes 0 first.
    problem = SelectionProblem(
        candidate_ids=("big", "mid", "only_b"),
        strata=np.array([0, 0, 1]),
        stratum_names=("a", "b"),
        lower=np.array([0, 1]),
        upper=np.array([2, 1]),
        weights=np.array([1.0, 1.0, 1.0]),
        coverage=sp.csr_matrix(np.array([[1.0, 1.0, 0.0], [0.0, 0.5, 0.2], [0.0, 0.0, 0.3]])),
        k=2,
        conflicts=np.array([[0, 2]]),
    )
    for lazy in (True, False):
        result = select_greedy(problem, lazy=lazy)
        assert sorted(result.selected_ids) == ["mid", "only_b"]
        assert result.repairs == 1


def test_select_falls_back_to_the_mip_when_greedy_blocks_itself():
    from benchmark_platform.selection.config import SelectionConfig
    from benchmark_platform.selection.policy import select

    # Greedy takes the strongest item 2 first, which duplicates both others: only the MIP finds {0, 1}.
    problem = SelectionProblem(
        candidate_ids=("a", "b", "hub"),
        strata=np.zeros(3, dtype=np.int64),
        stratum_names=("all",),
        lower=np.array([0]),
        upper=np.array([3]),
        weights=np.ones(3),
        coverage=sp.csr_matrix(np.array([[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.6, 0.6, 0.6]])),
        k=2,
        conflicts=np.array([[0, 2], [1, 2]]),
    )
    with pytest.raises(InfeasibleSelectionError):
        select_greedy(problem)
    result = select(problem, SelectionConfig())
    assert result.method == "mip" and sorted(result.selected_ids) == ["a", "b"] and result.certified_ratio == 1.0
    with pytest.raises(InfeasibleSelectionError):
        select(problem, SelectionConfig(mip_max_candidates=0))


@st.composite
def tied_problems(draw: st.DrawFn) -> SelectionProblem:
    """Larger instances whose scores take a few values only, so equal gains (ties) are common."""
    n = draw(st.integers(5, 60))
    m = draw(st.integers(1, 30))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    dense = rng.integers(0, 3, (n, m)) / 2 * (rng.random((n, m)) < draw(st.floats(0.1, 0.8)))
    h = draw(st.integers(1, 4))
    strata = rng.integers(0, h, n)
    counts = np.bincount(strata, minlength=h)
    k = draw(st.integers(1, n - 1))
    lower = np.array([min(int(c), int(rng.integers(0, 3))) for c in counts])
    upper = np.array([max(int(lo), int(c) - int(rng.integers(0, 3))) for lo, c in zip(lower, counts, strict=True)])
    pairs = rng.integers(0, n, (draw(st.integers(0, n)), 2))
    return _problem(
        strata, h, lower, upper, rng.integers(1, 3, m).astype(float), dense, k, pairs[pairs[:, 0] != pairs[:, 1]]
    )


def _outcome(problem: SelectionProblem, **kwargs):
    try:
        result = select_greedy(problem, **kwargs)
    except InfeasibleSelectionError as e:
        return ("infeasible", str(e))
    return (result.selected, result.gains, result.objective, result.repairs)


@settings(max_examples=150, deadline=None)
@given(tied_problems(), st.sampled_from([1, 2, 5, 2048]), st.sampled_from([1, 3, 32]))
def test_lazy_greedy_picks_what_plain_greedy_picks(problem: SelectionProblem, pool_size: int, batch_size: int) -> None:
    # same items in the same order (ties to the lowest index), same gains, same repairs; small pools force the
    # lazy greedy back to the whole bound array often
    plain = _outcome(problem, lazy=False)
    assert _outcome(problem, lazy=True, pool_size=pool_size, batch_size=batch_size) == plain


@pytest.mark.parametrize("uniform", [False, True])
def test_lazy_and_plain_greedy_agree_on_kina_shaped_instances(uniform: bool) -> None:
    from benchmark_platform.bench.selection import synthetic_problem

    problem = synthetic_problem(3000, k=150, seed=11, uniform=uniform)
    plain = select_greedy(problem, lazy=False)
    for pool_size in (64, 2048):
        lazy = select_greedy(problem, lazy=True, pool_size=pool_size)
        assert (lazy.selected, lazy.gains, lazy.objective) == (plain.selected, plain.gains, plain.objective)
        assert lazy.gain_evaluations < plain.gain_evaluations / 5
        assert plain.objective <= plain.upper_bound and lazy.objective <= lazy.upper_bound
