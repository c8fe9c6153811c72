"""The statistics on constructed data whose answer is known."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy.stats import kendalltau

from benchmark_platform.analysis.accuracy import group_accuracy, leaderboard, wide
from benchmark_platform.analysis.config import AnalysisConfig
from benchmark_platform.analysis.frontier import cost_frontier
from benchmark_platform.analysis.gaps import family_matrix, paired_deltas, self_preference, slice_gap
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.plots import distribution_png, frontier_png, heatmap_png
from benchmark_platform.analysis.stability import (
    kendall_tau_b,
    pairwise_resolvability,
    ranking_stability,
    subsample_accuracies,
    tiers,
)
from benchmark_platform.analysis.statistics import ConfigInfo, analyse


def matrix_of(scores: np.ndarray, models: list[str], **attributes: list[str]) -> ScoreMatrix:
    items = pl.DataFrame({"item_id": [f"i{i}" for i in range(scores.shape[0])], **attributes})
    return ScoreMatrix(tuple(models), items, scores.astype(float), np.ones(scores.shape, dtype=bool))


def results_of(rows: list[tuple[str, str, int, bool]]) -> pl.DataFrame:
    return pl.DataFrame(
        [
            {"model": m, "item_id": i, "discipline": "d", "sample": s, "prediction": "A" if c else "B", "correct": c}
            for m, i, s, c in rows
        ]
    )


def test_score_matrix_averages_samples_and_counts_missing_as_wrong() -> None:
    results = results_of([("a", "x", 0, True), ("a", "x", 1, False), ("a", "y", 0, True), ("b", "x", 0, True)])
    matrix = ScoreMatrix.from_results(results)
    assert matrix.models == ("a", "b") and matrix.items["item_id"].to_list() == ["x", "y"]
    assert matrix.scores.tolist() == [[0.5, 1.0], [1.0, 0.0]]
    assert matrix.missing() == {"a": 0, "b": 1}
    with pytest.raises(ValueError, match="results for items outside the item table"):
        ScoreMatrix.from_results(results, pl.DataFrame({"item_id": ["x"], "discipline": ["d"]}))


def test_leaderboard_ci_is_seeded_and_covers_the_estimate() -> None:
    rng = np.random.default_rng(0)
    matrix = matrix_of(rng.random((400, 3)) < [0.8, 0.5, 0.5], ["strong", "mid", "mid2"], discipline=["d"] * 400)
    board = leaderboard(matrix, B=500, seed=1)
    assert board["model"][0] == "strong" and board["rank"][0] == 1
    assert (board["ci_low"] < board["accuracy"]).all() and (board["accuracy"] < board["ci_high"]).all()
    width = (board["ci_high"] - board["ci_low"])[0]
    assert width == pytest.approx(2 * 1.96 * np.sqrt(0.8 * 0.2 / 400) * 100, rel=0.2)
    assert board.equals(leaderboard(matrix, B=500, seed=1))


def test_group_accuracy_resamples_within_groups() -> None:
    scores = np.array([[1], [1], [0], [0], [1], [0]])
    matrix = matrix_of(scores, ["m"], discipline=["a", "a", "a", "b", "b", "b"])
    table = group_accuracy(matrix, "discipline", B=200, seed=0)
    assert table.select("group", "n_items").rows() == [("a", 3), ("b", 3)]
    assert table["accuracy"].to_list() == pytest.approx([200 / 3, 100 / 3])
    assert wide(table).columns == ["model", "a", "b"]


def test_kendall_tau_b_matches_scipy_with_ties() -> None:
    rng = np.random.default_rng(3)
    reference = np.array([9.0, 8, 8, 7, 6, 5, 4, 3, 2, 1])
    replicates = rng.integers(0, 5, size=(50, 10)).astype(float)
    ours = kendall_tau_b(reference, replicates)
    expected = [kendalltau(reference, row).statistic for row in replicates]
    np.testing.assert_allclose(ours, expected)


def test_stratified_subsamples_take_exact_shares_without_replacement() -> None:
    strata = np.array(["a"] * 10 + ["b"] * 30)
    scores = np.column_stack([strata == "a", strata == "b", np.ones(40)]).astype(float)
    sub = subsample_accuracies(scores, strata, 0.5, 100, np.random.default_rng(0))
    np.testing.assert_allclose(sub, np.tile([100 * 5 / 20, 100 * 15 / 20, 100.0], (100, 1)))
    sub = subsample_accuracies(np.eye(40), strata, 0.7, 200, np.random.default_rng(0))
    assert set(np.unique(sub * 28 / 100).round(9)) == {0.0, 1.0}  # each item at most once


def test_ranking_stability_of_separated_and_of_identical_models() -> None:
    rng = np.random.default_rng(5)
    strata = ["s1", "s2"] * 300
    separated = matrix_of(
        rng.random((600, 12)) < np.linspace(0.95, 0.05, 12), [f"m{j:02d}" for j in range(12)], discipline=strata
    )
    table = ranking_stability(separated, B=200, seed=0)
    assert table["rho"].to_list() == [0.5, 0.7, 0.9] and table["subsample_items"].to_list() == [300, 420, 540]
    assert min(table["kendall_tau"]) > 0.99 and table["rank1_retention"].to_list() == [1.0] * 3
    identical = matrix_of(rng.random((600, 12)) < 0.5, [f"m{j:02d}" for j in range(12)], discipline=strata)
    noisy = ranking_stability(identical, B=200, seed=0, rates=(0.5,))
    assert noisy["kendall_tau"][0] < 0.6 and noisy["rank1_retention"][0] < 0.6


def test_pairwise_resolvability_and_tiers() -> None:
    rng = np.random.default_rng(11)
    scores = rng.random((2000, 5)) < [0.80, 0.80, 0.60, 0.40, 0.40]
    matrix = matrix_of(scores, ["a", "a2", "b", "c", "c2"], discipline=["d"] * 2000)
    pairs = pairwise_resolvability(matrix, B=400, seed=2)
    assert pairs.height == 10
    resolvable = {frozenset((r["better"], r["worse"])): r["resolvable"] for r in pairs.iter_rows(named=True)}
    assert not resolvable[frozenset(("a", "a2"))] and not resolvable[frozenset(("c", "c2"))]
    assert resolvable[frozenset(("a2", "b"))] and resolvable[frozenset(("b", "c"))]
    assert dict(tiers(pairs).select("model", "tier").iter_rows()) == {"a": 1, "a2": 1, "b": 2, "c": 3, "c2": 3}


def test_paired_deltas_on_common_items_per_group() -> None:
    rng = np.random.default_rng(2)
    control = rng.random(1000) < 0.6
    lifted = control | (rng.random(1000) < 0.25)
    scores = np.column_stack([lifted, control, control]).astype(float)
    answered = np.ones(scores.shape, dtype=bool)
    answered[:100, 0] = False  # the thinking run skipped 100 items: compared on the other 900 only
    items = pl.DataFrame({"item_id": [f"i{i}" for i in range(1000)], "difficulty": ["L1", "L4"] * 500})
    matrix = ScoreMatrix(("think", "std", "std-copy"), items, scores, answered)
    table = paired_deltas(matrix, [("think", "std"), ("std-copy", "std")], by="difficulty", B=500, seed=0)
    lift = table.filter(pl.col("treatment") == "think", pl.col("group") == "(all)").row(0, named=True)
    assert lift["n_items"] == 900 and lift["excludes_zero"] and lift["ci_low"] > 5
    assert lift["delta"] == pytest.approx((lifted[100:].mean() - control[100:].mean()) * 100)
    copy = table.filter(pl.col("treatment") == "std-copy", pl.col("group") == "(all)").row(0, named=True)
    assert copy["delta"] == 0 and not copy["excludes_zero"]
    assert table.filter(pl.col("treatment") == "think")["group"].to_list() == ["(all)", "L1", "L4"]


def test_closed_book_slice_gap_with_mean_row() -> None:
    rng = np.random.default_rng(4)
    closed = np.array(["true"] * 300 + ["false"] * 300)
    p = np.where(closed == "true", 0.9, 0.5)
    scores = np.column_stack([rng.random(600) < p, rng.random(600) < p - 0.1])
    matrix = matrix_of(scores, ["m1", "m2"], closed_book=list(closed))
    table = slice_gap(matrix, "closed_book", B=400, seed=0)
    assert table["model"].to_list() == ["m1", "m2", "(mean over models)"]
    assert table.select("n_a", "n_b").unique().rows() == [(300, 300)]
    gaps = [(s[:300].mean() - s[300:].mean()) * 100 for s in scores.T]
    assert table["excludes_zero"].all() and table["gap"].to_list() == pytest.approx([*gaps, np.mean(gaps)])


def test_self_preference_score_and_family_matrix() -> None:
    rng = np.random.default_rng(8)
    generator = np.array(["anthropic"] * 400 + ["google"] * 400 + [None] * 200)
    easy_for_own = np.column_stack(
        [
            rng.random(1000) < np.where(generator == "anthropic", 0.9, 0.7),  # claude: +20 on its own family's items
            rng.random(1000) < 0.7,  # gemini: no preference
            rng.random(1000) < 0.7,  # deepseek: its family generated nothing
        ]
    )
    matrix = matrix_of(easy_for_own, ["claude", "gemini", "deepseek"], generator_family=list(generator))
    families = {"claude": "anthropic", "gemini": "google", "deepseek": "deepseek"}
    sps = self_preference(matrix, families, B=400, seed=0)
    assert sps["model"].to_list() == ["claude", "gemini"]  # no own-family items: left out, as OenoBench does
    claude, gemini = sps.row(0, named=True), sps.row(1, named=True)
    assert (claude["n_own"], claude["n_other"]) == (400, 400)  # template items (no generator) in neither pool
    assert claude["excludes_zero"] and claude["sps"] > 10 and not gemini["excludes_zero"]
    grid = family_matrix(matrix, families)
    anthropic = grid.filter(pl.col("evaluator_family") == "anthropic")
    assert anthropic["generator_family"].to_list() == ["anthropic", "google"]
    assert grid.height == 6


def test_cost_frontier_labels_pareto_set_and_convex_hull_apart() -> None:
    # OenoBench 5.4 / Figure 4: five configurations on its Pareto frontier; Gemini 2.5 Pro and GPT-5 dominated.
    points = pl.DataFrame(
        {
            "model": [
                "llama-3.1-8b",
                "gemini-2.5-flash",
                "gpt-5-mini",
                "claude-opus-4.7",
                "o3",
                "gemini-2.5-pro",
                "gpt-5",
            ],
            "cost_usd": [0.01, 0.12, 2.82, 3.35, 11.80, 29.47, 21.90],
            "accuracy": [60.5, 75.1, 78.4, 81.0, 83.6, 82.9, 82.7],
        }
    )
    frontier = cost_frontier(points)
    assert frontier["model"].to_list()[0] == "llama-3.1-8b"
    pareto = {"llama-3.1-8b", "gemini-2.5-flash", "gpt-5-mini", "claude-opus-4.7", "o3"}
    assert set(frontier.filter("pareto")["model"]) == pareto
    # On log cost, GPT-5-mini and Opus lie below the chord from Flash to o3: efficient, but not on the hull.
    assert set(frontier.filter("hull")["model"]) == {"llama-3.1-8b", "gemini-2.5-flash", "o3"}
    with pytest.raises(ValueError, match="positive cost"):
        cost_frontier(points.with_columns(cost_usd=pl.lit(0.0)))


def test_plots_are_png_and_byte_reproducible() -> None:
    table = pl.DataFrame({"model": ["a", "b"], "x": [50.0, 60.0], "y": [70.0, None]})
    first, again = heatmap_png(table, title="t"), heatmap_png(table, title="t")
    assert first.startswith(b"\x89PNG\r\n\x1a\n") and first == again
    assert b"Software" not in first and b"tIME" not in first
    frontier = cost_frontier(pl.DataFrame({"model": ["a", "b"], "cost_usd": [1.0, 10.0], "accuracy": [50.0, 60.0]}))
    assert frontier_png(frontier, title="f") == frontier_png(frontier, title="f")
    long = pl.DataFrame({"model": ["a", "a", "b", "b"], "group": ["x", "y"] * 2, "accuracy": [1.0, 2.0, 3.0, 4.0]})
    assert distribution_png(long, ["b", "a"], title="d").startswith(b"\x89PNG")


def test_analyse_runs_every_analysis_the_data_allows() -> None:
    rng = np.random.default_rng(9)
    n = 240
    leaves = [f"leaf{i % 8}" for i in range(n)]
    items = pl.DataFrame(
        {
            "item_id": [f"i{i:03d}" for i in range(n)],
            "discipline": leaves,
            "level_1": ["Science" if int(leaf[-1]) < 4 else "Humanities" for leaf in leaves],
            "level_2": [f"field{int(leaf[-1]) // 2}" for leaf in leaves],
            "difficulty": [["L1", "L2", "L3", "L4"][i % 4] for i in range(n)],
            "strategy": [None] * n,
            "generator_family": [["acme", "other", None][i % 3] for i in range(n)],
            "closed_book": [["true", "false"][i % 2] for i in range(n)],
        }
    )
    skill = {"acme-8b": 0.5, "acme-70b": 0.7, "acme-70b-think": 0.75, "acme-70b-web": 0.8, "other-1b": 0.3}
    results = pl.DataFrame(
        [
            {
                "model": m,
                "item_id": f"i{i:03d}",
                "discipline": leaves[i],
                "sample": 0,
                "prediction": "A",
                "correct": bool(rng.random() < p),
            }
            for m, p in skill.items()
            for i in range(n)
        ]
    ).with_columns(prediction=pl.when("correct").then(pl.lit("A")).otherwise(pl.lit("B")))
    configs = {
        "acme-8b": ConfigInfo("model", family="acme", params_b=8, cost_usd=0.2),
        "acme-70b": ConfigInfo("model", family="acme", params_b=70, cost_usd=1.0),
        "acme-70b-think": ConfigInfo("model", family="acme", reasoning_of="acme-70b", cost_usd=4.0),
        "acme-70b-web": ConfigInfo("model", family="acme", tool_use_of="acme-70b", cost_usd=3.0),
        "other-1b": ConfigInfo("imported", family="other"),
    }
    report = analyse(results, items, configs, AnalysisConfig(bootstrap_samples=200), seed=3)
    assert set(report.accuracy["grouping"]) == {"overall", "discipline", "level_1", "level_2", "difficulty"}
    assert set(report.tables) == {
        "ranking_stability",
        "pairwise_resolvability",
        "tiers",
        "discrimination",
        "self_preference",
        "family_matrix",
        "reasoning_lift",
        "tool_use",
        "closed_book",
        "cost_frontier",
        "scaling",
        "suspect_items",
    }
    assert set(report.plots) == {"accuracy_by_level_1", "score_distribution", "cost_frontier"}
    assert report.tables["discrimination"]["group"].to_list() == ["Humanities", "Science"]  # the coarsest level
    assert report.tables["ranking_stability"]["subsample_items"].to_list() == [120, 168, 216]
    assert report.tables["cost_frontier"].height == 4  # the imported run has no cost
    assert report.tables["scaling"].row(0, named=True)["n_models"] == 2
    assert report.tables["reasoning_lift"]["group"].to_list() == ["(all)", "L1", "L2", "L3", "L4"]
