"""Analysis core: every statistic KINA and OenoBench report, as pure functions over a score matrix.

All accuracies and gaps are in percentage points; every random procedure takes an explicit seed.
"""

from benchmark_platform.analysis.accuracy import group_accuracy, leaderboard, wide
from benchmark_platform.analysis.discrimination import discrimination_indices
from benchmark_platform.analysis.frontier import cost_frontier, scaling_slopes
from benchmark_platform.analysis.gaps import family_matrix, paired_deltas, self_preference, slice_gap
from benchmark_platform.analysis.matrix import ScoreMatrix, bootstrap_replicates, percentile_ci
from benchmark_platform.analysis.plots import distribution_png, frontier_png, heatmap_png
from benchmark_platform.analysis.report import markdown_table
from benchmark_platform.analysis.stability import (
    kendall_tau_b,
    pairwise_resolvability,
    ranking_stability,
    resolvability_summary,
    subsample_accuracies,
    tiers,
)

__all__ = [
    "ScoreMatrix",
    "bootstrap_replicates",
    "cost_frontier",
    "discrimination_indices",
    "distribution_png",
    "family_matrix",
    "frontier_png",
    "group_accuracy",
    "heatmap_png",
    "kendall_tau_b",
    "leaderboard",
    "markdown_table",
    "paired_deltas",
    "pairwise_resolvability",
    "percentile_ci",
    "ranking_stability",
    "resolvability_summary",
    "scaling_slopes",
    "self_preference",
    "slice_gap",
    "subsample_accuracies",
    "tiers",
    "wide",
]
