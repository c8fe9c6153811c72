"""The snapshot store: every HTTP exchange a live run made, kept so that a replay run can serve it without a network.

Layout of a store directory (plain files, reviewable in git, no partial state after a crash):
    exchanges/<key16>-<recorded_at>-<status>.json   one file per exchange (request, status, headers, time, body hash)
    bodies/<sha256>.gz                               the body bytes, content-addressed, gzip with a fixed header
A body is written before the exchange that names it, each through a temporary file renamed into place, so a crash
leaves at most an unreferenced body and never an exchange without its bytes. A body read back is checked against
its hash.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SUCCESS = range(200, 300)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def request_key(method: str, url: str) -> str:
    """What identifies a request in the store: its method and full URL (query included, in the order sent)."""
    return sha256_hex(f"{method.upper()} {url}".encode())


class Capture(BaseModel):
    """How an exchange entered the store: recorded from the network, or imported from a file another party captured."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["live", "import"]
    origin: str = ""  # for imports: the file it was read from, relative to the data folder
    note: str = ""  # what is known of the bytes' fidelity (e.g. "byte-exact copy of upstream at commit ...")


class Exchange(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = "GET"
    url: str
    request_headers: dict[str, str] = Field(default_factory=dict)
    status: int
    response_headers: dict[str, str] = Field(default_factory=dict)  # names lower-cased
    body_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    body_size: int = Field(ge=0)
    recorded_at: datetime
    elapsed_ms: float = 0.0
    capture: Capture

    @property
    def key(self) -> str:
        return request_key(self.method, self.url)

    @property
    def exchange_id(self) -> str:
        """Content-derived identity of the whole record."""
        return sha256_hex(self.model_dump_json().encode())

    @property
    def file_name(self) -> str:
        return f"{self.key[:16]}-{self.recorded_at.strftime('%Y%m%dT%H%M%S%f')}-{self.status}.json"


class SnapshotError(RuntimeError):
    pass


class SnapshotStore:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._index: dict[str, list[Exchange]] | None = None
        self._by_id: dict[str, Exchange] = {}

    @property
    def exchanges_dir(self) -> Path:
        return self.root / "exchanges"

    @property
    def bodies_dir(self) -> Path:
        return self.root / "bodies"

    # -- reading ---------------------------------------------------------------------------------------------
    def _load(self) -> dict[str, list[Exchange]]:
        if self._index is None:
            index: dict[str, list[Exchange]] = defaultdict(list)
            for path in sorted(self.exchanges_dir.glob("*.json")) if self.exchanges_dir.exists() else []:
                try:
                    exchange = Exchange.model_validate_json(path.read_bytes())
                except ValueError as exc:
                    raise SnapshotError(f"{path}: not a valid exchange record: {exc}") from exc
                index[exchange.key].append(exchange)
                self._by_id[exchange.exchange_id] = exchange
            for history in index.values():
                history.sort(key=lambda e: e.recorded_at)
            self._index = index
        return self._index

    def exchanges(self) -> list[Exchange]:
        return sorted((e for history in self._load().values() for e in history), key=lambda e: (e.url, e.recorded_at))

    def history(self, method: str, url: str) -> list[Exchange]:
        """Every recorded exchange for this request, oldest first."""
        return list(self._load().get(request_key(method, url), []))

    def by_id(self, exchange_id: str) -> Exchange | None:
        self._load()
        return self._by_id.get(exchange_id)

    def body(self, exchange: Exchange) -> bytes:
        path = self.bodies_dir / f"{exchange.body_sha256}.gz"
        try:
            data = gzip.decompress(path.read_bytes())
        except (OSError, EOFError) as exc:
            raise SnapshotError(f"{path}: body of {exchange.url} unreadable: {exc}") from exc
        if sha256_hex(data) != exchange.body_sha256:
            raise SnapshotError(f"{path}: body of {exchange.url} does not match its sha256 (store corrupted)")
        return data

    def resolve(self, method: str, url: str) -> tuple[Exchange, Exchange | None] | None:
        """What a replay serves for a request: the newest exchange; a 304 revalidation resolves to the newest
        earlier 2xx exchange that holds the body. Returns (exchange with the body, revalidating exchange or None)."""
        history = self.history(method, url)
        if not history:
            return None
        newest = history[-1]
        if newest.status != 304:
            return newest, None
        for earlier in reversed(history[:-1]):
            if earlier.status in SUCCESS:
                return earlier, newest
        raise SnapshotError(f"{url}: recorded 304 Not Modified has no earlier 2xx exchange with the body")

    # -- writing ---------------------------------------------------------------------------------------------
    def put(self, exchange: Exchange, body: bytes) -> Exchange:
        if sha256_hex(body) != exchange.body_sha256 or len(body) != exchange.body_size:
            raise SnapshotError(f"{exchange.url}: body does not match the exchange's sha256/size")
        body_path = self.bodies_dir / f"{exchange.body_sha256}.gz"
        if not body_path.exists():
            _atomic_write(body_path, gzip.compress(body, compresslevel=9, mtime=0))
        payload = json.dumps(exchange.model_dump(mode="json"), ensure_ascii=False, indent=1, sort_keys=True)
        _atomic_write(self.exchanges_dir / exchange.file_name, payload.encode() + b"\n")
        if self._index is not None:
            self._index[exchange.key].append(exchange)
            self._index[exchange.key].sort(key=lambda e: e.recorded_at)
            self._by_id[exchange.exchange_id] = exchange
        return exchange

    def unreferenced_bodies(self) -> list[Path]:
        """Bodies no exchange names (left by a crash between the two writes of `put`); harmless, safe to delete."""
        named = {e.body_sha256 for e in self.exchanges()}
        return [p for p in sorted(self.bodies_dir.glob("*.gz")) if p.name[:-3] not in named]


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def recorded_version(store: SnapshotStore, urls: Sequence[str]) -> str:
    """A digest of what a replay of these requests serves now (each URL's body hash): a newer recording with new
    content changes it, a re-recording of the same bytes does not."""
    served = []
    for url in urls:
        resolved = store.resolve("GET", url)
        served.append(f"{url} {resolved[0].body_sha256 if resolved else '-'}")
    return hashlib.sha256("\n".join(served).encode()).hexdigest()
