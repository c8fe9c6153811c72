"""Every analysis of a benchmark's evaluation, as one pure function of its answers and item attributes.

Item attributes used when present: `discipline` (the partition, a taxonomy leaf), `level_1`, `level_2`, ...
(the leaf's taxonomy ancestors, coarsest first), `difficulty`, `strategy`, `generator_family`, and
`closed_book` ("true"/"false").
The coarsest taxonomy level that splits the items is the one KINA calls discipline: the strata of ranking
stability, the columns of the heatmap and of the discrimination indices.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from benchmark_platform.analysis.accuracy import covered, group_accuracy, leaderboard, wide
from benchmark_platform.analysis.config import AnalysisConfig
from benchmark_platform.analysis.discrimination import discrimination_indices
from benchmark_platform.analysis.frontier import cost_frontier, scaling_slopes
from benchmark_platform.analysis.gaps import family_matrix, paired_deltas, self_preference, slice_gap
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.plots import distribution_png, frontier_png, heatmap_png
from benchmark_platform.analysis.stability import pairwise_resolvability, ranking_stability, tiers
from benchmark_platform.analysis.suspects import suspect_items

OVERALL = "overall"
# issue 31: how much of each row was answered, the accuracy over the answered items, and (overall rows of a bank
# spec) the bank-level estimate from analysis/irt.py, filled by the stage
ACCURACY_COVERAGE = (
    "answered",
    "missing",
    "unparsed",
    "answered_accuracy",
    "answered_ci_low",
    "answered_ci_high",
    "pool_accuracy",
    "pool_ci_low",
    "pool_ci_high",
)
_POOL = ("pool_accuracy", "pool_ci_low", "pool_ci_high")
# every column of an accuracy table, in the order `analysis_accuracy` stores them
ACCURACY_SCHEMA = {
    "grouping": pl.String,
    "group_value": pl.String,
    "model": pl.String,
    "n_items": pl.Int64,
    "accuracy": pl.Float64,
    "ci_low": pl.Float64,
    "ci_high": pl.Float64,
    "rank": pl.Int64,
    "unparsed_answers": pl.Int64,
    **{c: pl.Float64 if c.endswith(("accuracy", "ci_low", "ci_high")) else pl.Int64 for c in ACCURACY_COVERAGE},
}


@dataclass(frozen=True)
class ConfigInfo:
    """An evaluated configuration as the analyses see it (from its evaluation run's settings)."""

    kind: str  # baseline | model | imported
    family: str | None = None
    reasoning_of: str | None = None
    tool_use_of: str | None = None
    params_b: float | None = None
    cost_usd: float = 0.0  # total evaluation cost


@dataclass
class AnalysisReport:
    # the columns of ACCURACY_SCHEMA
    accuracy: pl.DataFrame
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)
    plots: dict[str, bytes] = field(default_factory=dict)


def coverage_heatmap(board: pl.DataFrame, by_group: pl.DataFrame, level: str, min_share: float) -> bytes:
    """Accuracy over the answered items per model (leaderboard order) and group; a cell with less than `min_share`
    of its items answered is n/a, one with some missing is starred."""
    cells = by_group.with_columns(
        unavailable=pl.Series(~covered(by_group["answered"].to_numpy(), by_group["n_items"].to_numpy(), min_share)),
        partial=pl.col("missing") > 0,
    )
    order = board.select("model")

    def pivot(value: str) -> pl.DataFrame:
        return order.join(wide(cells, value=value), on="model", how="left", maintain_order="left")

    return heatmap_png(
        pivot("answered_accuracy"),
        title=f"Accuracy (%) over answered items by {level}",
        unavailable=pivot("unavailable"),
        partial=pivot("partial"),
        note=f"n/a: under {min_share:.0%} of the items answered; *: accuracy over the answered items only "
        "(some missing); unanswered items are not counted wrong here",
    )


def _splits(items: pl.DataFrame, column: str) -> bool:
    return column in items.columns and items[column].drop_nulls().n_unique() > 1


def analyse(
    results: pl.DataFrame, items: pl.DataFrame, configs: dict[str, ConfigInfo], settings: AnalysisConfig, *, seed: int
) -> AnalysisReport:
    matrix = ScoreMatrix.from_results(results, items)
    B = settings.bootstrap_samples
    board = leaderboard(matrix, B=B, seed=seed, min_answered_share=settings.min_answered_share)
    levels = sorted(c for c in items.columns if c.startswith("level_"))
    top_level = next((c for c in levels if _splits(items, c)), "discipline")
    groupings = dict.fromkeys(["discipline", *levels, *settings.groupings])
    by_group = {
        g: group_accuracy(matrix, g, B=B, seed=seed) for g in groupings if g == "discipline" or _splits(items, g)
    }
    accuracy = pl.concat(
        [_accuracy_rows(board, OVERALL, pl.lit(""), pl.col("rank"))]
        + [_accuracy_rows(t, g, pl.col("group"), pl.lit(None, pl.Int32)) for g, t in by_group.items()]
    )
    report = AnalysisReport(accuracy)
    tables = report.tables
    order = board["model"].to_list()
    report.plots[f"accuracy_by_{top_level}"] = coverage_heatmap(
        board, by_group[top_level], top_level, settings.min_answered_share
    )
    evaluated = [m for m in matrix.models if configs.get(m, ConfigInfo("model")).kind != "baseline"]
    tables["suspect_items"] = suspect_items(matrix, evaluated, settings.suspects)

    if len(matrix.models) >= 2:
        tables["ranking_stability"] = ranking_stability(
            matrix, strata=top_level, rates=settings.stability_rates, B=B, top=settings.stability_top, seed=seed
        )
        pairs = pairwise_resolvability(matrix, B=B, seed=seed)
        tables["pairwise_resolvability"], tables["tiers"] = pairs, tiers(pairs)
        tables["discrimination"] = discrimination_indices(board, by_group[top_level], top=settings.discrimination_top)
        top = order[: settings.discrimination_top]
        report.plots["score_distribution"] = distribution_png(
            by_group[top_level], top, title=f"Accuracy per {top_level}, top {len(top)} configurations"
        )

    families = {m: c.family for m, c in configs.items() if c.family}
    if "generator_family" in items.columns and items["generator_family"].drop_nulls().len() and families:
        tables["self_preference"] = self_preference(matrix, families, B=B, seed=seed)
        tables["family_matrix"] = family_matrix(matrix, families)
    by = "difficulty" if _splits(items, "difficulty") else None
    for name, attribute in (("reasoning_lift", "reasoning_of"), ("tool_use", "tool_use_of")):
        variants = [(m, getattr(c, attribute)) for m, c in configs.items() if getattr(c, attribute) in matrix.models]
        if variants:
            tables[name] = paired_deltas(matrix, variants, by=by, B=B, seed=seed)
    if _splits(items, "closed_book"):
        tables["closed_book"] = slice_gap(matrix, "closed_book", a="true", b="false", by=by, B=B, seed=seed)

    accuracy_of = dict(board.select("model", "accuracy").iter_rows())
    costed = [(m, c.cost_usd, accuracy_of[m]) for m, c in configs.items() if c.cost_usd > 0 and m in accuracy_of]
    if costed:
        frontier = cost_frontier(pl.DataFrame(costed, schema=["model", "cost_usd", "accuracy"], orient="row"))
        tables["cost_frontier"] = frontier
        report.plots["cost_frontier"] = frontier_png(frontier, title="Cost vs accuracy")
    sized = [
        (c.family, m, c.params_b, accuracy_of[m])
        for m, c in configs.items()
        if c.family and c.params_b and m in accuracy_of
    ]
    if sized:
        tables["scaling"] = scaling_slopes(
            pl.DataFrame(sized, schema=["family", "model", "params", "accuracy"], orient="row")
        )
    return report


def _accuracy_rows(frame: pl.DataFrame, grouping: str, group_value: pl.Expr, rank: pl.Expr) -> pl.DataFrame:
    """One grouping's rows of the stored accuracy table (the overall leaderboard or one group's accuracies)."""
    return frame.select(
        grouping=pl.lit(grouping),
        group_value=group_value,
        model="model",
        n_items="n_items",
        accuracy="accuracy",
        ci_low="ci_low",
        ci_high="ci_high",
        rank=rank,
        unparsed_answers="unparsed_answers",
        **{c: c for c in ACCURACY_COVERAGE[:-3]},
        **{c: pl.lit(None, pl.Float64) for c in _POOL},
    )
