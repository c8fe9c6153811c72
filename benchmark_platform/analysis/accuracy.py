"""Accuracy with bootstrap 95% CIs, overall (the leaderboard) and per item group (discipline, field,
subfield, difficulty, strategy, ...). Percentile CIs over B item resamples (KINA 5; OenoBench C)."""

from __future__ import annotations

import numpy as np
import polars as pl

from benchmark_platform.analysis.matrix import DEFAULT_B, ScoreMatrix, bootstrap_replicates, percentile_ci


def leaderboard(matrix: ScoreMatrix, *, B: int = DEFAULT_B, seed: int) -> pl.DataFrame:
    """rank, model, accuracy, ci_low, ci_high, n_items, missing, unparsed_answers; best first (ties share the rank)."""
    rng = np.random.default_rng(seed)
    accuracy = matrix.accuracy()
    low, high = percentile_ci(bootstrap_replicates(matrix.scores, B, rng))
    frame = pl.DataFrame(
        {
            "model": list(matrix.models),
            "accuracy": accuracy,
            "ci_low": low,
            "ci_high": high,
            "n_items": matrix.n_items,
            "missing": list(matrix.missing().values()),
            "unparsed_answers": matrix.unparsed_answers(),
        }
    ).sort(["accuracy", "model"], descending=[True, False])
    return frame.select(pl.col("accuracy").rank("min", descending=True).cast(pl.Int32).alias("rank"), pl.all())


def group_accuracy(matrix: ScoreMatrix, column: str, *, B: int = DEFAULT_B, seed: int) -> pl.DataFrame:
    """Long table: model, group, n_items, accuracy, ci_low, ci_high, unparsed_answers; items resampled within
    each group."""
    rng = np.random.default_rng(seed)
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
                }
            )
        )
    return pl.concat(frames).sort("model", "group")


def wide(table: pl.DataFrame, *, value: str = "accuracy", row: str = "model", column: str = "group") -> pl.DataFrame:
    """A long table pivoted to one row per `row` and one column per `column` value."""
    return table.pivot(on=column, index=row, values=value, sort_columns=True)
