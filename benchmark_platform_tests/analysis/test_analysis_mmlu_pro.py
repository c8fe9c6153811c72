"""The analyses on real data: MMLU-Pro's 29 models x 12,032 items (../shared/data/mmlu_pro_outputs)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from benchmark_platform.analysis.accuracy import group_accuracy, leaderboard
from benchmark_platform.analysis.discrimination import discrimination_indices
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.stability import pairwise_resolvability, ranking_stability, tiers
from benchmark_platform.evaluation.importers import read_mmlu_pro_items, read_mmlu_pro_matrices

B = 200  # enough for these assertions; the benchmark runs B = 1,000


@pytest.fixture(scope="module")
def matrix(shared_data: Path) -> ScoreMatrix:
    folder = shared_data / "mmlu_pro_outputs"
    items = read_mmlu_pro_items(folder).select("item_id", "discipline")
    return ScoreMatrix.from_results(read_mmlu_pro_matrices(folder), items)


def test_leaderboard(matrix: ScoreMatrix) -> None:
    board = leaderboard(matrix, B=B, seed=1)
    assert board.height == 29 and board["rank"].to_list() == list(range(1, 30))
    top = board.row(0, named=True)
    assert top["model"] == "gemini-1.5-pro-002" and top["accuracy"] == pytest.approx(70.04, abs=0.005)
    assert top["missing"] == 12 and top["ci_high"] - top["ci_low"] < 2.0
    assert board.row(28, named=True)["model"] == "Llama-2-7b-hf"


def test_unparsed_answers_are_counted_per_model_and_category(matrix: ScoreMatrix, shared_data: Path) -> None:
    """The data's own summary (model_summary.csv, n_pred_null) is what the leaderboard reports as unparsed."""
    summary = pl.read_csv(shared_data / "mmlu_pro_outputs" / "model_summary.csv")
    expected = dict(zip(summary["model"], summary["n_pred_null"], strict=True))
    board = leaderboard(matrix, B=10, seed=1)
    assert dict(zip(board["model"], board["unparsed_answers"], strict=True)) == expected
    assert max(expected.values()) > 2000 and min(expected.values()) == 0  # base models: thousands; 9 models none
    per_category = group_accuracy(matrix, "discipline", B=10, seed=1)
    summed = per_category.group_by("model").agg(pl.col("unparsed_answers").sum())
    assert dict(summed.iter_rows()) == expected


def test_per_category_accuracy_adds_up_to_overall(matrix: ScoreMatrix) -> None:
    table = group_accuracy(matrix, "discipline", B=B, seed=1)
    assert table["group"].n_unique() == 14
    sizes = table.group_by("group").agg(pl.col("n_items").first())["n_items"]
    assert sizes.sum() == 12_032
    weighted = table.group_by("model").agg((pl.col("accuracy") * pl.col("n_items")).sum() / 12_032)
    overall = dict(zip(matrix.models, matrix.accuracy(), strict=True))
    for model, accuracy in weighted.iter_rows():
        assert accuracy == pytest.approx(overall[model])
    indices = discrimination_indices(leaderboard(matrix, B=10, seed=1), table)
    assert indices.height == 14 and np.allclose(indices["delta"], indices["max"] - indices["min"])


def test_ranking_stability_of_a_large_benchmark(matrix: ScoreMatrix) -> None:
    table = ranking_stability(matrix, B=B, seed=1)
    assert table["subsample_items"].to_list() == [6015, 8423, 10829]
    assert table["rank1_retention"].to_list() == [1.0, 1.0, 1.0]  # a 6-point lead never flips
    tau = table["kendall_tau"].to_list()
    assert 0.95 < tau[0] < tau[2] <= 1.0


def test_resolvable_gaps_and_tiers(matrix: ScoreMatrix) -> None:
    pairs = pairwise_resolvability(matrix, B=B, seed=1)
    assert pairs.height == 29 * 28 // 2
    gap = {(r["better"], r["worse"]): r for r in pairs.iter_rows(named=True)}
    assert gap[("gemini-1.5-pro-002", "gemini-1.5-flash-002")]["resolvable"]
    assert not gap[("Meta-Llama-3_1-70B", "Meta-Llama-3-70B")]["resolvable"]  # 0.45 points apart
    assert pairs.filter(pl.col("gap") > 1.5)["resolvable"].all()
    tiered = tiers(pairs)
    assert tiered["tier"].is_sorted() and tiered["tier"].max() < 29
