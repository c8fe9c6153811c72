"""The IRT accuracy estimator (analysis/irt.py) on data simulated from a 2PL model, and the held-out fidelity
helpers (analysis/fidelity.py)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from scipy.special import expit

from benchmark_platform.analysis.fidelity import (
    holdout_validation,
    model_splits,
    percentile_among,
    pool_accuracy,
    post_stratified_accuracy,
    stratified_random_subsets,
)
from benchmark_platform.analysis.irt import estimate_ability, estimate_accuracy, fit_irt, pool_accuracy_table
from benchmark_platform.evaluation.importers import read_mmlu_pro_matrices


def _simulate(seed: int, models: int, items: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=models)
    a = rng.lognormal(0.0, 0.25, items)
    d = rng.normal(0.0, 1.5, items)
    correct = (rng.random((models, items)) < expit(np.outer(theta, a) + d)).astype(float)
    return correct, theta, a, d


def test_fit_recovers_the_abilities_and_items_of_simulated_models() -> None:
    correct, theta, a, d = _simulate(1, 30, 1500)
    correct[0, :100] = np.nan  # a model that skipped items still gets its ability
    fit = fit_irt(correct)
    assert np.corrcoef(fit.abilities, theta)[0, 1] > 0.97
    assert np.corrcoef(fit.intercept, d)[0, 1] > 0.85
    # the scale is set by theta's N(0, 1) prior: the fitted logits track the true ones
    assert np.corrcoef((fit.discrimination * fit.abilities[3] + fit.intercept), a * theta[3] + d)[0, 1] > 0.85


def test_new_models_abilities_and_accuracies_are_recovered_from_a_subset_with_honest_intervals() -> None:
    correct, theta, a, d = _simulate(2, 60, 2000)
    visible, new = np.arange(20), np.arange(20, 60)
    fit = fit_irt(correct[visible])
    subset = np.random.default_rng(0).choice(2000, 200, replace=False)
    answers = correct[new][:, subset]
    estimated_theta, se = estimate_ability(answers, fit.discrimination[subset], fit.intercept[subset])
    assert np.corrcoef(estimated_theta, theta[new])[0, 1] > 0.9
    assert (se > 0).all() and (se < 0.5).all()
    truth = pool_accuracy(correct[new])
    estimates = estimate_accuracy(fit, subset, answers)
    raw = answers.mean(axis=1)
    error = np.abs(estimates.estimate - truth).mean()
    assert error < 0.03
    assert error < np.abs(raw - truth).mean()  # the item model beats the subset's raw accuracy
    assert ((estimates.low <= truth) & (truth <= estimates.high)).mean() >= 0.8
    assert ((0 <= estimates.shrinkage) & (estimates.shrinkage <= 1)).all()
    # the whole pool as the subset gives back each model's accuracy exactly
    whole = estimate_accuracy(fit, np.arange(2000), correct[new])
    np.testing.assert_allclose(whole.estimate, truth, atol=1e-12)


def test_a_model_that_skipped_a_stratum_is_estimated_over_the_items_it_answered() -> None:
    # Stratum 1 is the hardest half of the items; the new models answered only a fifth of it (as DeepSeek-Coder-V2
    # skipped most of MMLU-Pro's chemistry and engineering). pool_accuracy scores them over what they answered.
    correct, _, _, d = _simulate(3, 40, 2000)
    strata = (d < np.median(d)).astype(np.int64)
    visible, new = np.arange(20), np.arange(20, 40)
    held = correct[new].copy()
    rng = np.random.default_rng(1)
    held[:, (strata == 1) & (rng.random(2000) < 0.8)] = np.nan
    truth = pool_accuracy(held)
    subset = rng.choice(2000, 300, replace=False)
    fit = fit_irt(correct[visible])
    estimates = estimate_accuracy(fit, subset, held[:, subset], strata=strata)
    everything = pool_accuracy(correct[new])  # what the model would score answering every item: a different figure
    assert np.abs(truth - everything).mean() > 0.05
    assert np.abs(estimates.estimate - truth).mean() < 0.03
    assert np.abs(post_stratified_accuracy(held, subset, strata) - truth).mean() < 0.05
    # answering every subset item, the estimate is the whole-pool p-IRT as before
    full = estimate_accuracy(fit, subset, correct[new][:, subset], strata=strata)
    assert np.abs(full.estimate - everything).mean() < 0.03


def test_fidelity_helpers() -> None:
    splits = model_splits(10, 4, 3, seed=5)
    for seen, held in splits:
        assert len(seen) == 4 and len(held) == 6 and not set(seen) & set(held)
    again = model_splits(10, 4, 3, seed=5)  # the seed decides the splits
    assert all((a == c).all() and (b == e).all() for (a, b), (c, e) in zip(splits, again, strict=True))
    assert percentile_among(0.5, np.array([0.1, 0.5, 0.9, 0.5])) == 50.0
    labels = np.array([0, 0, 0, 1, 1, 1, 1, 1])
    correct = np.array([[1, 0, 1, 1, 1, 0, 0, 0], [1, 1, 1, 0, 0, np.nan, 0, 1]], dtype=float)
    np.testing.assert_allclose(
        post_stratified_accuracy(correct, np.arange(8), labels), [3 / 8 * 2 / 3 + 5 / 8 * 2 / 5, (3 + 1) / 7]
    )  # the second model is scored over the 7 items it answered, as pool_accuracy does
    draws = stratified_random_subsets(labels, np.array([1, 2]), 5, np.random.default_rng(0))
    assert draws.shape == (5, 3) and all(sorted(np.bincount(labels[d], minlength=2)) == [1, 2] for d in draws)


def test_holdout_validation_reports_the_selection_against_random() -> None:
    correct, *_ = _simulate(3, 16, 600)
    labels = np.arange(600) % 3

    def easiest_first(visible: np.ndarray) -> np.ndarray:  # a stand-in selection that reads only the visible rows
        order = np.argsort(-np.nanmean(correct[visible], axis=0), kind="stable")
        return np.concatenate([order[labels[order] == h][:20] for h in range(3)])

    report = holdout_validation(correct, labels, easiest_first, splits=2, visible_share=0.5, random_subsets=20, seed=1)
    assert report["holdout_splits"] == 2 and report["holdout_visible_models"] == 8
    for key in ("holdout_tau", "random_tau", "random_irt_tau", "holdout_acc_mae_points", "random_acc_mae_points"):
        assert isinstance(report[key], float) and not np.isnan(report[key])
    assert -1 <= report["holdout_tau"] <= 1 and 0 <= report["tau_percentile_among_random"] <= 100
    assert (
        "skipped"
        in holdout_validation(
            correct[:3], labels, easiest_first, splits=2, visible_share=0.5, random_subsets=5, seed=1
        )["holdout_validation"]
    )


def test_full_pool_accuracy_from_a_release_on_mmlu_pro(shared_data: Path) -> None:
    """Real data: 29 models' answers on MMLU-Pro's law and history (1,482 items) fit the items; a release of 150 of
    them gives every model's pool accuracy within a few points, and a configuration that answered only the release
    (here a copy of one model's release answers) gets an estimate too, without an observed figure."""
    results = read_mmlu_pro_matrices(shared_data / "mmlu_pro_outputs").filter(
        pl.col("discipline").is_in(["law", "history"])
    )
    strata = dict(results.select("item_id", "discipline").unique().iter_rows())
    rng = np.random.default_rng(19)
    release = sorted(rng.choice(sorted(strata), 150, replace=False).tolist())
    released = results.filter(pl.col("item_id").is_in(release))
    newcomer = released.filter(pl.col("model") == "gemini-1.5-pro-002").with_columns(model=pl.lit("newcomer"))
    table = pool_accuracy_table(results, pl.concat([released, newcomer]), strata)
    assert table.height == 30 and set(table["pool_items"]) == {len(strata)} and len(strata) == 1_482
    assert (table["ci_low"] <= table["estimated_accuracy"]).all() and (
        table["estimated_accuracy"] <= table["ci_high"]
    ).all()
    imported = table.filter(pl.col("observed_pool_accuracy").is_not_null())
    error = (imported["estimated_accuracy"] - imported["observed_pool_accuracy"]).abs()
    assert imported.height == 29 and error.mean() < 3.0, error.to_list()
    covered = (imported["ci_low"] <= imported["observed_pool_accuracy"]) & (
        imported["observed_pool_accuracy"] <= imported["ci_high"]
    )
    assert covered.mean() >= 0.75
    row = {r["model"]: r for r in table.iter_rows(named=True)}
    assert row["newcomer"]["observed_pool_accuracy"] is None
    assert row["newcomer"]["estimated_accuracy"] == row["gemini-1.5-pro-002"]["estimated_accuracy"]
    empty = pool_accuracy_table(results.filter(pl.col("model") == "newcomer"), released, strata)
    assert empty.is_empty() and "estimated_accuracy" in empty.columns


def test_a_new_models_ability_prior_is_the_fitted_models_abilities() -> None:
    correct, _, _, _ = _simulate(4, 20, 800)
    fit = fit_irt(correct)
    nothing = np.full((1, 5), np.nan)  # a respondent who answered none of the subset items
    theta, se = estimate_ability(nothing, fit.discrimination[:5], fit.intercept[:5], prior_mean=0.7, prior_sd=0.5)
    assert np.isclose(theta[0], 0.7) and np.isclose(se[0], 0.5)
    estimates = estimate_accuracy(fit, np.arange(5), nothing)
    assert np.isclose(estimates.theta[0], fit.abilities.mean())  # empirical Bayes: the fitted population's centre
