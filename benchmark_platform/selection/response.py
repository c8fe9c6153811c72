"""Response-pattern term of the selection objective (issue 19): facility location over items' answer patterns.

R(S) = sum_v nu(v) max_{q in S} rho+(q, v), where v runs over the pool items some models answered, rho+ is the
positive part of the Pearson correlation of two items' correctness vectors over those models, and nu = w / |pool|,
with w = weight * max(1, (small_budget_items / k)^2): the fewer items a discipline selects, the more their answer
patterns count (selection/config.py says why and what was measured).
It is the tinyBenchmarks anchor-points idea (items stand for the items that models answer alike) as a submodular
term: a facility location with non-negative similarities is monotone submodular, so R added to F_d^sp as extra bank
columns keeps Proposition 1, lazy greedy, the MIP (the same z_qu variables), the upper bound and the certified ratio
without touching them. Items every model answers alike (all right, all wrong) correlate with nothing: they neither
cover nor are covered, as they carry no signal about which model is better.

Sparse: each pool item keeps its `neighbours` most similar candidates only (a sparse facility location is still one).
With no answers (or weight 0) the problem is returned as it is, the very same object, and the info says so.

The information term I(S) = information_weight / k^2 * sum_{q in S} I_q / max I: I_q is the Fisher information item q
holds about a model's ability under a 2PL fitted on the answering models (a_q^2 p (1 - p), averaged over their
abilities). A small subset ranks models by an ability estimated from few items, so informative items pay; a large one
needs representativeness more than precision (the estimate's variance falls as 1/information, its marginal gain as
1/information^2, while the coverage terms' per-item gains fall as 1/k), hence the 1/k^2. Modular and non-negative, it
is a facility location whose columns each only their own candidate covers: Proposition 1 and the certificate hold.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import numpy as np
import polars as pl
import scipy.sparse as sp

from benchmark_platform.analysis import correctness_matrix, fit_irt, holdout_validation
from benchmark_platform.embed import fixed_matmul, quantise, stable_smallest
from benchmark_platform.selection.config import ResponseTermConfig
from benchmark_platform.selection.problem import SelectionProblem, SelectionResult

NO_RESPONSE_DATA = "no response data: coverage-only selection"


@dataclass(frozen=True)
class ResponseMatrix:
    """Correctness of some models on a pool of items: 1.0 right, 0.0 wrong, NaN not answered."""

    item_ids: tuple[str, ...]
    models: tuple[str, ...]
    correct: np.ndarray  # (models, items)

    def __post_init__(self) -> None:
        if self.correct.shape != (len(self.models), len(self.item_ids)):
            raise ValueError(
                f"correct has shape {self.correct.shape}, expected ({len(self.models)}, {len(self.item_ids)})"
            )


@dataclass(frozen=True)
class ResponseTermInfo:
    """What the response term did, for the selection's metadata."""

    applied: bool
    reason: str
    weight: float = 0.0
    information_weight: float = 0.0
    models: int = 0
    pool_items: int = 0
    candidates_with_answers: int = 0

    def as_metadata(self) -> dict[str, str | int | float]:
        return {
            "response_term": "applied" if self.applied else "absent",
            "response_term_reason": self.reason,
            "response_weight": self.weight,
            "response_information_weight": self.information_weight,
            "response_models": self.models,
            "response_pool_items": self.pool_items,
            "response_candidates_with_answers": self.candidates_with_answers,
        }


def standardized_patterns(correct: np.ndarray) -> np.ndarray:
    """Columns of `correct` centred and scaled to unit norm (a missing answer counts as the item's mean, i.e. 0).

    Z[:, q] @ Z[:, v] is then the Pearson correlation of items q and v over the models; a constant column is all 0.
    """
    answered = ~np.isnan(correct)
    counts = answered.sum(axis=0)
    means = np.where(answered, correct, 0.0).sum(axis=0) / np.maximum(counts, 1)
    centred = np.where(answered, correct - means, 0.0)
    norms = np.linalg.norm(centred, axis=0)
    return centred / np.where(norms > 1e-12, norms, np.inf)


def pattern_similarity(patterns: np.ndarray, rows: np.ndarray, neighbours: int, *, block: int = 2048) -> sp.csr_matrix:
    """rho+(rows[i], v) for every pool item v, keeping each column's `neighbours` largest (equal ones by row order).

    `patterns` are standardized_patterns (models x pool items); `rows` index the candidates among the pool items.
    The correlations are summed model by model in that order (embed.exact.fixed_matmul, no BLAS): a BLAS product's
    last bits follow the kernel, and which candidate covers which item (the top `neighbours`, ties included by row
    order) must not.
    Computed a block of pool columns at a time, so memory stays at len(rows) x block.
    """
    n, m = len(rows), patterns.shape[1]
    keep = min(neighbours, n)
    candidates = patterns[:, rows]
    rows_kept, cols_kept, values_kept = [], [], []
    for start in range(0, m, block):
        sims = fixed_matmul(candidates, patterns[:, start : start + block])  # (n, block)
        top = stable_smallest((-sims).T, keep).T  # np.argsort(-sims, axis=0, kind="stable")[:keep]
        values = np.take_along_axis(sims, top, axis=0)
        positive = values > 1e-9
        rows_kept.append(top[positive])
        cols_kept.append((start + np.indices(top.shape)[1])[positive])
        values_kept.append(values[positive])
    matrix = sp.csr_matrix(
        (np.concatenate(values_kept), (np.concatenate(rows_kept), np.concatenate(cols_kept))), shape=(n, m)
    )
    matrix.data = np.minimum(matrix.data, 1.0)  # rounding can leave an item's self-correlation at 1 + 1e-16
    return matrix


def item_information(correct: np.ndarray) -> np.ndarray:
    """Fisher information of each item (columns of `correct`, models x items, NaN unanswered) about a model's ability:
    a_q^2 p (1 - p) under a 2PL fitted on these models (analysis.irt.fit_irt), averaged over their fitted abilities.
    Zeros with fewer than 2 models (no fit)."""
    if correct.shape[0] < 2 or correct.shape[1] == 0:
        return np.zeros(correct.shape[1])
    fit = fit_irt(correct)
    p = fit.probabilities(fit.abilities)
    # on the 1e-9 grid: the information enters the objective as a column that decides picks (issue 30)
    return quantise((fit.discrimination**2 * p * (1 - p)).mean(axis=0))


def response_weight(config: ResponseTermConfig, k: int) -> float:
    """The response term's weight for a discipline selecting k items: weight * max(1, (small_budget_items / k)^2)."""
    return config.weight * max(1.0, (config.small_budget_items / max(k, 1)) ** 2)


def add_response_term(
    problem: SelectionProblem, responses: ResponseMatrix | None, config: ResponseTermConfig
) -> tuple[SelectionProblem, ResponseTermInfo]:
    """F_d^sp + w * R (+ the information term): the problem with the response pool appended as bank columns of
    weight w / |pool| (w = response_weight(config, k)), and with information_weight > 0 one column per candidate that
    only it covers, I_q / max I, of weight information_weight / k^2.

    Candidates without answers get an empty row (they still count for F_d^sp). Returns `problem` itself, unchanged,
    when there are no answers, no answered candidate or weight 0, with the reason in the info.
    """
    weight, information_weight = response_weight(config, problem.k), config.information_weight  # both >= 0
    if weight == 0:
        return problem, ResponseTermInfo(False, "response weight is 0")
    if responses is None or not responses.models or not responses.item_ids:
        return problem, ResponseTermInfo(False, "no answers for this pool: selection by F_d^sp alone")
    column = {item: j for j, item in enumerate(responses.item_ids)}
    answered = [(i, column[c]) for i, c in enumerate(problem.candidate_ids) if c in column]
    if not answered:
        return problem, ResponseTermInfo(False, "no candidate has answers: selection by F_d^sp alone")
    rows, pool_rows = (np.array(v, dtype=np.int64) for v in zip(*answered, strict=True))
    similarity = pattern_similarity(standardized_patterns(responses.correct), pool_rows, config.neighbours).tocoo()
    m = len(responses.item_ids)
    extra = sp.csr_matrix((similarity.data, (rows[similarity.row], similarity.col)), shape=(problem.n, m))
    columns, column_weights = [problem.coverage, extra], [problem.weights, np.full(m, weight / m)]
    reason = f"answers available: F_d^sp + {weight:.3g} * facility location over answer patterns"
    if information_weight > 0:
        information = np.zeros(problem.n)
        information[rows] = item_information(responses.correct)[pool_rows]
        if information.max() > 0:
            scaled = information / information.max()
            columns.append(
                sp.csr_matrix((scaled, (np.arange(problem.n), np.arange(problem.n))), shape=(problem.n,) * 2)
            )
            column_weights.append(np.full(problem.n, information_weight / max(problem.k, 1) ** 2))
            reason += " + information_weight / k^2 * the items' Fisher information about ability"
    augmented = replace(
        problem,
        coverage=sp.hstack(columns, format="csr"),
        weights=np.concatenate(column_weights),
    )
    info = ResponseTermInfo(
        True,
        reason,
        weight=weight,
        information_weight=information_weight if len(columns) > 2 else 0.0,
        models=len(responses.models),
        pool_items=m,
        candidates_with_answers=len(rows),
    )
    return augmented, info


def visible_selection(
    problem: SelectionProblem,
    responses: ResponseMatrix,
    config: ResponseTermConfig,
    solve: Callable[[SelectionProblem], SelectionResult],
) -> Callable[[np.ndarray], np.ndarray]:
    """The selection as a function of which models it may see, for held-out validation (analysis.fidelity).

    The returned function takes row indices of `responses.correct` (the visible models), reruns `solve` on F_d^sp +
    weight * R over those models' answers only, and returns the chosen items as column indices of `responses`
    (chosen candidates without answers are left out: they cannot be scored on held-out models).
    """
    column = {item: j for j, item in enumerate(responses.item_ids)}

    def select_seeing(visible: np.ndarray) -> np.ndarray:
        seen = ResponseMatrix(
            responses.item_ids, tuple(responses.models[i] for i in visible), responses.correct[visible]
        )
        combined, _ = add_response_term(problem, seen, config)
        result = solve(combined)
        return np.array([column[i] for i in result.selected_ids if i in column], dtype=np.int64)

    return select_seeing


def responses_from_results(results: pl.DataFrame, item_ids: Sequence[str]) -> ResponseMatrix | None:
    """The correctness matrix of a results frame (model, item_id, sample, correct) on `item_ids` (analysis.irt's
    correctness_matrix: avg@k per item, NaN unanswered, models sorted); None when no model answered any of them."""
    models, correct = correctness_matrix(results, item_ids)
    return ResponseMatrix(tuple(item_ids), models, correct) if models else None


def select_with_responses(
    problem: SelectionProblem,
    responses: ResponseMatrix | None,
    config: ResponseTermConfig,
    solve: Callable[[SelectionProblem], SelectionResult],
    seed: int,
) -> tuple[SelectionResult, dict[str, str | int | float]]:
    """The selection of F_d^sp + weight * R, and what the term did with its held-out validation (for the metadata).

    With answers: `config.validation_splits` random model splits, each rerunning the selection on the visible models'
    answers and judging it on the others against stratified random subsets of the same per-stratum sizes
    (analysis.fidelity.holdout_validation, the IRT estimator fitted on the visible models), seeded by `seed` so the
    figures are the same run to run. Only candidates with answers enter the validation: the rest cannot be scored.
    Without answers the selection is `solve(problem)` itself and the summary says so.
    """
    combined, info = add_response_term(problem, responses, config)
    result = solve(combined)
    summary = info.as_metadata()
    if responses is None or not info.applied:
        return result, {**summary, "holdout_validation": NO_RESPONSE_DATA}
    column = {item: j for j, item in enumerate(responses.item_ids)}
    rows = [i for i, c in enumerate(problem.candidate_ids) if c in column]
    pool = ResponseMatrix(
        tuple(problem.candidate_ids[i] for i in rows),
        responses.models,
        responses.correct[:, [column[problem.candidate_ids[i]] for i in rows]],
    )
    labels = np.unique(problem.strata[rows], return_inverse=True)[1].astype(np.int64)
    select_subset = visible_selection(problem, pool, config, solve)
    figures = holdout_validation(
        pool.correct,
        labels,
        select_subset,
        splits=config.validation_splits,
        visible_share=config.validation_visible_share,
        random_subsets=config.validation_random_subsets,
        seed=seed,
    )
    return result, {**summary, **figures}
