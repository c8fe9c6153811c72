"""release.digest: what a release is (items per discipline, leaderboard) and the first difference, named."""

from __future__ import annotations

import json

import polars as pl
import pytest

from benchmark_platform.release.digest import DigestError, first_difference, release_digest


def _release(tmp_path, items: dict[str, list[str]], accuracy: float):
    (tmp_path / "data").mkdir(parents=True)
    (tmp_path / "spec.json").write_text(json.dumps({"name": "demo", "release": {"version": "v1"}}))
    rows = [(i, d) for d, ids in items.items() for i in ids]
    pl.DataFrame(rows, schema=["item_id", "discipline"], orient="row").write_parquet(
        tmp_path / "data" / "items.parquet"
    )
    pl.DataFrame({"model": ["m"], "accuracy": [accuracy], "rank": [1]}).write_parquet(
        tmp_path / "data" / "leaderboard.parquet"
    )
    return tmp_path


def test_digest_names_the_first_differing_discipline_and_ignores_last_bits(tmp_path):
    base = release_digest(_release(tmp_path / "a", {"b": ["b2", "b1"], "a": ["a1"]}, 70.4123456789))
    assert base["disciplines"] == {"a": ["a1"], "b": ["b1", "b2"]} and base["items"] == 3
    assert base["leaderboard"] == {"columns": ["model", "accuracy", "rank"], "rows": [["m", 70.412346, 1]]}
    same = release_digest(_release(tmp_path / "b", {"a": ["a1"], "b": ["b1", "b2"]}, 70.4123456789 + 1e-13))
    assert first_difference(base, same) is None
    other = release_digest(_release(tmp_path / "c", {"a": ["a1"], "b": ["b1", "b3"]}, 70.4123456789))
    assert first_difference(base, other) == (
        "discipline 'b': 2 items (expected 2), 1 missing (first ['b2']), 1 not in the digest (first ['b3'])"
    )
    board = release_digest(_release(tmp_path / "d", {"a": ["a1"], "b": ["b1", "b2"]}, 69.9))
    assert first_difference(base, board) == "leaderboard row 1: ['m', 69.9, 1] instead of ['m', 70.412346, 1]"
    with pytest.raises(DigestError, match="not a readable release"):
        release_digest(tmp_path / "missing")
