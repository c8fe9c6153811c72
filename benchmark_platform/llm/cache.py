"""The response cache and per-call telemetry in PostgreSQL, written in batches behind a crash-proof journal.

Every answered call is appended at once to a local journal segment (one `write()`: it survives a kill -9 because the
kernel holds it), and rows are flushed to PostgreSQL in batches (`GatewaySettings.cache_flush_rows` /
`cache_flush_s`), so the database is never on a call's path. A segment is deleted once its rows are committed.
A process holds an flock on its live segments; segments found unlocked at start belong to a dead process and are
replayed first (inserts are idempotent: cache rows by request hash, telemetry rows by call id), so a resume after a
crash finds every response the dead process received.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmark_platform.store import Database, insert_rows

CACHE_COLUMNS = ("request_hash", "model", "provider", "request", "response", "input_tokens", "output_tokens",
                 "reasoning_tokens", "cost_usd", "cost_source", "latency_ms")
CALL_COLUMNS = ("call_id", "run_id", "request_hash", "model", "provider", "started_at", "latency_ms", "input_tokens",
                "output_tokens", "reasoning_tokens", "cost_usd", "cost_source", "cache_hit", "coalesced", "retries",
                "status", "error")


@dataclass(frozen=True, slots=True)
class CachedResponse:
    response: dict[str, Any]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    cost_source: str


class _Segment:
    def __init__(self, directory: Path, name: str) -> None:
        tmp = directory / f".{name}.tmp"
        self.fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)  # locked before it becomes visible to a recovering process
        self.path = directory / f"{name}.jsonl"
        os.rename(tmp, self.path)

    def drop(self) -> None:
        os.unlink(self.path)
        os.close(self.fd)


class ResponseStore:
    """Cache lookups, and journalled, batched writes of cache and telemetry rows. Not thread-safe: use from one
    event loop; `flush` is the only method meant for a worker thread (see `Gateway`)."""

    def __init__(self, db: Database, journal_dir: Path) -> None:
        self.db = db
        self.journal_dir = journal_dir
        journal_dir.mkdir(parents=True, exist_ok=True)
        self.instance = uuid.uuid4().hex[:16]
        self._n = 0
        self._segment = _Segment(journal_dir, f"{self.instance}-{self._n}")
        self._cache_rows: list[list[Any]] = []
        self._call_rows: list[list[Any]] = []
        self._batches: list[tuple[_Segment, list[list[Any]], list[list[Any]]]] = []

    # -- reading -----------------------------------------------------------------------------------------------
    def lookup(self, hashes: list[str]) -> dict[str, CachedResponse]:
        found: dict[str, CachedResponse] = {}
        with self.db.connect() as conn, conn.cursor() as cur:
            for i in range(0, len(hashes), 5000):
                cur.execute(
                    "SELECT request_hash, response, input_tokens, output_tokens, reasoning_tokens, cost_usd,"
                    " cost_source FROM llm_call_cache WHERE request_hash = ANY(%s)",
                    (hashes[i : i + 5000],),
                )
                for row in cur.fetchall():
                    found[row[0]] = CachedResponse(*row[1:])
        return found

    def run_cost(self, run_id: str) -> float:
        """What the calls of a run cost so far (rows already written)."""
        return float(self.db.scalar("SELECT coalesce(sum(cost_usd), 0) FROM llm_calls WHERE run_id = %s", (run_id,)))

    # -- writing -----------------------------------------------------------------------------------------------
    @property
    def pending(self) -> int:
        return len(self._call_rows)

    def record(self, cache_row: list[Any] | None, call_row: list[Any]) -> None:
        """Journal one answered call (one write) and queue its rows for the next batch."""
        os.write(self._segment.fd, (json.dumps([cache_row, call_row]) + "\n").encode())
        if cache_row is not None:
            self._cache_rows.append(cache_row)
        self._call_rows.append(call_row)

    def take_batch(self) -> None:
        """Close the queued rows into a batch with the segment that journals them, and start a new segment."""
        self._n += 1
        old, self._segment = self._segment, _Segment(self.journal_dir, f"{self.instance}-{self._n}")
        self._batches.append((old, self._cache_rows, self._call_rows))
        self._cache_rows, self._call_rows = [], []

    def flush(self) -> None:
        """Commit the taken batches, each in one transaction, deleting each one's segment after its commit (runs in a
        worker thread, one flush at a time). A batch that fails stays queued for the next flush."""
        for batch in list(self._batches):
            segment, cache_rows, call_rows = batch
            _insert(self.db, cache_rows, call_rows)
            segment.drop()
            self._batches.remove(batch)

    def close(self) -> None:
        self.take_batch()
        self.flush()
        self._segment.drop()

    # -- recovery ----------------------------------------------------------------------------------------------
    def recover(self) -> int:
        """Replay the journal segments of dead processes; returns the number of calls recovered."""
        recovered = 0
        for path in sorted(self.journal_dir.glob("*.jsonl")):
            try:
                fd = os.open(path, os.O_RDWR)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:  # a live process owns it
                os.close(fd)
                continue
            cache_rows, call_rows = [], []
            with os.fdopen(fd, "rb") as f:
                for line in f:
                    try:
                        cache_row, call_row = json.loads(line)
                    except ValueError:  # the last line, cut by the crash
                        break
                    if cache_row is not None:
                        cache_rows.append(cache_row)
                    call_rows.append(call_row)
                _insert(self.db, cache_rows, call_rows)
                os.unlink(path)
            recovered += len(call_rows)
        return recovered


def _insert(db: Database, cache_rows: list[list[Any]], call_rows: list[list[Any]]) -> None:
    if not cache_rows and not call_rows:
        return
    calls = [[*r[:5], datetime.fromtimestamp(r[5], UTC), *r[6:]] for r in call_rows]
    with db.transaction() as conn:
        if cache_rows:
            insert_rows(conn, "llm_call_cache", CACHE_COLUMNS, cache_rows, "ON CONFLICT (request_hash) DO NOTHING")
        if calls:
            insert_rows(conn, "llm_calls", CALL_COLUMNS, calls, "ON CONFLICT (call_id) DO NOTHING")
