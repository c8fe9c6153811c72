"""Held-out ranking fidelity of a subset (issue 19): does it rank models it never saw as the whole pool does?

Models are split at random into visible (whose answers on the whole pool the selection and the IRT fit may use) and
held out. A subset is then judged on the held-out models only: Kendall tau-b between their full-pool accuracies and
the subset's estimates, rank-1 retention, and the mean absolute accuracy error in points. The reference is stratified
random subsets of the same per-stratum sizes, scored both by raw (post-stratified) accuracy and by the IRT estimator,
so a gain of the selection and a gain of the estimator show apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from benchmark_platform.analysis.irt import IrtFit, estimate_accuracy, fit_irt
from benchmark_platform.analysis.stability import kendall_tau_b

PERCENT = 100.0


@dataclass(frozen=True)
class Fidelity:
    """Held-out figures of one or more subsets (arrays have one entry per subset)."""

    tau: np.ndarray
    rank1: np.ndarray
    acc_mae_points: np.ndarray


@dataclass(frozen=True)
class SplitFidelity:
    selected: Fidelity  # the subset under test, with the IRT estimator
    random_raw: Fidelity  # stratified random subsets, raw accuracy
    random_irt: Fidelity  # the same random subsets, IRT estimator
    ci_coverage: float  # share of held-out models whose full-pool accuracy the selected subset's interval holds


def pool_accuracy(correct: np.ndarray) -> np.ndarray:
    """Each model's accuracy over the items it answered (rows of correct, NaN = not answered)."""
    answered = ~np.isnan(correct)
    return np.asarray(np.where(answered, correct, 0.0).sum(axis=1) / np.maximum(answered.sum(axis=1), 1), dtype=float)


def model_splits(models: int, visible: int, splits: int, seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """`splits` random (visible, held_out) partitions of range(models), each part sorted."""
    if not 1 < visible < models - 1:
        raise ValueError(f"need at least 2 visible and 2 held-out models, got {visible} of {models}")
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(splits):
        order = rng.permutation(models)
        out.append((np.sort(order[:visible]), np.sort(order[visible:])))
    return out


def stratified_random_subsets(
    labels: np.ndarray, per_stratum: np.ndarray, draws: int, rng: np.random.Generator
) -> np.ndarray:
    """`draws` subsets (rows) with per_stratum[h] items drawn without replacement from stratum h of `labels`."""
    pools = [np.flatnonzero(labels == h) for h in range(len(per_stratum))]
    return np.stack(
        [
            np.concatenate(
                [rng.choice(pool, int(k), replace=False) for pool, k in zip(pools, per_stratum, strict=True)]
            )
            for _ in range(draws)
        ]
    )


def post_stratified_accuracy(correct: np.ndarray, subset: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Raw accuracy on `subset`, each stratum weighted by its share of the pool times the model's answer rate on the
    stratum's subset items: the post-stratified estimate of the accuracy over the items the model answers, the same
    estimand as `pool_accuracy` and the IRT estimator (a stratum absent from the subset counts at the model's subset
    mean and overall answer rate)."""
    sizes = np.bincount(labels)
    answers = correct[:, subset]
    answered = ~np.isnan(answers)
    overall = np.where(answered, answers, 0.0).sum(axis=1) / np.maximum(answered.sum(axis=1), 1)
    overall_rate = answered.mean(axis=1)
    correct_mass, answered_mass = np.zeros(correct.shape[0]), np.zeros(correct.shape[0])
    for h in range(len(sizes)):
        in_h = labels[subset] == h
        if not in_h.any():
            correct_mass += sizes[h] * overall_rate * overall
            answered_mass += sizes[h] * overall_rate
            continue
        count = answered[:, in_h].sum(axis=1)
        correct_mass += sizes[h] / in_h.sum() * np.where(answered[:, in_h], answers[:, in_h], 0.0).sum(axis=1)
        answered_mass += sizes[h] / in_h.sum() * count
    return np.asarray(np.where(answered_mass > 0, correct_mass / np.maximum(answered_mass, 1e-300), 0.0), dtype=float)


def fidelity(truth: np.ndarray, estimates: np.ndarray) -> Fidelity:
    """Figures of estimates (subsets x models) against the models' full-pool accuracies `truth` (models,)."""
    estimates = np.atleast_2d(estimates)
    return Fidelity(
        tau=kendall_tau_b(truth, estimates),
        rank1=np.argmax(estimates, axis=1) == np.argmax(truth),
        acc_mae_points=PERCENT * np.abs(estimates - truth).mean(axis=1),
    )


def percentile_among(value: float, sample: np.ndarray) -> float:
    """Percentile of `value` in `sample`, ties counted half."""
    return float(PERCENT * ((sample < value).mean() + 0.5 * (sample == value).mean()))


def validate_split(
    correct: np.ndarray,
    labels: np.ndarray,
    held_out: np.ndarray,
    fit: IrtFit,
    selected: np.ndarray,
    random_subsets: np.ndarray,
) -> SplitFidelity:
    """Held-out figures of `selected` (IRT estimator) and of `random_subsets` (raw and IRT) for one model split.

    `fit` must come from the visible models' answers on the whole pool (the columns of `correct`).
    """
    held = correct[held_out]
    truth = pool_accuracy(held)
    ours = estimate_accuracy(fit, selected, held[:, selected], strata=labels)
    raw = np.stack([post_stratified_accuracy(held, s, labels) for s in random_subsets])
    irt = np.stack([estimate_accuracy(fit, s, held[:, s], strata=labels).estimate for s in random_subsets])
    return SplitFidelity(
        selected=fidelity(truth, ours.estimate),
        random_raw=fidelity(truth, raw),
        random_irt=fidelity(truth, irt),
        ci_coverage=float(((ours.low <= truth) & (truth <= ours.high)).mean()),
    )


def holdout_validation(
    correct: np.ndarray,
    labels: np.ndarray,
    select_subset: Callable[[np.ndarray], np.ndarray],
    *,
    splits: int,
    visible_share: float,
    random_subsets: int,
    seed: int,
) -> dict[str, str | int | float]:
    """Expected held-out fidelity of a selection procedure, for the selection's metadata.

    `correct` (models x pool items, NaN = not answered) holds every model with answers; `labels` the pool items'
    strata; `select_subset(visible)` reruns the selection seeing only the rows `visible` and returns pool indices.
    Per split: an IRT fit on the visible models, the selection, and `random_subsets` stratified random subsets of the
    selection's per-stratum sizes. Returns means over splits, or the reason it was skipped (too few models).
    """
    models = correct.shape[0]
    visible = int(round(visible_share * models))
    if splits == 0 or not 1 < visible < models - 1:
        return {"holdout_validation": f"skipped: {models} models with answers, {splits} splits requested"}
    rng = np.random.default_rng(seed)
    rows: list[SplitFidelity] = []
    for seen, held_out in model_splits(models, visible, splits, seed):
        selected = np.asarray(select_subset(seen), dtype=np.int64)
        per_stratum = np.bincount(labels[selected], minlength=labels.max() + 1)
        draws = stratified_random_subsets(labels, per_stratum, random_subsets, rng)
        rows.append(validate_split(correct, labels, held_out, fit_irt(correct[seen]), selected, draws))

    def mean(values: list[float] | list[np.floating[Any]]) -> float:
        return round(float(np.nanmean(values)), 4)

    return {
        "holdout_validation": f"{len(rows)} random model splits, {visible} of {models} models visible to the "
        f"selection and the IRT fit, judged on the others against {random_subsets} stratified random subsets each",
        "holdout_splits": len(rows),
        "holdout_models": models,
        "holdout_visible_models": visible,
        "holdout_random_subsets": random_subsets,
        "holdout_tau": mean([r.selected.tau[0] for r in rows]),
        "holdout_acc_mae_points": mean([r.selected.acc_mae_points[0] for r in rows]),
        "holdout_rank1_retention": mean([r.selected.rank1[0] for r in rows]),
        "holdout_ci_coverage": mean([r.ci_coverage for r in rows]),
        "random_tau": mean([r.random_raw.tau.mean() for r in rows]),
        "random_acc_mae_points": mean([r.random_raw.acc_mae_points.mean() for r in rows]),
        "random_irt_tau": mean([r.random_irt.tau.mean() for r in rows]),
        "random_irt_acc_mae_points": mean([r.random_irt.acc_mae_points.mean() for r in rows]),
        "tau_percentile_among_random": mean([percentile_among(r.selected.tau[0], r.random_raw.tau) for r in rows]),
    }
