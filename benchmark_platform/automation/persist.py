"""What the automation writes: the `disciplines` table, the instance's record of the spec's taxonomy leaves."""

from __future__ import annotations

from collections.abc import Sequence

from benchmark_platform.store import Database, insert_rows


def record_leaves(db: Database, spec: str, leaves: Sequence[tuple[str, Sequence[str]]]) -> None:
    """Record (or move) taxonomy leaves and their paths from the root, all in one statement and transaction."""
    with db.transaction() as conn:
        insert_rows(
            conn,
            "disciplines",
            ("spec", "discipline", "path"),
            [(spec, leaf, list(path)) for leaf, path in leaves],
            on_conflict="ON CONFLICT (spec, discipline) DO UPDATE SET path = EXCLUDED.path",
        )
