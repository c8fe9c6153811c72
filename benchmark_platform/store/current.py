"""Which stored run of a digest-keyed stage is current (sql/0410 `current_runs`).

A stage that keys its runs by the inputs' digest (the audit's audit_runs, the anchors' anchor_imports) reuses an
earlier run when the inputs match one seen before; it must then make that run the current one, in the same
transaction as the write or the reuse, because readers ask for the current run, never for the latest id."""

from __future__ import annotations

from typing import Literal

from psycopg2.extensions import cursor as Cursor

Stage = Literal["audit", "anchors"]


def make_current(cur: Cursor, spec: str, stage: Stage, partition_key: str, run_id: int) -> None:
    cur.execute(
        """INSERT INTO current_runs (spec, stage, partition_key, run_id) VALUES (%s, %s, %s, %s)
           ON CONFLICT (spec, stage, partition_key) DO UPDATE SET run_id = EXCLUDED.run_id, made_current_at = now()
           WHERE current_runs.run_id <> EXCLUDED.run_id""",
        (spec, stage, partition_key, run_id),
    )


def clear_current(cur: Cursor, spec: str, stage: Stage, partition_key: str) -> None:
    """No stored run is current for the partition (its inputs are gone); the runs themselves are kept."""
    cur.execute(
        "DELETE FROM current_runs WHERE spec = %s AND stage = %s AND partition_key = %s", (spec, stage, partition_key)
    )
