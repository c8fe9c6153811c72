"""Remove one spec's rows from the system of record (`benchmark-platform spec drop NAME`): every table with a `spec`
column, in one transaction; rows that hang off them (item facts, findings, answers, documents) go by their foreign
keys' ON DELETE CASCADE. Other specs' rows, the LLM cache and gold sheets are untouched."""

from __future__ import annotations

from benchmark_platform.store.db import Database

_SPEC_TABLES = """SELECT c.table_name FROM information_schema.columns c
    JOIN information_schema.tables t USING (table_schema, table_name)
    WHERE c.column_name = 'spec' AND c.table_schema = current_schema() AND t.table_type = 'BASE TABLE'
    ORDER BY c.table_name"""


def spec_row_counts(db: Database, spec: str) -> dict[str, int]:
    """Rows of `spec` per table that has a spec column (tables without any omitted)."""
    counts = {}
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute(_SPEC_TABLES)
        for (table,) in cur.fetchall():
            cur.execute(f'SELECT count(*) FROM "{table}" WHERE spec = %s', (spec,))
            row = cur.fetchone()
            n = int(row[0]) if row else 0
            if n:
                counts[table] = n
    return counts


def drop_spec(db: Database, spec: str) -> dict[str, int]:
    """Delete every row of `spec` in one transaction; returns the rows deleted per table. Tables are emptied in passes
    (each under a savepoint) until none is left, so a foreign key between two spec tables never needs an order here."""
    deleted: dict[str, int] = {}
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(_SPEC_TABLES)
        pending = [table for (table,) in cur.fetchall()]
        while pending:
            blocked = []
            for table in pending:
                cur.execute("SAVEPOINT drop_table")
                try:
                    cur.execute(f'DELETE FROM "{table}" WHERE spec = %s', (spec,))
                    removed = cur.rowcount
                except Exception as exc:  # a row of another spec table still refers to these: next pass
                    if getattr(exc, "pgcode", None) != "23503":  # foreign_key_violation
                        raise
                    cur.execute("ROLLBACK TO SAVEPOINT drop_table")
                    blocked.append(table)
                    continue
                cur.execute("RELEASE SAVEPOINT drop_table")
                if removed:
                    deleted[table] = deleted.get(table, 0) + removed
            if len(blocked) == len(pending):
                raise ValueError(
                    f"spec {spec!r}: rows of {', '.join(blocked)} are still referenced; nothing was dropped"
                )
            pending = blocked
    return deleted
