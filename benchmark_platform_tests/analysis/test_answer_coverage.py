"""Issue 31: missing answers are not wrong answers (answered / missing / unparsed, accuracy over answered items, the
ranking rule, n/a heat-map cells), and the post-evaluation audit's key-error suspects."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from benchmark_platform.analysis.accuracy import covered, group_accuracy, leaderboard
from benchmark_platform.analysis.config import AnalysisConfig, SuspectConfig
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.statistics import ConfigInfo, analyse
from benchmark_platform.analysis.suspects import NEGATIVE, NONE_CORRECT, point_biserials, suspect_items


def _results(rows: list[tuple[str, str, str, bool, bool]]) -> pl.DataFrame:
    """(model, item, discipline, correct, parsed) -> a results frame (one sample each)."""
    return pl.DataFrame(
        [
            {
                "model": m,
                "item_id": i,
                "discipline": d,
                "sample": 0,
                "prediction": ("A" if c else "B") if parsed else None,
                "correct": c,
            }
            for m, i, d, c, parsed in rows
        ]
    )


@pytest.fixture
def gappy() -> tuple[pl.DataFrame, pl.DataFrame]:
    """20 chemistry and 20 history items; `full` answers all (chemistry 10 right, history 15, one unparsed answer);
    `gappy` answers 4 chemistry items (all right) and every history item (15 right)."""
    items = pl.DataFrame(
        {
            "item_id": [f"c{i:02d}" for i in range(20)] + [f"h{i:02d}" for i in range(20)],
            "discipline": ["chemistry"] * 20 + ["history"] * 20,
        }
    )
    rows = []
    for i in range(20):
        rows.append(("full", f"c{i:02d}", "chemistry", i < 10, i != 19))
        rows.append(("full", f"h{i:02d}", "history", i < 15, True))
        if i < 4:
            rows.append(("gappy", f"c{i:02d}", "chemistry", True, True))
        rows.append(("gappy", f"h{i:02d}", "history", i < 15, True))
    return _results(rows), items


def test_missing_answers_are_counted_apart_from_wrong_and_unparsed(gappy: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    results, items = gappy
    matrix = ScoreMatrix.from_results(results, items)
    board = {r["model"]: r for r in leaderboard(matrix, B=200, seed=1).iter_rows(named=True)}
    full, gap = board["full"], board["gappy"]
    assert (full["answered"], full["missing"], full["unparsed"], full["unparsed_answers"]) == (40, 0, 1, 1)
    assert (gap["answered"], gap["missing"], gap["unparsed"]) == (24, 16, 0)
    # strict accuracy counts the 16 missing items as wrong; the accuracy over answered items does not
    assert gap["accuracy"] == pytest.approx(100 * 19 / 40) and gap["answered_accuracy"] == pytest.approx(100 * 19 / 24)
    # an unparsed answer stays wrong (it was answered): full's accuracy is the same either way
    assert full["accuracy"] == full["answered_accuracy"] == pytest.approx(100 * 25 / 40)
    assert (full["ci_low"], full["ci_high"]) == (full["answered_ci_low"], full["answered_ci_high"])  # paired draws
    assert gap["answered_ci_low"] < gap["answered_accuracy"] < gap["answered_ci_high"]
    # ranked by accuracy over answered items (24 of 40 answered >= 50%)
    assert (gap["rank"], full["rank"]) == (1, 2)
    # under a 70% rule the gappy model is listed unranked, after the ranked ones
    strict = leaderboard(matrix, B=50, seed=1, min_answered_share=0.7)
    assert strict["model"].to_list() == ["full", "gappy"] and strict["rank"].to_list() == [1, None]


def test_per_discipline_cells_and_the_heat_map_threshold(gappy: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    results, items = gappy
    table = group_accuracy(ScoreMatrix.from_results(results, items), "discipline", B=100, seed=2)
    cell = table.filter(model="gappy", group="chemistry").row(0, named=True)
    assert (cell["n_items"], cell["answered"], cell["missing"], cell["accuracy"]) == (20, 4, 16, 20.0)
    assert cell["answered_accuracy"] == 100.0
    # 4 of 20 answered is under half: the heat map draws n/a there, not a colour of 20%
    shown = covered(table["answered"].to_numpy(), table["n_items"].to_numpy(), 0.5)
    assert dict(zip(zip(table["model"], table["group"], strict=True), shown.tolist(), strict=True)) == {
        ("full", "chemistry"): True,
        ("full", "history"): True,
        ("gappy", "chemistry"): False,
        ("gappy", "history"): True,
    }
    # the guard: exactly half answered is covered whatever the float rounding of 0.5 * n
    assert covered(np.array([449, 448, 0]), np.array([898, 898, 0]), 0.5).tolist() == [True, False, False]


def test_analyse_draws_na_cells_and_reports_suspects(gappy: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    results, items = gappy
    configs = {"full": ConfigInfo("model"), "gappy": ConfigInfo("model")}
    settings = AnalysisConfig(bootstrap_samples=50)
    report = analyse(results, items, configs, settings, seed=1)
    overall = report.accuracy.filter(grouping="overall")
    assert {"answered", "missing", "unparsed", "answered_accuracy", "pool_accuracy"} <= set(overall.columns)
    # the n/a cell changes the picture: the same data with every cell shown draws another image
    everything = analyse(results, items, configs, settings.model_copy(update={"min_answered_share": 0.1}), seed=1)
    assert report.plots["accuracy_by_discipline"] != everything.plots["accuracy_by_discipline"]
    assert report.plots["accuracy_by_discipline"][:8] == b"\x89PNG\r\n\x1a\n"
    assert "suspect_items" in report.tables  # two models are under the minimum of 5: nothing is judged
    assert report.tables["suspect_items"].height == 0


def test_suspects_no_model_correct_and_negative_point_biserial() -> None:
    """Eight models of rising skill on 40 ordinary items (a model of skill s gets items below s right); item `key`
    is answered right only by the three weakest (a mis-keyed item's signature), item `none` by nobody, item `few` by
    three models only (under the minimum), item `ok` by the strongest half."""
    models = [f"m{k}" for k in range(8)]
    rows = []
    for k, m in enumerate(models):
        for i in range(40):
            rows.append((m, f"n{i:02d}", "physics", i < 12 + 4 * k, True))
        rows.append((m, "key", "physics", k < 3, True))
        rows.append((m, "none", "physics", False, True))
        rows.append((m, "ok", "physics", k >= 4, True))
        if k < 3:
            rows.append((m, "few", "physics", k == 0, True))
    matrix = ScoreMatrix.from_results(_results(rows))
    table = suspect_items(matrix, models, SuspectConfig(min_models=5))
    found = {r["item_id"]: r for r in table.iter_rows(named=True)}
    assert set(found) == {"key", "none"}
    assert found["none"]["reason"] == NONE_CORRECT and found["none"]["models_answering"] == 8
    assert found["none"]["point_biserial"] is None and found["none"]["share_correct"] == 0.0
    key = found["key"]
    assert key["reason"] == NEGATIVE and key["models_correct"] == 3 and key["point_biserial"] < -0.7
    assert key["share_correct"] == pytest.approx(3 / 8)
    # leave-one-out skill: the item itself does not enter the skill it is correlated with
    r = point_biserials(matrix.scores, matrix.answered)
    ok = matrix.items["item_id"].to_list().index("ok")
    assert r[ok] > 0.7
    # the spec may ask for more answering models: then nothing is judged
    assert suspect_items(matrix, models, SuspectConfig(min_models=9)).height == 0
