"""The items x models score matrix every analysis works on, and the bootstrap draws they share.

A cell is the mean correctness of a model on an item over its avg@k samples. Items a model did not
answer score 0 in `scores` (the strict accuracy, as the MMLU-Pro leaderboard counts them); `answered`
marks the cells that were answered, for the accuracy over answered items (issue 31: a missing answer
is not a wrong one) and for analyses that compare models on common items; `unparsed` counts the
answers (samples) of each cell from which no option was extracted, which score 0 like a wrong one, so
a reader can tell a model that answers wrongly from one whose answers the parser could not read.
All analyses report accuracies and gaps in percentage points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from benchmark_platform.evaluation import validate_results
from benchmark_platform.runtime import single_threaded_blas

PERCENT = 100.0
DEFAULT_B = 1000
BOOTSTRAP_CHUNK = 250  # replications per block: bounds memory at chunk x items counts


@dataclass(frozen=True)
class ScoreMatrix:
    models: tuple[str, ...]
    items: pl.DataFrame  # item_id plus attribute columns (discipline, ...); row i = scores[i]
    scores: np.ndarray  # (n_items, n_models) float64 in [0, 1]
    answered: np.ndarray  # (n_items, n_models) bool
    unparsed: np.ndarray | None = None  # (n_items, n_models) int: samples with no extracted option

    @classmethod
    def from_results(cls, results: pl.DataFrame, items: pl.DataFrame | None = None) -> ScoreMatrix:
        """Pivot a results frame; `items` (item_id + attributes) fixes the item universe and order.

        Without `items`, the universe is every item answered by some model, with its discipline.
        """
        results = validate_results(results, "score matrix input")
        if items is None:
            items = results.group_by("item_id").agg(pl.col("discipline").first()).sort("item_id")
        if items["item_id"].is_duplicated().any():
            raise ValueError("score matrix: duplicated item_id in the item table")
        unknown = results.join(items.select("item_id"), on="item_id", how="anti")
        if unknown.height:
            raise ValueError(
                f"score matrix: {unknown.height} results for items outside the item table, "
                f"e.g. {unknown.row(0, named=True)}"
            )
        models = tuple(sorted(results["model"].unique()))
        cell = results.group_by("model", "item_id").agg(
            score=pl.col("correct").cast(pl.Float64).mean(), unparsed=pl.col("prediction").is_null().sum()
        )
        index = items.select("item_id").with_row_index("row")
        cell = cell.join(index, on="item_id").with_columns(
            col=pl.col("model").replace_strict({m: i for i, m in enumerate(models)}, return_dtype=pl.Int64)
        )
        rows, cols = cell["row"].to_numpy(), cell["col"].to_numpy()
        scores = np.zeros((items.height, len(models)))
        scores[rows, cols] = cell["score"].to_numpy()
        answered = np.zeros(scores.shape, dtype=bool)
        answered[rows, cols] = True
        unparsed = np.zeros(scores.shape, dtype=np.int64)
        unparsed[rows, cols] = cell["unparsed"].to_numpy()
        return cls(models, items, scores, answered, unparsed)

    @property
    def n_items(self) -> int:
        return int(self.scores.shape[0])

    def column(self, model: str) -> int:
        if model not in self.models:
            raise ValueError(f"score matrix: no results for model {model!r}")
        return self.models.index(model)

    def missing(self) -> dict[str, int]:
        return dict(zip(self.models, (~self.answered).sum(axis=0).tolist(), strict=True))

    def answered_items(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per model, the items on `rows` (all by default) it answered (a recorded answer, parsed or not)."""
        return np.asarray((self.answered if rows is None else self.answered[rows]).sum(axis=0))

    def unparsed_items(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per model, the answered items on `rows` with at least one answer (sample) with no extracted option."""
        if self.unparsed is None:
            return np.zeros(len(self.models), dtype=np.int64)
        return np.asarray(((self.unparsed if rows is None else self.unparsed[rows]) > 0).sum(axis=0))

    def answered_accuracy(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per model, the accuracy (%) over the items on `rows` it answered; NaN for a model that answered none."""
        scores = self.scores if rows is None else self.scores[rows]
        answered = self.answered if rows is None else self.answered[rows]
        n = answered.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.asarray(np.where(n > 0, (scores * answered).sum(axis=0) / n * PERCENT, np.nan))

    def unparsed_answers(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per model, the answers (samples) on `rows` (all items by default) with no extracted option."""
        if self.unparsed is None:
            return np.zeros(len(self.models), dtype=np.int64)
        return np.asarray((self.unparsed if rows is None else self.unparsed[rows]).sum(axis=0))

    def groups(self, column: str) -> list[tuple[str, np.ndarray]]:
        """(label, boolean row mask) per distinct value of an item attribute, sorted by label."""
        if column not in self.items.columns:
            raise ValueError(f"score matrix: no item attribute {column!r} (has {self.items.columns})")
        values = self.items[column].cast(pl.String).to_numpy()
        labels = sorted({v for v in values if v is not None})
        return [(label, values == label) for label in labels]

    def accuracy(self) -> np.ndarray:
        return np.asarray(self.scores.mean(axis=0) * PERCENT)


def bootstrap_replicates(
    scores: np.ndarray, B: int, rng: np.random.Generator, answered: np.ndarray | None = None
) -> np.ndarray:
    """B bootstrap replications of the column means (in %), shape (B, n_columns).

    Rows are resampled with replacement, as per-row counts so that a block of replications is one
    matrix product; the same draws serve every column, so differences between columns are paired.
    With `answered` (a boolean mask like `scores`), each replication is the mean over the answered rows
    it drew (a ratio estimator; NaN for a column that drew none); the same seed gives the same draws.
    """
    n = scores.shape[0]
    if n == 0:
        raise ValueError("bootstrap over an empty set of items")
    blocks = []
    with single_threaded_blas():
        for start in range(0, B, BOOTSTRAP_CHUNK):
            size = min(BOOTSTRAP_CHUNK, B - start)
            draws = rng.integers(0, n, size=(size, n)) + np.arange(size)[:, None] * n
            counts = np.bincount(draws.ravel(), minlength=size * n).reshape(size, n)
            if answered is None:
                blocks.append(counts @ scores * (PERCENT / n))
            else:
                weight = answered.astype(np.float64)
                with np.errstate(invalid="ignore", divide="ignore"):
                    blocks.append(counts @ (scores * weight) / (counts @ weight) * PERCENT)
    return np.concatenate(blocks)


def percentile_ci(replicates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column; replications that are NaN (a ratio over no answered row) are left out,
    and a column with no finite replication gets NaN."""
    tail = (1 - level) / 2 * PERCENT
    if not np.isnan(replicates).any():
        return np.percentile(replicates, tail, axis=0), np.percentile(replicates, PERCENT - tail, axis=0)
    low, high = np.full(replicates.shape[1], np.nan), np.full(replicates.shape[1], np.nan)
    for j in range(replicates.shape[1]):
        finite = replicates[:, j][np.isfinite(replicates[:, j])]
        if finite.size:
            low[j], high[j] = np.percentile(finite, tail), np.percentile(finite, PERCENT - tail)
    return low, high
