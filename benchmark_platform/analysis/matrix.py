"""The items x models score matrix every analysis works on, and the bootstrap draws they share.

A cell is the mean correctness of a model on an item over its avg@k samples. Items a model did not
answer count as wrong (score 0), as the MMLU-Pro leaderboard counts them; `answered` marks the
cells that were answered, for analyses that compare models on common items; `unparsed` counts the
answers (samples) of each cell from which no option was extracted, which score 0 like a wrong one, so
a reader can tell a model that answers wrongly from one whose answers the parser could not read.
All analyses report accuracies and gaps in percentage points.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from benchmark_platform.evaluation.results import validate_results
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


def bootstrap_replicates(scores: np.ndarray, B: int, rng: np.random.Generator) -> np.ndarray:
    """B bootstrap replications of the column means (in %), shape (B, n_columns).

    Rows are resampled with replacement, as per-row counts so that a block of replications is one
    matrix product; the same draws serve every column, so differences between columns are paired.
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
            blocks.append(counts @ scores * (PERCENT / n))
    return np.concatenate(blocks)


def percentile_ci(replicates: np.ndarray, level: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    tail = (1 - level) / 2 * PERCENT
    return np.percentile(replicates, tail, axis=0), np.percentile(replicates, PERCENT - tail, axis=0)
