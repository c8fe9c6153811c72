"""Accuracy with bootstrap 95% CIs, overall (the leaderboard) and per item group (discipline, field,
subfield, difficulty, strategy, ...). Percentile CIs over B item resamples (KINA 5; OenoBench C).

Issue 31: a missing answer is not a wrong one. Every row says how many items the model answered, how many
are missing and how many answered items had no extractable option (unparsed: those stay wrong, they were
answered), and gives the accuracy over the answered items with its own CI beside the strict accuracy
(`accuracy`: missing items score 0). The ranking is by the accuracy over answered items, for the models
that answered at least `min_answered_share` of the items; the others are listed unranked (rank null).
"""

from __future__ import annotations

import numpy as np
import polars as pl

from benchmark_platform.analysis.matrix import DEFAULT_B, ScoreMatrix, bootstrap_replicates, percentile_ci

# A share compared with a threshold is a ratio of counts: this guard keeps 0.5 of 898 items (449 / 898) at 0.5
# on every machine.
SHARE_EPS = 1e-9


def _nullable(values: np.ndarray) -> list[float | None]:
    return [None if not np.isfinite(v) else float(v) for v in values]


def covered(answered: np.ndarray, n_items: np.ndarray | int, min_share: float) -> np.ndarray:
    """Whether each count of answered items is at least `min_share` of its `n_items` (with a deterministic guard)
    and not zero."""
    return np.asarray((answered >= min_share * n_items - SHARE_EPS * np.maximum(n_items, 1)) & (answered > 0))


def _coverage_columns(
    matrix: ScoreMatrix, rows: np.ndarray | None, B: int, rng: np.random.Generator
) -> dict[str, object]:
    scores = matrix.scores if rows is None else matrix.scores[rows]
    answered = matrix.answered if rows is None else matrix.answered[rows]
    low, high = percentile_ci(bootstrap_replicates(scores, B, rng, answered))
    n_answered = matrix.answered_items(rows)
    return {
        "answered": n_answered.astype(np.int64),
        "missing": (scores.shape[0] - n_answered).astype(np.int64),
        "unparsed": matrix.unparsed_items(rows).astype(np.int64),
        "answered_accuracy": _nullable(matrix.answered_accuracy(rows)),
        "answered_ci_low": _nullable(low),
        "answered_ci_high": _nullable(high),
    }


def leaderboard(matrix: ScoreMatrix, *, B: int = DEFAULT_B, seed: int, min_answered_share: float = 0.5) -> pl.DataFrame:
    """rank, model, accuracy, ci_low, ci_high, n_items, missing, unparsed_answers, answered, unparsed,
    answered_accuracy, answered_ci_low, answered_ci_high; ranked first (best first, ties share the rank), then the
    unranked models (answered under `min_answered_share` of the items)."""
    accuracy = matrix.accuracy()
    low, high = percentile_ci(bootstrap_replicates(matrix.scores, B, np.random.default_rng(seed)))
    # the same seed again: the answered-only replications use the same item draws (paired with the strict ones)
    coverage = _coverage_columns(matrix, None, B, np.random.default_rng(seed))
    ranked = covered(np.asarray(coverage["answered"]), matrix.n_items, min_answered_share)
    frame = pl.DataFrame(
        {
            "model": list(matrix.models),
            "accuracy": accuracy,
            "ci_low": low,
            "ci_high": high,
            "n_items": matrix.n_items,
            "missing": coverage["missing"],
            "unparsed_answers": matrix.unparsed_answers(),
            "answered": coverage["answered"],
            "unparsed": coverage["unparsed"],
            "answered_accuracy": coverage["answered_accuracy"],
            "answered_ci_low": coverage["answered_ci_low"],
            "answered_ci_high": coverage["answered_ci_high"],
            "ranked": ranked,
        },
        schema_overrides={
            "answered_accuracy": pl.Float64,
            "answered_ci_low": pl.Float64,
            "answered_ci_high": pl.Float64,
        },
    )
    rank = pl.when(pl.col("ranked")).then(pl.col("answered_accuracy")).rank("min", descending=True).cast(pl.Int32)
    return (
        frame.with_columns(rank=rank)
        .sort(["rank", "answered_accuracy", "model"], descending=[False, True, False], nulls_last=True)
        .drop("ranked")
        .select("rank", pl.exclude("rank"))
    )


def group_accuracy(matrix: ScoreMatrix, column: str, *, B: int = DEFAULT_B, seed: int) -> pl.DataFrame:
    """Long table: model, group, n_items, accuracy, ci_low, ci_high, unparsed_answers, answered, missing, unparsed,
    answered_accuracy, answered_ci_low, answered_ci_high; items resampled within each group."""
    rng = np.random.default_rng(seed)
    paired = np.random.default_rng(seed)  # makes the same draws as `rng`, group by group, for the answered CIs
    frames = []
    for label, mask in matrix.groups(column):
        scores = matrix.scores[mask]
        low, high = percentile_ci(bootstrap_replicates(scores, B, rng))
        frames.append(
            pl.DataFrame(
                {
                    "model": list(matrix.models),
                    "group": label,
                    "n_items": int(mask.sum()),
                    "accuracy": scores.mean(axis=0) * 100,
                    "ci_low": low,
                    "ci_high": high,
                    "unparsed_answers": matrix.unparsed_answers(mask),
                    **_coverage_columns(matrix, mask, B, paired),
                },
                schema_overrides={
                    "answered_accuracy": pl.Float64,
                    "answered_ci_low": pl.Float64,
                    "answered_ci_high": pl.Float64,
                },
            )
        )
    return pl.concat(frames).sort("model", "group")


def wide(table: pl.DataFrame, *, value: str = "accuracy", row: str = "model", column: str = "group") -> pl.DataFrame:
    """A long table pivoted to one row per `row` and one column per `column` value."""
    return table.pivot(on=column, index=row, values=value, sort_columns=True)
