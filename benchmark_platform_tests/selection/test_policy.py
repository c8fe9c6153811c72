"""The selection policy on its own: K capped by what the shortlist allows, and the MIP limits any settings give."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import pytest
import scipy.sparse as sp

from benchmark_platform.selection.policy import capped_to_attainable, select, within_cap
from benchmark_platform.selection.problem import InfeasibleSelectionError, SelectionProblem


def _problem(k: int, conflicts: list[tuple[int, int]]) -> SelectionProblem:
    return SelectionProblem(
        candidate_ids=("a", "b", "c", "d"),
        strata=np.array([0, 0, 1, 1]),
        stratum_names=("x", "y"),
        lower=np.array([1, 0]),
        upper=np.array([2, 1]),
        weights=np.ones(4),
        coverage=sp.csr_matrix(np.eye(4)),
        k=k,
        conflicts=np.array(conflicts, dtype=np.int64).reshape(-1, 2),
    )


@dataclass(frozen=True)
class Limits:
    mip_max_candidates: int = 300
    mip_time_limit_s: float = 5.0


def test_k_is_capped_by_the_upper_quotas_and_the_duplicate_bound():
    # stratum y allows one item; a and b duplicate each other: at most one of x and one of y
    problem = capped_to_attainable(_problem(k=4, conflicts=[(0, 1)]), k_total=4)
    assert problem.k == 2
    result = select(problem, Limits())
    assert len(result.selected_ids) == 2 and result.certified_ratio == pytest.approx(1.0)
    assert capped_to_attainable(_problem(k=4, conflicts=[]), k_total=1).k == 1  # never above K_d


def test_without_the_cap_greedy_names_what_cannot_be_filled():
    with pytest.raises(InfeasibleSelectionError):
        select(_problem(k=4, conflicts=[(0, 1)]), Limits(mip_max_candidates=0))


def test_k_a_greedy_cannot_reach_is_capped_at_what_it_reached_and_said():
    # a covers what b and c cover, and duplicates both: the cap's fewest-conflicts order (d, b, c) allows 3, the
    # selection's gain order takes a first, then only d is admissible: its set is maximal at 2
    problem = SelectionProblem(
        candidate_ids=("a", "b", "c", "d"),
        strata=np.zeros(4, dtype=np.int64),
        stratum_names=("x",),
        lower=np.array([0]),
        upper=np.array([4]),
        weights=np.ones(4),
        coverage=sp.csr_matrix(np.array([[1, 1, 1, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]], dtype=float)),
        k=4,
        conflicts=np.array([(0, 1), (0, 2)], dtype=np.int64),
    )
    capped = capped_to_attainable(problem, k_total=4)
    assert capped.k == 3
    with pytest.raises(InfeasibleSelectionError) as short:
        select(capped, Limits(mip_max_candidates=0))
    assert short.value.reached == 2 and short.value.stratum == ""
    said: list[int] = []
    result, final = within_cap(capped, lambda p: select(p, Limits(mip_max_candidates=0)), said.append)
    assert said == [2] and final.k == 2 and sorted(result.selected_ids) == ["a", "d"]
    # a stratum's lower quota that cannot be met is still an error, with its name
    short_x = dataclasses.replace(capped, lower=np.array([3]))
    with pytest.raises(InfeasibleSelectionError):
        within_cap(short_x, lambda p: select(p, Limits(mip_max_candidates=0)), said.append)
