"""Ranking stability under bounded test budgets (KINA 5.2), pairwise resolvability, and tiers.

Stability: for each of B replications, draw a stratified random subsample of rho * n items without
replacement (each stratum contributes round(rho * n_s) items, at least one), recompute every model's
accuracy, and compare with the full-sample ranking of the top k models: Kendall's tau-b between
their full-sample and subsample accuracies, and rank-1 retention (the full-sample leader is first
in the subsample; a tie for first counts as retained). All replications of a rate are computed at
once: one random key matrix, a per-stratum partial sort, a mask, one matrix product.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl

from benchmark_platform.analysis.matrix import DEFAULT_B, PERCENT, ScoreMatrix, bootstrap_replicates
from benchmark_platform.runtime import single_threaded_blas

DEFAULT_RATES = (0.5, 0.7, 0.9)


def top_k(accuracy: np.ndarray, models: tuple[str, ...], k: int) -> np.ndarray:
    """Column indices of the k most accurate models, best first (ties broken by model name)."""
    order = sorted(range(len(models)), key=lambda j: (-accuracy[j], models[j]))
    return np.array(order[:k])


def subsample_accuracies(
    scores: np.ndarray, strata: np.ndarray, rho: float, B: int, rng: np.random.Generator
) -> np.ndarray:
    """(B, n_models) accuracies (%) over stratified subsamples without replacement."""
    if not 0 < rho <= 1:
        raise ValueError(f"subsample rate {rho} is not in (0, 1]")
    totals = np.zeros((B, scores.shape[1]))
    size = 0
    with single_threaded_blas():
        for stratum in np.unique(strata):
            rows = np.flatnonzero(strata == stratum)
            k = max(1, round(rho * rows.size))
            picked = np.argpartition(rng.random((B, rows.size)), k - 1, axis=1)[:, :k]
            mask = np.zeros((B, rows.size))
            np.put_along_axis(mask, picked, 1.0, axis=1)
            totals += mask @ scores[rows]
            size += k
    return totals * (PERCENT / size)


def kendall_tau_b(reference: np.ndarray, replicates: np.ndarray) -> np.ndarray:
    """Kendall tau-b between one reference vector (k,) and each row of replicates (B, k)."""
    i, j = np.triu_indices(reference.size, 1)
    sx = np.sign(reference[i] - reference[j])
    sy = np.sign(replicates[:, i] - replicates[:, j])
    pairs = i.size
    tied_x = np.count_nonzero(sx == 0)
    tied_y = np.count_nonzero(sy == 0, axis=1)
    denominator = np.sqrt((pairs - tied_x) * (pairs - tied_y).astype(float))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, (sy * sx).sum(axis=1) / denominator, np.nan)


def ranking_stability(
    matrix: ScoreMatrix,
    *,
    strata: str = "discipline",
    rates: tuple[float, ...] = DEFAULT_RATES,
    B: int = DEFAULT_B,
    top: int = 10,
    seed: int,
) -> pl.DataFrame:
    """Per rate: rho, subsample size, mean (and SD) top-k Kendall tau, rank-1 retention."""
    rng = np.random.default_rng(seed)
    codes = matrix.items[strata].cast(pl.String).to_numpy()
    full = matrix.accuracy()
    best = top_k(full, matrix.models, top)
    rows = []
    for rho in rates:
        sub = subsample_accuracies(matrix.scores, codes, rho, B, rng)
        tau = kendall_tau_b(full[best], sub[:, best])
        retained = sub[:, best[0]] >= sub.max(axis=1)
        size = sum(max(1, round(rho * n)) for n in np.unique(codes, return_counts=True)[1])
        rows.append(
            {
                "rho": rho,
                "subsample_items": size,
                "kendall_tau": float(np.nanmean(tau)),
                "kendall_tau_sd": float(np.nanstd(tau)),
                "rank1_retention": float(retained.mean()),
            }
        )
    return pl.DataFrame(rows)


def pairwise_resolvability(matrix: ScoreMatrix, *, B: int = DEFAULT_B, level: float = 0.95, seed: int) -> pl.DataFrame:
    """Every pair (better, worse) by full-sample accuracy: gap, paired-bootstrap CI, resolvable.

    A gap is resolvable at `level` when its percentile CI (items resampled with replacement, the
    same draws for both models) excludes zero.
    """
    rng = np.random.default_rng(seed)
    full = matrix.accuracy()
    order = top_k(full, matrix.models, len(matrix.models))
    reps = bootstrap_replicates(matrix.scores[:, order], B, rng)
    i, j = np.triu_indices(order.size, 1)
    gaps = reps[:, i] - reps[:, j]
    tail = (1 - level) / 2 * PERCENT
    low, high = np.percentile(gaps, tail, axis=0), np.percentile(gaps, PERCENT - tail, axis=0)
    names = np.array(matrix.models)[order]
    return pl.DataFrame(
        {
            "better": names[i],
            "worse": names[j],
            "rank_better": i + 1,
            "rank_worse": j + 1,
            "gap": full[order][i] - full[order][j],
            "ci_low": low,
            "ci_high": high,
            "resolvable": (low > 0) | (high < 0),
        }
    )


def resolvability_summary(pairs: pl.DataFrame) -> dict[str, Any]:
    """Adjacent-rank view: how many neighbour gaps resolve; largest unresolved and smallest resolved gap."""
    adjacent = pairs.filter(pl.col("rank_worse") == pl.col("rank_better") + 1)
    resolved = pairs.filter("resolvable")["gap"]
    unresolved = pairs.filter(~pl.col("resolvable"))["gap"]
    return {
        "pairs": pairs.height,
        "pairs_resolvable": resolved.len(),
        "adjacent_pairs": adjacent.height,
        "adjacent_resolvable": int(adjacent["resolvable"].sum()),
        "largest_unresolvable_gap": unresolved.max() if unresolved.len() else None,
        "smallest_resolvable_gap": resolved.min() if resolved.len() else None,
    }


def tiers(pairs: pl.DataFrame) -> pl.DataFrame:
    """Contiguous tiers down the ranking: a model joins the current tier while its gap to the tier's
    leader is not resolvable; otherwise it leads a new tier. Returns model, rank, tier."""
    ranks = dict(zip(pairs["better"], pairs["rank_better"], strict=True))
    ranks |= dict(zip(pairs["worse"], pairs["rank_worse"], strict=True))
    unresolved = {(a, b) for a, b, r in pairs.select("better", "worse", "resolvable").iter_rows() if not r}
    order = sorted(ranks, key=ranks.__getitem__)
    tier, leader, tier_of = 0, None, []
    for model in order:
        if (leader, model) not in unresolved:
            tier, leader = tier + 1, model
        tier_of.append(tier)
    return pl.DataFrame({"model": order, "rank": [ranks[m] for m in order], "tier": tier_of})
