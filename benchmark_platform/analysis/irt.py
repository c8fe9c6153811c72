"""A new model's full-pool accuracy from its answers on a subset, by item response theory (issue 19).

The tinyBenchmarks family (Polo et al., 2024): a two-parameter logistic model P(correct) = sigmoid(a_i theta + d_i),
its items fitted on the answers of the models already evaluated on the whole pool; a new model's ability theta from
its answers on the subset S; then the unseen items are predicted. Three changes make it hold with a dozen fitting models
instead of hundreds:
- the discriminations are shrunk hard towards 1 (prior sd 0.4): with 15 answers per item a free a_i overfits (0.3
  to 0.7 compared on tuning model splits: 0.4 gave the lowest accuracy error at K = 100 and K = 899; 0.7 already
  doubled it);
- a new model's ability prior is the fitted models' abilities (their mean and spread, empirical Bayes), not N(0, 1):
  the new model comes from the same population, and the fit's own scale drifts with the discrimination prior;
- the p-IRT estimate is corrected by the model's own residuals on S (stratified, as a survey's difference estimator),
  and the correction is shrunk by how much of it is noise: lambda = b^2 / (b^2 + v), with v the sampling variance of
  the mean residual and b^2 = max(c^2 - v, 0) its squared signal (gp-IRT's mix of p-IRT and the raw score, with the
  mix set per model from its own answers rather than tuned on other models).
The interval adds the correction's variance, the uncertainty of theta (delta method) and the unexplained bias.
"""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl
from scipy.special import expit


@dataclass(frozen=True)
class IrtFit:
    """Item parameters of the 2PL model and the abilities of the models it was fitted on."""

    discrimination: np.ndarray  # (items,) a_i
    intercept: np.ndarray  # (items,) d_i: logit of P(correct) at theta = 0
    abilities: np.ndarray  # (models,) theta_j of the fitting models

    def probabilities(self, theta: np.ndarray) -> np.ndarray:
        """P(correct) of each ability in `theta` (shape (r,)) on every item: (r, items)."""
        return np.asarray(expit(np.outer(theta, self.discrimination) + self.intercept), dtype=float)


@dataclass(frozen=True)
class AccuracyEstimates:
    """Estimated full-pool accuracy (share in [0, 1]) of each respondent, with a confidence interval."""

    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    theta: np.ndarray
    p_irt: np.ndarray  # the uncorrected p-IRT estimate
    shrinkage: np.ndarray  # lambda: weight of the residual correction


def fit_irt(
    correct: np.ndarray,
    *,
    discrimination_prior_sd: float = 0.4,
    intercept_prior_sd: float = 3.0,
    max_iter: int = 2000,
) -> IrtFit:
    """Maximum a posteriori 2PL fit of `correct` (models x items, 1/0, NaN = not answered).

    Priors: theta ~ N(0, 1) (fixes the scale), a_i ~ N(1, discrimination_prior_sd^2), d_i ~ N(0, intercept_prior_sd^2).
    Block Newton: each sweep takes one Newton step for every item's (a_i, d_i) given the abilities (a 2 x 2 system per
    item, solved in closed form), then one for every ability given the items, until no parameter moves by more than
    1e-10 (or `max_iter` sweeps). Every sum runs along one axis in a fixed order with no BLAS call (issue 30): the
    item information this fit gives decides the selection, and L-BFGS-B (BLAS inside, stopping at a tolerance) moved
    it by 3e-8 between two BLAS kernels of one machine.
    """
    n, m = correct.shape
    if n < 2 or m < 1:
        raise ValueError(f"an IRT fit needs at least 2 models and 1 item, got {n} x {m}")
    answered = ~np.isnan(correct)
    mask = answered.astype(float)
    partial = not answered.all()  # x * 1.0 == x exactly: an all-ones mask would change no bit, so it is skipped
    y = np.where(answered, correct, 0.0)
    accuracy = y.sum(axis=1) / np.maximum(answered.sum(axis=1), 1)
    spread = accuracy.std()
    theta = (accuracy - accuracy.mean()) / (spread if spread > 0 else 1.0)
    item_rate = np.clip((y.sum(axis=0) + 0.5) / (answered.sum(axis=0) + 1.0), 0.02, 0.98)
    a, d = np.ones(m), np.log(item_rate / (1 - item_rate))
    a_precision, d_precision = discrimination_prior_sd**-2, intercept_prior_sd**-2
    # Three (models x items) buffers written in place: the same operations in the same order as the plain
    # expressions, minus the temporaries (the pool fit, 29 x 12,032 over a few hundred sweeps, is most of the
    # analysis); the result is bit-identical to them (BENCHMARKS.md, session 7).
    p, residual, weight = np.empty((n, m)), np.empty((n, m)), np.empty((n, m))

    def update() -> None:  # p = sigmoid(theta a_i + d_i); residual = (y - p) mask; weight = p (1 - p) mask
        np.multiply.outer(theta, a, out=p)
        np.add(p, d, out=p)
        expit(p, out=p)
        np.subtract(y, p, out=residual)
        np.subtract(1, p, out=weight)
        np.multiply(weight, p, out=weight)
        if partial:
            np.multiply(residual, mask, out=residual)
            np.multiply(weight, mask, out=weight)

    for _ in range(max_iter):
        update()
        t = theta[:, None]
        g_a = (residual * t).sum(axis=0) - a_precision * (a - 1)
        g_d = residual.sum(axis=0) - d_precision * d
        weight_t = weight * t
        h_ad = weight_t.sum(axis=0)
        np.multiply(weight_t, t, out=weight_t)
        h_aa = weight_t.sum(axis=0) + a_precision
        h_dd = weight.sum(axis=0) + d_precision
        det = h_aa * h_dd - h_ad * h_ad  # > 0: the item's log posterior is strictly concave given the abilities
        step_a = np.clip((h_dd * g_a - h_ad * g_d) / det, -1.0, 1.0)
        step_d = np.clip((h_aa * g_d - h_ad * g_a) / det, -2.0, 2.0)
        a, d = a + step_a, d + step_d
        update()
        g_t = np.multiply(residual, a, out=residual).sum(axis=1) - theta
        h_t = np.multiply(weight, a * a, out=weight).sum(axis=1) + 1.0
        step_t = np.clip(g_t / h_t, -1.0, 1.0)
        theta = theta + step_t
        moved = max(np.abs(step_a).max(), np.abs(step_d).max(), np.abs(step_t).max())
        if moved <= 1e-10:
            break
    return IrtFit(discrimination=a, intercept=d, abilities=theta)


def fit_digest(correct: np.ndarray) -> str:
    """What `fit_irt(correct)` is a function of, hashed: the matrix (shape and float64 bits), and fit_irt's source
    with its default priors, so an edit of the fit makes every stored fit a miss rather than a wrong answer."""
    digest = hashlib.sha256(inspect.getsource(fit_irt).encode())
    digest.update(repr(correct.shape).encode())
    digest.update(np.ascontiguousarray(correct, dtype="<f8").tobytes())
    return digest.hexdigest()


def estimate_ability(
    answers: np.ndarray,
    discrimination: np.ndarray,
    intercept: np.ndarray,
    *,
    prior_mean: float = 0.0,
    prior_sd: float = 1.0,
    iterations: int = 25,
) -> tuple[np.ndarray, np.ndarray]:
    """MAP theta under N(prior_mean, prior_sd^2) of each row of `answers` (r x k, NaN = not answered) on k items, and
    its standard error.

    Newton's method on all rows at once; the log posterior is strictly concave, so it converges from the prior mean.
    """
    answered = ~np.isnan(answers)
    y = np.where(answered, answers, 0.0)
    precision = prior_sd**-2
    theta = np.full(answers.shape[0], prior_mean)
    curvature = np.full_like(theta, precision)
    for _ in range(iterations):
        p = expit(np.outer(theta, discrimination) + intercept)
        # row sums, not matrix products: the same bits on every BLAS kernel (issue 30)
        gradient = ((y - p) * answered * discrimination).sum(axis=1) - precision * (theta - prior_mean)
        curvature = ((p * (1 - p)) * answered * (discrimination**2)).sum(axis=1) + precision
        theta = theta + np.clip(gradient / curvature, -2.0, 2.0)
    return theta, 1.0 / np.sqrt(curvature)


def estimate_accuracy(
    fit: IrtFit, subset: np.ndarray, answers: np.ndarray, *, strata: np.ndarray | None = None, level: float = 0.95
) -> AccuracyEstimates:
    """Full-pool accuracy of respondents who answered only the items `subset` (indices into the fitted pool).

    `answers` is (respondents, len(subset)) with NaN where not answered; `strata` (one label per pool item, e.g.
    the category) stratifies the residual correction; None treats the pool as one stratum.

    The estimand is what the leaderboard measures: the accuracy over the pool items the respondent answers. A model
    that left items unanswered is scored over the rest, so each stratum's unseen items count at the respondent's
    answer rate on that stratum's subset items (its unanswered items taken as missing at random within a stratum;
    a model that skipped most of a category is not judged on that category's predicted accuracy). With every subset
    item answered this is the plain p-IRT over the whole pool.
    """
    subset = np.asarray(subset, dtype=np.int64)
    if answers.shape[1] != len(subset) or len(subset) == 0:
        raise ValueError("answers need one column per subset item, and the subset must not be empty")
    m = len(fit.discrimination)
    labels = np.zeros(m, dtype=np.int64) if strata is None else np.unique(strata, return_inverse=True)[1]
    a, d = fit.discrimination, fit.intercept
    ability_spread = float(fit.abilities.std())
    theta, theta_se = estimate_ability(
        answers,
        a[subset],
        d[subset],
        prior_mean=float(fit.abilities.mean()),
        prior_sd=ability_spread if ability_spread > 0 else 1.0,
    )
    p = fit.probabilities(theta)  # (r, m)
    p_seen = p[:, subset]
    answered = ~np.isnan(answers)
    residual = np.where(answered, answers - p_seen, 0.0)
    bernoulli = np.where(answered, p_seen * (1 - p_seen), 0.0)
    information = p * (1 - p) * a  # d p / d theta

    # Per stratum (row sums, not matrix products: each respondent's figures must not depend on the other rows):
    # the answer rate on the subset (a stratum without subset items, or a respondent who answered nothing, takes
    # the overall rate, 1 if that is 0), the unseen items the respondent would answer, their expected correct
    # answers, the mean residual on S and its sampling variance.
    overall = answered.mean(axis=1)
    overall = np.where(overall > 0, overall, 1.0)
    strata_count = labels.max() + 1
    unseen_items, unseen_mass, unseen_slope, mean_residual, residual_variance = (
        np.zeros((len(theta), strata_count)) for _ in range(5)
    )
    subset_labels = labels[subset]
    for h in range(strata_count):
        in_h, pool_h = subset_labels == h, labels == h
        counted = answered[:, in_h].sum(axis=1)
        rate = counted / in_h.sum() if in_h.any() else overall
        not_seen = pool_h.copy()
        not_seen[subset[in_h]] = False
        unseen_items[:, h] = rate * not_seen.sum()
        unseen_mass[:, h] = rate * p[:, not_seen].sum(axis=1)
        unseen_slope[:, h] = rate * information[:, not_seen].sum(axis=1)
        per_item = np.maximum(counted, 1)
        mean_residual[:, h] = residual[:, in_h].sum(axis=1) / per_item
        residual_variance[:, h] = bernoulli[:, in_h].sum(axis=1) / per_item**2
    answered_total = answered.sum(axis=1) + unseen_items.sum(axis=1)
    p_irt = (np.where(answered, answers, 0.0).sum(axis=1) + unseen_mass.sum(axis=1)) / answered_total

    # The residual correction, shrunk by how much of it is noise.
    share = unseen_items / answered_total[:, None]
    correction = (share * mean_residual).sum(axis=1)
    variance = (share**2 * residual_variance).sum(axis=1)
    signal = np.maximum(correction**2 - variance, 0.0)
    shrinkage = np.where(signal + variance > 0, signal / np.maximum(signal + variance, 1e-300), 0.0)
    estimate = np.clip(p_irt + shrinkage * correction, 0.0, 1.0)

    slope = unseen_slope.sum(axis=1) / answered_total  # d(estimate)/d theta, for the delta method
    spread = np.sqrt(shrinkage**2 * variance + (1 - shrinkage) ** 2 * signal + (slope * theta_se) ** 2)
    from scipy.stats import norm  # here: scipy.stats costs ~0.9 s to import, in every process loading the code

    z = float(norm.ppf(0.5 + level / 2))
    return AccuracyEstimates(
        estimate=estimate,
        low=np.clip(estimate - z * spread, 0.0, 1.0),
        high=np.clip(estimate + z * spread, 0.0, 1.0),
        theta=theta,
        p_irt=p_irt,
        shrinkage=shrinkage,
    )


def correctness_matrix(results: pl.DataFrame, item_ids: Sequence[str]) -> tuple[tuple[str, ...], np.ndarray]:
    """Models (sorted) and their correctness on `item_ids` (models x items, in the given order) from a results frame
    (model, item_id, sample, correct): a model's share of correct samples per item (avg@k), NaN where it did not
    answer. Rows of items not in `item_ids` are ignored."""
    mine = results.filter(pl.col("item_id").is_in(list(dict.fromkeys(item_ids))))
    per_item = mine.group_by("model", "item_id").agg(pl.col("correct").cast(pl.Float64).mean())
    models = tuple(sorted(per_item["model"].unique().to_list()))
    row = {m: i for i, m in enumerate(models)}
    column = {item: j for j, item in enumerate(item_ids)}
    correct = np.full((len(models), len(item_ids)), np.nan)
    correct[
        np.array([row[m] for m in per_item["model"].to_list()], dtype=np.int64),
        np.array([column[i] for i in per_item["item_id"].to_list()], dtype=np.int64),
    ] = per_item["correct"].to_numpy()
    return models, correct


def pool_accuracy_table(
    pool: pl.DataFrame,
    released: pl.DataFrame,
    strata: dict[str, str],
    *,
    level: float = 0.95,
    fit: Callable[[np.ndarray], IrtFit] = fit_irt,
) -> pl.DataFrame:
    """Each configuration's estimated accuracy on the whole item pool from its answers on the released items.

    `pool` holds the answers of models evaluated on the whole pool (a bank's imported results) and fits the IRT
    model; `released` every configuration's answers on the released items; `strata` maps each pool item to its
    stratum (the discipline). Columns: model, released_items, released_accuracy, pool_items, estimated_accuracy,
    ci_low, ci_high (in %), and observed_pool_accuracy where the model answered the pool itself (it is then one of
    the models the items were fitted on: an in-sample check; the held-out figures are the selection's). Empty when
    the pool has fewer than two models or no released item is in it. `fit` is fit_irt or a store of its results.
    """
    schema = {
        "model": pl.String,
        "released_items": pl.Int64,
        "released_accuracy": pl.Float64,
        "pool_items": pl.Int64,
        "estimated_accuracy": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "observed_pool_accuracy": pl.Float64,
    }
    item_ids = sorted(set(pool["item_id"].to_list()) & set(strata))
    models, correct = correctness_matrix(pool, item_ids)
    column = {item: j for j, item in enumerate(item_ids)}
    subset_ids = sorted(set(released["item_id"].to_list()) & set(column))
    if len(models) < 2 or not subset_ids:
        return pl.DataFrame(schema=schema)
    fitted = fit(correct)
    configs, answers = correctness_matrix(released, subset_ids)
    subset = np.array([column[i] for i in subset_ids], dtype=np.int64)
    estimates = estimate_accuracy(fitted, subset, answers, strata=np.array([strata[i] for i in item_ids]), level=level)
    observed = dict(zip(models, np.nanmean(correct, axis=1).tolist(), strict=True))
    answered = ~np.isnan(answers)
    released_accuracy = np.where(answered, answers, 0.0).sum(axis=1) / np.maximum(answered.sum(axis=1), 1)
    return pl.DataFrame(
        {
            "model": list(configs),
            "released_items": answered.sum(axis=1).astype(np.int64),
            "released_accuracy": 100 * released_accuracy,
            "pool_items": np.full(len(configs), len(item_ids), dtype=np.int64),
            "estimated_accuracy": 100 * estimates.estimate,
            "ci_low": 100 * estimates.low,
            "ci_high": 100 * estimates.high,
            "observed_pool_accuracy": [100 * observed[m] if m in observed else None for m in configs],
        },
        schema=schema,
    ).sort(["estimated_accuracy", "model"], descending=[True, False])
