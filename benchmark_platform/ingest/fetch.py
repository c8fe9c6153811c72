"""HTTP for adapters: a live fetcher that is polite and records everything, and a replay fetcher with no network.

Live (`LiveFetcher`, httpx): a declared user agent, a minimum interval between requests to the same host, robots.txt
honoured (RFC 9309: a 4xx robots.txt allows everything, a 5xx or unreachable one forbids everything), retries with
exponential backoff on 429, 5xx, timeouts and broken or truncated bodies, honouring Retry-After, and conditional
requests (If-None-Match / If-Modified-Since from the last recorded exchange). Every complete response, failures
included, is written to the snapshot store before it is used; a body that did not arrive whole is never written.

Replay (`ReplayFetcher`): serves the same calls from the store. It holds no HTTP client; a request that is not in the
store raises `ReplayMiss`, and `forbid_network()` makes any socket connection attempt in the process fail loudly.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any, Protocol
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

import httpx
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.ingest.encoding import Decoded, decode, media_type
from benchmark_platform.ingest.snapshot import SUCCESS, Capture, Exchange, SnapshotStore, sha256_hex

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
REQUEST_HEADERS_KEPT = ("user-agent", "accept", "if-none-match", "if-modified-since")  # never auth or cookies
RESPONSE_HEADERS_KEPT = (
    "content-type",
    "content-length",
    "etag",
    "last-modified",
    "date",
    "retry-after",
    "content-encoding",
    "location",
    "cache-control",
)


class FetchError(RuntimeError):
    """A request that could not be served; the message names the URL and why."""


class ReplayMiss(FetchError):
    pass


class NetworkForbidden(RuntimeError):
    pass


class FetchPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    user_agent: str = "benchmark_platform/0.1 (knowledge-benchmark research; provenance-recorded ingestion)"
    min_interval_s: float = Field(default=1.0, ge=0)  # per host
    timeout_s: float = Field(default=30.0, gt=0)
    max_attempts: int = Field(default=5, ge=1)
    backoff_base_s: float = Field(default=1.0, ge=0)
    backoff_max_s: float = Field(default=60.0, ge=0)
    max_retry_after_s: float = Field(default=300.0, ge=0)  # a server asking to wait longer is a failure, not a stall
    max_body_bytes: int = Field(default=200_000_000, gt=0)
    respect_robots: bool = True


@dataclass(frozen=True)
class Fetched:
    exchange: Exchange  # the exchange whose body this is
    body: bytes
    revalidated_by: Exchange | None = None  # a later 304 that confirmed the body is still current

    @property
    def url(self) -> str:
        return self.exchange.url

    @property
    def content_type(self) -> str | None:
        return self.exchange.response_headers.get("content-type")

    @property
    def media_type(self) -> str:
        return media_type(self.content_type, self.url)

    def decoded(self) -> Decoded:
        return decode(self.body, self.content_type)


class Fetcher(Protocol):
    store: SnapshotStore

    def get(
        self, url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None
    ) -> Fetched: ...


def full_url(url: str, params: dict[str, str] | None) -> str:
    return str(httpx.URL(url, params=params)) if params else url


def _raise_for_status(exchange: Exchange) -> None:
    if exchange.status not in SUCCESS and exchange.status != 304:
        raise FetchError(f"GET {exchange.url}: HTTP {exchange.status}")


class ReplayFetcher:
    """Serves recorded exchanges; never opens a connection."""

    def __init__(self, store: SnapshotStore) -> None:
        self.store = store

    def get(self, url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Fetched:
        target = full_url(url, params)
        resolved = self.store.resolve("GET", target)
        if resolved is None:
            raise ReplayMiss(
                f"GET {target}: not in snapshot store {self.store.root} (a replay run never uses the network)"
            )
        exchange, revalidation = resolved
        _raise_for_status(exchange)
        return Fetched(exchange, self.store.body(exchange), revalidation)


class LiveFetcher:
    """Polite live HTTP that records every complete response into the store."""

    def __init__(
        self,
        store: SnapshotStore,
        policy: FetchPolicy | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.store = store
        self.policy = policy or FetchPolicy()
        self._client = httpx.Client(
            timeout=self.policy.timeout_s,
            follow_redirects=True,
            transport=transport,
            headers={"user-agent": self.policy.user_agent},
        )
        self._clock, self._sleep = clock, sleep
        self._next_slot: dict[str, float] = {}
        self._robots: dict[str, RobotFileParser | bool] = {}
        self._lock = threading.Lock()

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> LiveFetcher:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- public ----------------------------------------------------------------------------------------------
    def get(self, url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Fetched:
        target = full_url(url, params)
        if self.policy.respect_robots and not self._allowed(target):
            raise FetchError(
                f"GET {target}: disallowed by robots.txt of {urlsplit(target).netloc} "
                f"for user agent {self.policy.user_agent!r}"
            )
        previous = next((e for e in reversed(self.store.history("GET", target)) if e.status in SUCCESS), None)
        request_headers = dict(headers or {})
        if previous is not None:
            if etag := previous.response_headers.get("etag"):
                request_headers["if-none-match"] = etag
            if modified := previous.response_headers.get("last-modified"):
                request_headers["if-modified-since"] = modified
        exchange, body = self._exchange(target, request_headers)
        if exchange.status == 304:
            if previous is None:
                raise FetchError(f"GET {target}: 304 Not Modified to an unconditional request")
            return Fetched(previous, self.store.body(previous), exchange)
        _raise_for_status(exchange)
        return Fetched(exchange, body)

    # -- internals -------------------------------------------------------------------------------------------
    def _exchange(self, url: str, headers: dict[str, str]) -> tuple[Exchange, bytes]:
        """One request with retries; returns the final complete response after recording it."""
        last_problem = ""
        for attempt in range(1, self.policy.max_attempts + 1):
            self._wait_turn(url)
            started, recorded_at = self._clock(), datetime.now(UTC)
            try:
                with self._client.stream("GET", url, headers=headers) as response:
                    body = self._read(response, url)
            except (httpx.TimeoutException, httpx.TransportError) as exc:  # incl. truncated bodies, resets
                last_problem = f"{type(exc).__name__}: {exc}"
                delay = self._backoff(attempt)
            else:
                exchange = self._record(response, body, url, recorded_at, (self._clock() - started) * 1000)
                if exchange.status not in RETRY_STATUSES:
                    return exchange, body
                last_problem = f"HTTP {exchange.status}"
                delay = self._retry_after(response.headers.get("retry-after"), url) or self._backoff(attempt)
            if attempt < self.policy.max_attempts:
                self._sleep(delay)
        raise FetchError(f"GET {url}: gave up after {self.policy.max_attempts} attempts ({last_problem})")

    def _read(self, response: httpx.Response, url: str) -> bytes:
        chunks, size = [], 0
        for chunk in response.iter_bytes():
            size += len(chunk)
            if size > self.policy.max_body_bytes:
                raise FetchError(f"GET {url}: body larger than {self.policy.max_body_bytes} bytes")
            chunks.append(chunk)
        body = b"".join(chunks)
        expected = response.headers.get("content-length")
        if expected is not None and "content-encoding" not in response.headers and int(expected) != len(body):
            raise httpx.RemoteProtocolError(f"truncated body: {len(body)} of {expected} bytes")
        return body

    def _record(
        self, response: httpx.Response, body: bytes, url: str, recorded_at: datetime, elapsed_ms: float
    ) -> Exchange:
        sent = response.request.headers
        exchange = Exchange(
            url=url,
            request_headers={k: sent[k] for k in REQUEST_HEADERS_KEPT if k in sent},
            status=response.status_code,
            response_headers={k: response.headers[k] for k in RESPONSE_HEADERS_KEPT if k in response.headers},
            body_sha256=sha256_hex(body),
            body_size=len(body),
            recorded_at=recorded_at,
            elapsed_ms=round(elapsed_ms, 3),
            capture=Capture(kind="live"),
        )
        return self.store.put(exchange, body)

    def _wait_turn(self, url: str) -> None:
        host = urlsplit(url).netloc
        with self._lock:
            now = self._clock()
            slot = max(now, self._next_slot.get(host, now))
            self._next_slot[host] = slot + self.policy.min_interval_s
        if slot > now:
            self._sleep(slot - now)

    def _backoff(self, attempt: int) -> float:
        return min(self.policy.backoff_max_s, self.policy.backoff_base_s * 2.0 ** (attempt - 1))

    def _retry_after(self, value: str | None, url: str) -> float | None:
        if not value:
            return None
        try:
            seconds = float(value)
        except ValueError:
            try:
                seconds = (parsedate_to_datetime(value) - datetime.now(UTC)).total_seconds()
            except (TypeError, ValueError):
                return None
        seconds = max(0.0, seconds)
        if seconds > self.policy.max_retry_after_s:
            raise FetchError(
                f"GET {url}: server asks to retry after {seconds:.0f}s, "
                f"more than the {self.policy.max_retry_after_s:.0f}s allowed"
            )
        return seconds

    def _allowed(self, url: str) -> bool:
        parts = urlsplit(url)
        host = f"{parts.scheme}://{parts.netloc}"
        if host not in self._robots:
            self._robots[host] = self._load_robots(f"{host}/robots.txt")
        rules = self._robots[host]
        return rules if isinstance(rules, bool) else rules.can_fetch(self.policy.user_agent, url)

    def _load_robots(self, robots_url: str) -> RobotFileParser | bool:
        try:
            exchange, body = self._exchange(robots_url, {})
        except FetchError:
            return False  # unreachable: assume complete disallow (RFC 9309, 2.3.1.4)
        if 400 <= exchange.status < 500:
            return True  # unavailable: any resource may be accessed (RFC 9309, 2.3.1.3)
        if exchange.status not in SUCCESS:
            return False
        parser = RobotFileParser()
        parser.parse(decode(body, exchange.response_headers.get("content-type")).text.splitlines())
        return parser


@contextmanager
def forbid_network() -> Iterator[None]:
    """Within the block any IPv4/IPv6 socket connection in this process raises NetworkForbidden (replay runs)."""
    original_connect, original_connect_ex = socket.socket.connect, socket.socket.connect_ex

    def _refuse(sock: Any, address: Any) -> None:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise NetworkForbidden(f"replay run attempted a network connection to {address!r}")
        return original_connect(sock, address)

    def _refuse_ex(sock: Any, address: Any) -> int:
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            raise NetworkForbidden(f"replay run attempted a network connection to {address!r}")
        return original_connect_ex(sock, address)

    socket.socket.connect, socket.socket.connect_ex = _refuse, _refuse_ex  # type: ignore[method-assign]
    try:
        yield
    finally:
        socket.socket.connect, socket.socket.connect_ex = original_connect, original_connect_ex  # type: ignore[method-assign]
