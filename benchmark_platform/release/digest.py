"""What a release *is*, machine-independently (issue 30): the sorted item ids per discipline and the leaderboard.

A bundled spec commits the digest of the release it builds as `specs/<name>/release_digest.json`. The suite (the
wine pipeline test) and `benchmark-platform release rebuild` compare a built release with it, so a machine that
builds a different release fails with the first differing discipline named. No run ids, times or paths enter it.
After a change that legitimately changes a release (items, leaderboard columns), regenerate it with
`benchmark-platform release digest --spec NAME --write` (after a `run` that built that release).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

DIGEST_FILE = "release_digest.json"
LEADERBOARD_DECIMALS = 6  # reported figures: a last-bit difference must not count as another release


class DigestError(ValueError):
    """A release folder whose digest cannot be read (missing or unreadable files)."""


def release_digest(directory: Path) -> dict[str, Any]:
    """The digest of the release in `directory` (its spec.json, data/items.parquet and data/leaderboard.parquet)."""
    try:
        spec = json.loads((directory / "spec.json").read_text(encoding="utf-8"))
        items = pl.read_parquet(directory / "data" / "items.parquet", columns=["item_id", "discipline"])
        board = pl.read_parquet(directory / "data" / "leaderboard.parquet")
    except (OSError, ValueError, pl.exceptions.PolarsError) as exc:
        raise DigestError(f"{directory}: not a readable release ({exc})") from None
    disciplines = {
        discipline: sorted(items.filter(pl.col("discipline") == discipline)["item_id"].to_list())
        for discipline in sorted(set(items["discipline"].to_list()))
    }
    rounded = board.with_columns(pl.col(pl.Float32, pl.Float64).round(LEADERBOARD_DECIMALS))
    digest = {
        "spec": spec["name"],
        "version": spec["release"]["version"],
        "regenerate": f"benchmark-platform release digest --spec {spec['name']} --write",
        "items": items.height,
        "disciplines": disciplines,
        "leaderboard": {"columns": rounded.columns, "rows": [list(row) for row in rounded.rows()]},
    }
    normalised: dict[str, Any] = json.loads(digest_bytes(digest))  # as the committed file reads back
    return normalised


def digest_bytes(digest: dict[str, Any]) -> bytes:
    return (json.dumps(digest, indent=1, ensure_ascii=False) + "\n").encode()


def committed_digest(spec_directory: Path) -> dict[str, Any] | None:
    """The digest committed next to a spec (None when it has none)."""
    path = spec_directory / DIGEST_FILE
    if not path.is_file():
        return None
    value: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return value


def first_difference(expected: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """What first differs between two digests, naming the discipline (or the leaderboard row); None when equal."""
    for key in ("spec", "version"):
        if expected[key] != actual[key]:
            return f"{key}: {actual[key]!r} instead of {expected[key]!r}"
    want, got = expected["disciplines"], actual["disciplines"]
    for discipline in sorted(set(want) | set(got)):
        if discipline not in got:
            return f"discipline {discipline!r}: no items (expected {len(want[discipline])})"
        if discipline not in want:
            return f"discipline {discipline!r}: {len(got[discipline])} items where the digest has none"
        if want[discipline] != got[discipline]:
            missing = sorted(set(want[discipline]) - set(got[discipline]))
            extra = sorted(set(got[discipline]) - set(want[discipline]))
            return (
                f"discipline {discipline!r}: {len(got[discipline])} items (expected {len(want[discipline])}), "
                f"{len(missing)} missing (first {missing[:1]}), {len(extra)} not in the digest (first {extra[:1]})"
            )
    board, board_got = expected["leaderboard"], actual["leaderboard"]
    if board["columns"] != board_got["columns"]:
        return f"leaderboard columns {board_got['columns']} instead of {board['columns']}"
    for rank, (row, row_got) in enumerate(zip(board["rows"], board_got["rows"], strict=False), start=1):
        if row != row_got:
            return f"leaderboard row {rank}: {row_got} instead of {row}"
    if len(board["rows"]) != len(board_got["rows"]):
        return f"leaderboard: {len(board_got['rows'])} rows instead of {len(board['rows'])}"
    return None
