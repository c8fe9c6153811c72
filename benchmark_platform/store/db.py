"""The system of record: a thin, explicit layer over psycopg2. No ORM, no module-level connection."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import psycopg2
import psycopg2.extras
from psycopg2.extensions import connection as Connection
from psycopg2.extensions import cursor as Cursor

from benchmark_platform.store.settings import with_timeouts

psycopg2.extras.register_default_jsonb(loads=__import__("json").loads)


@dataclass(frozen=True)
class Database:
    url: str

    @contextmanager
    def connect(self) -> Iterator[Connection]:
        conn = psycopg2.connect(with_timeouts(self.url))
        try:
            yield conn
        finally:
            conn.close()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        """One transaction: committed on success, rolled back on any error, so nothing is half-written."""
        with self.connect() as conn:
            try:
                yield conn
                conn.commit()
            except BaseException:
                conn.rollback()
                raise

    def query(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> list[dict[str, Any]]:
        with self.connect() as conn, conn.cursor(cursor_factory=psycopg2.extras.RealDictCursor) as cur:
            cur.execute(sql, params)
            return [dict(row) for row in cur.fetchall()]

    def scalar(self, sql: str, params: Sequence[Any] | dict[str, Any] | None = None) -> Any:
        with self.connect() as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            row = cur.fetchone()
            return None if row is None else row[0]


def returned(cur: Cursor) -> Any:
    """The first column of the one row a statement returned (an INSERT ... RETURNING, a SELECT of one row)."""
    row = cur.fetchone()
    if row is None:
        raise LookupError(f"no row returned by: {cur.query!r}")
    return row[0]


def insert_rows(
    conn: Connection,
    table: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Any]],
    on_conflict: str = "",
    page_size: int = 1000,
) -> None:
    """Batch insert (execute_values); `on_conflict` is an optional 'ON CONFLICT ...' clause."""
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES %s {on_conflict}"
    with conn.cursor() as cur:
        psycopg2.extras.execute_values(cur, sql, rows, page_size=page_size)


def as_json(value: Any) -> psycopg2.extras.Json:
    return psycopg2.extras.Json(value)
