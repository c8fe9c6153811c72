"""The response-pattern term (selection/response.py): monotone, submodular, greedy within (1 - 1/e) of the optimum,
and with no answers the selection is today's, bit for bit."""

from __future__ import annotations

import itertools
import math

import numpy as np
import polars as pl
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmark_platform.selection.config import ResponseTermConfig, SelectionConfig
from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.policy import select
from benchmark_platform.selection.problem import SelectionProblem
from benchmark_platform.selection.response import (
    NO_RESPONSE_DATA,
    ResponseMatrix,
    add_response_term,
    item_information,
    pattern_similarity,
    response_weight,
    responses_from_results,
    select_with_responses,
    standardized_patterns,
)


def _instance(seed: int, n: int, m_bank: int, models: int, k: int) -> tuple[SelectionProblem, ResponseMatrix]:
    rng = np.random.default_rng(seed)
    dense = rng.random((n, m_bank)) * (rng.random((n, m_bank)) < 0.5)
    problem = SelectionProblem(
        candidate_ids=tuple(f"c{i}" for i in range(n)),
        strata=np.zeros(n, dtype=np.int64),
        stratum_names=("all",),
        lower=np.array([0]),
        upper=np.array([n]),
        weights=rng.random(m_bank),
        coverage=sp.csr_matrix(dense),
        k=k,
    )
    pool = n + 3  # the answered pool holds every candidate and a few items that are not candidates
    ability = rng.normal(size=(models, 1))
    difficulty = rng.normal(size=(1, pool))
    correct = (rng.random((models, pool)) < 1 / (1 + np.exp(-(ability - difficulty)))).astype(float)
    correct[rng.random(correct.shape) < 0.05] = np.nan
    ids = tuple(f"c{i}" for i in range(n)) + tuple(f"extra{i}" for i in range(3))
    order = rng.permutation(pool)  # the pool's order need not follow the candidates'
    answers = ResponseMatrix(tuple(ids[j] for j in order), tuple(f"m{j}" for j in range(models)), correct[:, order])
    return problem, answers


@st.composite
def instances(draw: st.DrawFn) -> tuple[SelectionProblem, ResponseMatrix, float, int, float]:
    n = draw(st.integers(3, 8))
    problem, answers = _instance(
        draw(st.integers(0, 2**32 - 1)),
        n,
        draw(st.integers(1, 5)),
        draw(st.integers(3, 10)),
        draw(st.integers(1, n - 1)),
    )
    information_weight = draw(st.sampled_from([0.0]) | st.floats(0.1, 10.0))
    return problem, answers, draw(st.floats(0.1, 5.0)), draw(st.integers(1, n)), information_weight


@settings(max_examples=60, deadline=None)
@given(instances(), st.data())
def test_response_term_and_combined_objective_are_monotone_and_submodular(instance, data: st.DataObject) -> None:
    problem, answers, weight, neighbours, information_weight = instance
    combined, info = add_response_term(
        problem,
        answers,
        ResponseTermConfig(weight=weight, neighbours=neighbours, information_weight=information_weight),
    )
    assert info.applied and info.candidates_with_answers == problem.n
    base_columns = problem.coverage.shape[1]
    # the information term, when on, is one column per candidate: R's columns come first
    assert combined.coverage.shape[1] == base_columns + len(answers.item_ids) + (problem.n if information_weight else 0)
    response_only = SelectionProblem(
        candidate_ids=combined.candidate_ids,
        strata=combined.strata,
        stratum_names=combined.stratum_names,
        lower=combined.lower,
        upper=combined.upper,
        weights=combined.weights[base_columns:],
        coverage=combined.coverage[:, base_columns:],
        k=combined.k,
    )
    # a candidate whose answers vary covers at least itself; candidates every model answers alike cover nothing
    candidate_columns = [answers.item_ids.index(c) for c in problem.candidate_ids]
    r_only = response_only.coverage[:, : len(answers.item_ids)].max(axis=0).toarray().ravel()
    assert (r_only.max() > 0) == bool(np.nanstd(answers.correct[:, candidate_columns], axis=0).any())
    members = data.draw(st.lists(st.integers(0, problem.n - 1), unique=True, max_size=problem.n - 1))
    cut = data.draw(st.integers(0, len(members)))
    small, large = np.array(members[:cut], dtype=np.int64), np.array(members, dtype=np.int64)
    outside = [q for q in range(problem.n) if q not in members]
    q = data.draw(st.sampled_from(outside))
    for f in (response_only, combined):
        assert f.value(large) >= f.value(small) - 1e-12  # monotone
        gain_small = f.value(np.append(small, q)) - f.value(small)
        gain_large = f.value(np.append(large, q)) - f.value(large)
        assert gain_small >= gain_large - 1e-12  # diminishing returns


@settings(max_examples=60, deadline=None)
@given(instances())
def test_greedy_on_the_combined_objective_reaches_one_minus_one_over_e(instance) -> None:
    problem, answers, weight, neighbours, information_weight = instance
    combined, _ = add_response_term(
        problem,
        answers,
        ResponseTermConfig(weight=weight, neighbours=neighbours, information_weight=information_weight),
    )
    optimum = max(combined.value(np.array(s)) for s in itertools.combinations(range(combined.n), combined.k))
    for lazy in (True, False):
        result = select_greedy(combined, lazy=lazy)
        assert result.objective >= (1 - 1 / math.e) * optimum - 1e-9
        assert result.upper_bound >= optimum - 1e-9  # the certificate still bounds the optimum
        assert result.certified_ratio <= result.objective / optimum + 1e-9


def test_similarity_is_the_positive_part_of_the_correlation_and_constant_items_cover_nothing() -> None:
    rng = np.random.default_rng(7)
    correct = (rng.random((9, 12)) < 0.5).astype(float)
    correct[:, 3] = 1.0  # every model right: no signal
    rows = np.array([0, 3, 5, 11])
    similarity = pattern_similarity(standardized_patterns(correct), rows, neighbours=4).toarray()
    with np.errstate(invalid="ignore", divide="ignore"):
        expected = np.nan_to_num(np.corrcoef(correct.T))[rows]
    np.testing.assert_allclose(similarity, np.clip(expected, 0, 1), atol=1e-12)
    assert not similarity[1].any() and not similarity[:, 3].any()
    kept = pattern_similarity(standardized_patterns(correct), rows, neighbours=2).toarray()
    assert ((kept > 0).sum(axis=0) <= 2).all()
    assert np.all((kept == 0) | np.isclose(kept, similarity))


def test_item_information_favours_items_of_middling_difficulty() -> None:
    rng = np.random.default_rng(4)
    ability = rng.normal(size=(40, 1))
    intercept = np.repeat([0.0, 5.0, -5.0], 100)  # middling, very easy, very hard items
    correct = (rng.random((40, 300)) < 1 / (1 + np.exp(-(1.5 * ability + intercept)))).astype(float)
    information = item_information(correct)
    middling, easy, hard = (information[i : i + 100].mean() for i in (0, 100, 200))
    assert middling > 3 * max(easy, hard) and (information > 0).all()
    assert (item_information(correct[:1]) == 0).all()  # one model: no fit, no information


def test_the_information_term_is_modular_and_weighted_by_one_over_k_squared() -> None:
    problem, answers = _instance(9, 12, 10, 20, 4)
    combined, info = add_response_term(problem, answers, ResponseTermConfig(weight=1.0, information_weight=8.0))
    assert info.applied and info.information_weight == 8.0 and "information" in info.reason
    start = problem.coverage.shape[1] + len(answers.item_ids)
    columns = combined.coverage[:, start:].toarray()
    assert columns.shape == (problem.n, problem.n) and not (columns - np.diag(np.diag(columns))).any()
    assert np.isclose(columns.max(), 1.0) and (columns >= 0).all()
    np.testing.assert_allclose(combined.weights[start:], 8.0 / problem.k**2)
    term = SelectionProblem(
        candidate_ids=combined.candidate_ids,
        strata=combined.strata,
        stratum_names=combined.stratum_names,
        lower=combined.lower,
        upper=combined.upper,
        weights=combined.weights[start:],
        coverage=combined.coverage[:, start:],
        k=combined.k,
    )
    chosen = np.array([0, 3, 7])
    assert np.isclose(term.value(chosen), sum(term.value(np.array([q])) for q in chosen))  # modular
    off, info = add_response_term(problem, answers, ResponseTermConfig(weight=1.0))
    assert off.coverage.shape[1] == start and info.information_weight == 0.0


def test_with_no_answers_the_selection_is_unchanged_bit_for_bit() -> None:
    problem, answers = _instance(3, 40, 30, 8, 6)
    params = SelectionConfig()
    before = select(problem, params)
    for empty in (
        None,
        ResponseMatrix((), (), np.zeros((0, 0))),
        ResponseMatrix(("elsewhere",), ("m",), np.ones((1, 1))),
    ):
        same, info = add_response_term(problem, empty, ResponseTermConfig(weight=1.0, information_weight=7.0))
        assert same is problem and not info.applied
        assert info.as_metadata()["response_term"] == "absent"
        assert select(same, params).model_dump_json() == before.model_dump_json()
    off, info = add_response_term(problem, answers, ResponseTermConfig(weight=0.0))
    assert off is problem and not info.applied and "0" in info.reason
    on, info = add_response_term(problem, answers, ResponseTermConfig(weight=1.0))
    assert info.applied and on.coverage.shape[1] == problem.coverage.shape[1] + len(answers.item_ids)
    assert select(on, params).objective > before.objective  # the term adds value on top of F_d^sp


def test_visible_selection_feeds_the_holdout_validation() -> None:
    from benchmark_platform.analysis.fidelity import holdout_validation
    from benchmark_platform.selection.response import visible_selection

    problem, answers = _instance(11, 30, 20, 12, 8)
    select_seeing = visible_selection(problem, answers, ResponseTermConfig(weight=1.0, neighbours=10), select_greedy)
    chosen = select_seeing(np.arange(6))
    assert len(chosen) == problem.k and set(answers.item_ids[j] for j in chosen) <= set(problem.candidate_ids)
    report = holdout_validation(
        answers.correct,
        np.zeros(len(answers.item_ids), dtype=np.int64),
        select_seeing,
        splits=2,
        visible_share=0.5,
        random_subsets=10,
        seed=3,
    )
    assert report["holdout_splits"] == 2 and -1 <= report["holdout_tau"] <= 1


def test_results_become_a_correctness_matrix_in_candidate_order() -> None:
    results = pl.DataFrame(
        {
            "model": ["b", "b", "a", "a", "a", "b"],
            "item_id": ["q2", "q1", "q1", "q1", "q3", "elsewhere"],
            "sample": [0, 0, 0, 1, 0, 0],
            "correct": [True, False, True, False, True, True],
        }
    )
    matrix = responses_from_results(results, ("q1", "q2", "q3"))
    assert matrix is not None and matrix.models == ("a", "b") and matrix.item_ids == ("q1", "q2", "q3")
    np.testing.assert_array_equal(matrix.correct, [[0.5, np.nan, 1.0], [0.0, 1.0, np.nan]])  # avg@k, NaN unanswered
    assert responses_from_results(results, ("nowhere",)) is None


@pytest.mark.slow  # selects MMLU-Pro categories with held-out validation
def test_select_with_responses_records_the_held_out_figures_and_without_answers_is_todays_selection() -> None:
    problem, answers = _instance(5, 40, 30, 12, 6)
    params = SelectionConfig()
    config = ResponseTermConfig(weight=1.0, validation_splits=3, validation_random_subsets=10)
    before = select(problem, params)
    for empty in (None, ResponseMatrix(("elsewhere",), ("m",), np.ones((1, 1)))):
        same, summary = select_with_responses(problem, empty, config, lambda p: select(p, params), seed=1)
        assert same.model_dump_json() == before.model_dump_json()  # bit for bit
        assert summary["response_term"] == "absent" and summary["holdout_validation"] == NO_RESPONSE_DATA
    result, summary = select_with_responses(problem, answers, config, lambda p: select(p, params), seed=1)
    again, repeated = select_with_responses(problem, answers, config, lambda p: select(p, params), seed=1)
    assert summary == repeated and result.selected_ids == again.selected_ids  # seeded: the same figures every run
    assert summary["response_term"] == "applied" and summary["holdout_splits"] == 3
    assert summary["holdout_models"] == 12 and summary["holdout_visible_models"] == 6
    assert summary["holdout_random_subsets"] == 10 and "3 random model splits" in str(summary["holdout_validation"])
    for figure in ("holdout_tau", "random_tau", "holdout_acc_mae_points", "random_acc_mae_points"):
        assert isinstance(summary[figure], float)


def test_the_response_weight_grows_as_one_over_k_squared_below_the_small_budget() -> None:
    config = ResponseTermConfig(weight=2.0, small_budget_items=24.0)
    assert response_weight(config, 24) == response_weight(config, 899) == 2.0  # large budgets: the plain weight
    assert np.isclose(response_weight(config, 12), 8.0) and np.isclose(response_weight(config, 6), 32.0)
    assert response_weight(ResponseTermConfig(weight=2.0, small_budget_items=0.0), 4) == 2.0
    problem, answers = _instance(3, 12, 10, 20, 4)  # k = 4: w = 2 * (24 / 4)^2 = 72
    combined, info = add_response_term(problem, answers, config)
    assert info.weight == 72.0 and "72" in info.reason
    np.testing.assert_allclose(combined.weights[problem.coverage.shape[1] :], 72.0 / len(answers.item_ids))
