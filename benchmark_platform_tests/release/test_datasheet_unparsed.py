"""The datasheet says how many answers could not be parsed and how they were scored, from the leaderboard table."""

from __future__ import annotations

import polars as pl

from benchmark_platform.release.datasheet import ReleaseSummary


def _summary(board: pl.DataFrame) -> ReleaseSummary:
    return ReleaseSummary("s", "v1", "d", "CC0-1.0", "canary", [], {"leaderboard": board}, 0)


def test_the_note_names_the_models_with_most_unparsed_answers() -> None:
    board = pl.DataFrame(
        {
            "model": ["a", "b", "c", "random-baseline"],
            "unparsed_answers": [0, 244, 12, 0],
        }
    )
    note = _summary(board).unparsed_note()
    assert note is not None
    assert "2 of 4 configurations" in note and "most: b 244, c 12;" in note
    assert note in _summary(board).limitations()


def test_no_note_when_every_answer_parsed() -> None:
    board = pl.DataFrame({"model": ["a", "random-baseline"], "unparsed_answers": [0, 0]})
    assert _summary(board).unparsed_note() is None
    assert _summary(pl.DataFrame()).unparsed_note() is None
