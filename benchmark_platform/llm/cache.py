"""The response cache and per-call telemetry in PostgreSQL, written in batches behind a crash-proof journal.

Every answered call is appended at once to a local journal segment (one `write()`: it survives a kill -9 because the
kernel holds it), and rows are flushed to PostgreSQL in batches (`GatewaySettings.cache_flush_rows` /
`cache_flush_s`), so the database is never on a call's path. A segment is deleted once its rows are committed.
A batch is sent as the journal's own JSON lines, one text parameter that PostgreSQL unpacks into both tables in one
statement: building the rows in Python (execute_values) held the GIL for ~30 us a row, a quarter of the gateway
process' CPU at 128 concurrent calls, and delayed the event loop's answers.
A process holds an flock on its live segments; segments found unlocked at start belong to a dead process and are
replayed first (inserts are idempotent: cache rows by request hash, telemetry rows by call id), so a resume after a
crash finds every response the dead process received.
Each request is also noted in a per-process `.sent` log (its hash, one write) as it goes on the wire: a resume reads
a dead process' log and reports the calls that were in flight at the kill (sent, no answer stored). Those are paid
again, unavoidably (their answers never arrived); everything answered before the kill is not.
The journal lives in a private per-user state folder (`state_folder()`, 0700, refused when another user owns it or
others can write it), and every line carries an HMAC keyed by a per-install secret kept there: a replay skips a line
this platform did not write, so nobody else on the machine can plant answers for a resume to put in the cache.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import logging
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg2
from psycopg2.extensions import connection as Connection

from benchmark_platform.store import Database, with_timeouts

# One journal line is `[cache_row or null, call_row]`; the statement reads both row kinds from a JSON array of lines.
# cache row: request_hash, model, provider, request, response, input/output/reasoning tokens, cost_usd, cost_source,
#            latency_ms
# call row:  call_id, run_id, request_hash, model, provider, started_at (epoch s), latency_ms, input/output/reasoning
#            tokens, cost_usd, cost_source, cache_hit, coalesced, retries, status, error
_INSERT_BATCH = """
WITH line AS (SELECT value -> 0 AS c, value -> 1 AS k FROM json_array_elements(%s::json)),
cache AS (
    INSERT INTO llm_call_cache (request_hash, model, provider, request, response, input_tokens, output_tokens,
                                reasoning_tokens, cost_usd, cost_source, latency_ms)
    SELECT c->>0, c->>1, c->>2, (c->>3)::jsonb, (c->>4)::jsonb, (c->>5)::int, (c->>6)::int, (c->>7)::int,
           (c->>8)::float8, c->>9, (c->>10)::float8
    FROM line WHERE json_typeof(c) = 'array'
    ON CONFLICT (request_hash) DO NOTHING)
INSERT INTO llm_calls (call_id, run_id, request_hash, model, provider, started_at, latency_ms, input_tokens,
                       output_tokens, reasoning_tokens, cost_usd, cost_source, cache_hit, coalesced, retries, status,
                       error)
SELECT k->>0, k->>1, k->>2, k->>3, k->>4, to_timestamp((k->>5)::float8), (k->>6)::float8, (k->>7)::int,
       (k->>8)::int, (k->>9)::int, (k->>10)::float8, k->>11, (k->>12)::boolean, (k->>13)::boolean, (k->>14)::int,
       k->>15, k->>16
FROM line
ON CONFLICT (call_id) DO NOTHING
"""


SENT_SUFFIX = ".sent"
KEY_FILE = "journal.key"
log = logging.getLogger(__name__)


class UnsafeFolder(ValueError):
    """A state folder another user could write (or owns): nothing is read from or written to it."""


def state_folder() -> Path:
    """The per-user state folder ($XDG_STATE_HOME/benchmark_platform, else ~/.local/state/benchmark_platform)."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return private_folder(Path(base) / "benchmark_platform")


def private_folder(path: Path) -> Path:
    """`path`, created 0700 if missing, checked: owned by this user and not writable by group or others."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if path.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o022:
        raise UnsafeFolder(
            f"{path}: owned by uid {info.st_uid} with mode {info.st_mode & 0o777:o}; the LLM journal needs a folder "
            f"of its own (owner uid {os.getuid()}, not writable by others): fix it with `chmod 700 {path}` or remove it"
        )
    return path


def journal_key() -> bytes:
    """The per-install secret that signs journal lines (created once, 0600, in the state folder)."""
    path = state_folder() / KEY_FILE
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(fd, "w") as handle:
            handle.write(os.urandom(32).hex())
    info = path.lstat()
    if path.is_symlink() or info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise UnsafeFolder(f"{path}: the journal key must be a file of this user readable by nobody else (0600)")
    key = path.read_text().strip()
    if len(key) != 64:  # cut by a crash while being created: a new one (lines signed by it are unreadable anyway)
        path.unlink()
        return journal_key()
    return bytes.fromhex(key)


def _signature(key: bytes, cache_row: Any, call_row: Any) -> str:
    body = json.dumps([cache_row, call_row], ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, body.encode(), hashlib.sha256).hexdigest()


def _signed_line(key: bytes, raw: bytes) -> str | None:
    """The journal line when it is whole and signed by `key` (None: cut by a crash, or not ours)."""
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    if not (isinstance(value, list) and len(value) == 3 and isinstance(value[2], str)):
        return None
    if not hmac.compare_digest(value[2], _signature(key, value[0], value[1])):
        return None
    if value[0] is not None and not (isinstance(value[0], list) and value[0][:1] == value[1][2:3]):
        return None  # a cache row stored for another request than its call's
    return raw.decode().rstrip("\n")


@dataclass(frozen=True, slots=True)
class CachedResponse:
    response: dict[str, Any]
    input_tokens: int
    output_tokens: int
    reasoning_tokens: int
    cost_usd: float
    cost_source: str


class _Segment:
    def __init__(self, directory: Path, name: str, suffix: str = ".jsonl") -> None:
        tmp = directory / f".{name}.tmp"
        self.fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)  # locked before it becomes visible to a recovering process
        self.path = directory / f"{name}{suffix}"
        os.rename(tmp, self.path)

    def drop(self) -> None:
        os.unlink(self.path)
        os.close(self.fd)


class _HeldConnection:
    """One connection kept for the store's life, one user at a time, reopened after a failure: lookups and flushes
    come several times a second, and a new connection each time costs a backend start on a shared core."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._conn: Connection | None = None
        self._lock = threading.Lock()

    @contextmanager
    def transaction(self) -> Iterator[Connection]:
        with self._lock:
            if self._conn is None or self._conn.closed:
                self._conn = psycopg2.connect(with_timeouts(self.db.url))
            try:
                yield self._conn
                self._conn.commit()
            except BaseException:
                self._conn.close()  # rolls back; the next use reconnects
                self._conn = None
                raise

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None


class ResponseStore:
    """Cache lookups, and journalled, batched writes of cache and telemetry rows. Not thread-safe: use from one
    event loop; `flush` is the only method meant for a worker thread (see `Gateway`)."""

    def __init__(self, db: Database, journal_dir: Path) -> None:
        self.db = db
        self.journal_dir = private_folder(journal_dir)
        self._key = journal_key()
        self.instance = uuid.uuid4().hex[:16]
        self._n = 0
        self._segment = _Segment(journal_dir, f"{self.instance}-{self._n}")
        self._sent = _Segment(journal_dir, self.instance, SENT_SUFFIX)
        self.in_flight_at_crash: set[str] = set()  # request hashes a dead process sent and got no answer for
        self._lines: list[str] = []
        self._batches: list[tuple[_Segment, list[str]]] = []
        self._reader, self._writer = _HeldConnection(db), _HeldConnection(db)

    # -- reading -----------------------------------------------------------------------------------------------
    def lookup(self, hashes: list[str]) -> dict[str, CachedResponse]:
        found: dict[str, CachedResponse] = {}
        with self._reader.transaction() as conn, conn.cursor() as cur:
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
        return len(self._lines)

    def mark_sent(self, request_hash: str) -> None:
        """Note a request going on the wire (one write; survives a kill -9 like the journal)."""
        os.write(self._sent.fd, (request_hash + "\n").encode())

    def record(self, cache_row: list[Any] | None, call_row: list[Any]) -> None:
        """Journal one answered call (one write) and queue its line for the next batch."""
        line = json.dumps([cache_row, call_row], ensure_ascii=False)
        if "\\u0000" in line:  # rare: a U+0000 somewhere (a prompt, an answer, an error) that PostgreSQL cannot hold
            if cache_row is not None:  # request and response are JSON texts themselves, stored as jsonb
                cache_row = [without_nul(v) if i in (3, 4) else v for i, v in enumerate(cache_row)]
            cache_row, call_row = _replace_nul([cache_row, call_row])
        signature = _signature(self._key, cache_row, call_row)
        line = json.dumps([cache_row, call_row, signature], ensure_ascii=False)
        os.write(self._segment.fd, (line + "\n").encode())
        self._lines.append(line)

    def take_batch(self) -> None:
        """Close the queued lines into a batch with the segment that journals them, and start a new segment."""
        self._n += 1
        old, self._segment = self._segment, _Segment(self.journal_dir, f"{self.instance}-{self._n}")
        self._batches.append((old, self._lines))
        self._lines = []

    def flush(self) -> None:
        """Commit the taken batches, each in one transaction, deleting each one's segment after its commit (runs in a
        worker thread, one flush at a time). A batch that fails stays queued for the next flush."""
        for batch in list(self._batches):
            segment, lines = batch
            with self._writer.transaction() as conn:
                _insert(conn, lines)
            segment.drop()
            self._batches.remove(batch)

    def close(self) -> None:
        self.take_batch()
        self.flush()
        self._segment.drop()
        self._sent.drop()
        self._reader.close()
        self._writer.close()

    # -- recovery ----------------------------------------------------------------------------------------------
    def recover(self) -> int:
        """Replay the journal segments of dead processes; returns the number of calls recovered. Then the requests
        they sent without an answer stored become `in_flight_at_crash`."""
        recovered = 0
        for path, fd in _dead(self.journal_dir, "*.jsonl"):
            lines, refused = [], 0
            with os.fdopen(fd, "rb") as f:
                for raw in f:
                    if (line := _signed_line(self._key, raw)) is not None:
                        lines.append(line)
                    else:  # the last line cut by the crash, or a line this install did not write
                        refused += 1
                if refused > 1:
                    log.warning("%s: %d journal lines not signed by this install were not replayed", path, refused)
                with self._writer.transaction() as conn:
                    _insert(conn, lines)
                os.unlink(path)
            recovered += len(lines)
        sent: set[str] = set()
        for path, fd in _dead(self.journal_dir, f"*{SENT_SUFFIX}"):
            with os.fdopen(fd, "rb") as f:
                sent |= {line.strip().decode() for line in f if len(line.strip()) == 64}  # a cut last line is skipped
            os.unlink(path)
        if sent:
            answered = self.lookup(sorted(sent))
            self.in_flight_at_crash = sent - answered.keys()
        return recovered


def _dead(directory: Path, pattern: str) -> Iterator[tuple[Path, int]]:
    """(path, locked fd) of each file no live process holds."""
    for path in sorted(directory.glob(pattern)):
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:  # a live process owns it
            os.close(fd)
            continue
        yield path, fd


def without_nul(text: str) -> str:
    """JSON `text` with each U+0000 in its strings replaced by U+FFFD (text without one is returned as it is).
    PostgreSQL's json, jsonb and text types cannot hold U+0000: `record` cleans what it stores with this, and the
    gateway cleans each answer as received, so a rerun from the cache answers what the first run did."""
    # valid JSON escapes U+0000 (json.loads refuses a raw one); a literal backslash-u0000 is told apart below
    if "\\u0000" not in text:
        return text
    data = json.loads(text)
    cleaned = _replace_nul(data)
    return text if cleaned == data else json.dumps(cleaned, ensure_ascii=False)


def _replace_nul(value: Any) -> Any:
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd")
    if isinstance(value, list):
        return [_replace_nul(v) for v in value]
    if isinstance(value, dict):
        return {_replace_nul(k): _replace_nul(v) for k, v in value.items()}
    return value


def _insert(conn: Connection, lines: list[str]) -> None:
    if lines:
        with conn.cursor() as cur:
            cur.execute(_INSERT_BATCH, ("[" + ",".join(lines) + "]",))


def cached_responses(db: Database) -> int:
    """How many responses the cache holds (a rebuild that replays every call from it adds none)."""
    return int(db.scalar("SELECT count(*) FROM llm_call_cache"))
