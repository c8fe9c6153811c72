"""What the automation writes: the `disciplines` table, the instance's record of the spec's taxonomy leaves."""

from __future__ import annotations

from collections.abc import Sequence

from benchmark_platform.store import Database, insert_rows


def record_leaf(db: Database, spec: str, leaf: str, path: Sequence[str]) -> None:
    """Record (or move) one taxonomy leaf and its path from the root."""
    with db.transaction() as conn:
        insert_rows(
            conn,
            "disciplines",
            ("spec", "discipline", "path"),
            [(spec, leaf, list(path))],
            on_conflict="ON CONFLICT (spec, discipline) DO UPDATE SET path = EXCLUDED.path",
        )
