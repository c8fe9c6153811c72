"""The live fetcher against a loopback server with injected faults, and replay from what it recorded."""

from __future__ import annotations

import socket

import pytest

from benchmark_platform.ingest.fetch import (
    FetchError,
    FetchPolicy,
    LiveFetcher,
    NetworkForbidden,
    ReplayFetcher,
    ReplayMiss,
    forbid_network,
)
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform_tests.ingest.loopback import Loopback, Reply

CP1252_ROW = "Côtes du Rhône;Châteauneuf-du-Pape;rosé\n".encode("cp1252")


def live(store: SnapshotStore, policy: FetchPolicy, sleeps: list[float]) -> LiveFetcher:
    return LiveFetcher(store, policy, sleep=sleeps.append)


def test_429_then_500_then_success_honours_retry_after_and_records_every_response(
    loopback: Loopback, tmp_path, fast_policy, sleeps
):
    url = loopback.route(
        "/data.csv",
        Reply(429, b"slow down", {"Retry-After": "7"}),
        Reply(500, b"oops"),
        Reply(200, b"a,b\n1,2\n", {"Content-Type": "text/csv"}),
    )
    store = SnapshotStore(tmp_path)
    with live(store, fast_policy, sleeps) as fetcher:
        fetched = fetcher.get(url)
    assert fetched.body == b"a,b\n1,2\n"
    assert sleeps == [7.0, 1.0]  # Retry-After honoured, then exponential backoff (0.5 * 2)
    assert [e.status for e in store.history("GET", url)] == [429, 500, 200]
    assert fetched.exchange.request_headers["user-agent"] == fast_policy.user_agent
    assert loopback.requests["/data.csv"][0]["user-agent"] == fast_policy.user_agent


def test_retry_after_longer_than_allowed_fails_loudly(loopback: Loopback, tmp_path, fast_policy, sleeps):
    url = loopback.route("/busy", Reply(503, b"", {"Retry-After": "3600"}))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher, pytest.raises(FetchError, match="3600"):
        fetcher.get(url)
    assert sleeps == []


def test_persistent_500_gives_up_naming_the_url(loopback: Loopback, tmp_path, fast_policy, sleeps):
    url = loopback.route("/broken", Reply(500, b"down"))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher, pytest.raises(FetchError) as error:
        fetcher.get(url)
    assert url in str(error.value) and "HTTP 500" in str(error.value)
    assert loopback.hits("/broken") == fast_policy.max_attempts


def test_timeout_is_retried_then_succeeds(loopback: Loopback, tmp_path, sleeps):
    policy = FetchPolicy(min_interval_s=0, backoff_base_s=0, timeout_s=0.3, max_attempts=3)
    url = loopback.route("/slow", Reply(200, b"late", delay_s=1.0), Reply(200, b"on time"))
    with live(SnapshotStore(tmp_path), policy, sleeps) as fetcher:
        assert fetcher.get(url).body == b"on time"
    assert loopback.hits("/slow") == 2


def test_truncated_body_is_never_recorded(loopback: Loopback, tmp_path, fast_policy, sleeps):
    body = b"x" * 5000
    url = loopback.route("/cut", Reply(200, body, truncate_to=1000))
    store = SnapshotStore(tmp_path)
    with live(store, fast_policy, sleeps) as fetcher, pytest.raises(FetchError, match="gave up"):
        fetcher.get(url)
    assert store.history("GET", url) == []
    assert [e.url for e in store.exchanges()] == [loopback.url("/robots.txt")]  # only the robots.txt 404
    assert len(list(tmp_path.rglob("*.gz"))) == 1 and not list(tmp_path.rglob("*.tmp"))


def test_truncated_then_complete(loopback: Loopback, tmp_path, fast_policy, sleeps):
    body = "Crémant de Loire,1975\n".encode() * 200
    url = loopback.route("/flaky", Reply(200, body, truncate_to=100), Reply(200, body))
    store = SnapshotStore(tmp_path)
    with live(store, fast_policy, sleeps) as fetcher:
        assert fetcher.get(url).body == body
    assert [e.status for e in store.history("GET", url)] == [200]


def test_wrong_declared_encoding_is_detected(loopback: Loopback, tmp_path, fast_policy, sleeps):
    cp1252 = loopback.route("/cp1252", Reply(200, CP1252_ROW, {"Content-Type": "text/csv; charset=utf-8"}))
    utf8 = loopback.route(
        "/utf8", Reply(200, CP1252_ROW.decode("cp1252").encode(), {"Content-Type": "text/csv; charset=ISO-8859-1"})
    )
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher:
        first, second = fetcher.get(cp1252).decoded(), fetcher.get(utf8).decoded()
    assert (first.encoding, first.mismatch, first.text.split(";")[0]) == ("cp1252", True, "Côtes du Rhône")
    assert (second.encoding, second.mismatch, second.text.split(";")[0]) == ("utf-8", True, "Côtes du Rhône")


def test_robots_txt_disallow_is_honoured(loopback: Loopback, tmp_path, fast_policy, sleeps):
    loopback.route("/robots.txt", Reply(200, b"User-agent: *\nDisallow: /private/\n", {"Content-Type": "text/plain"}))
    allowed = loopback.route("/public/a.csv", Reply(200, b"a\n1\n"))
    forbidden = loopback.route("/private/b.csv", Reply(200, b"secret"))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher:
        assert fetcher.get(allowed).body == b"a\n1\n"
        with pytest.raises(FetchError, match="robots.txt"):
            fetcher.get(forbidden)
    assert loopback.hits("/private/b.csv") == 0 and loopback.hits("/robots.txt") == 1


def test_robots_txt_server_error_disallows_everything(loopback: Loopback, tmp_path, fast_policy, sleeps):
    loopback.route("/robots.txt", Reply(503, b""))
    url = loopback.route("/page", Reply(200, b"content"))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher, pytest.raises(FetchError, match="robots"):
        fetcher.get(url)
    assert loopback.hits("/page") == 0


def test_conditional_request_and_304_serve_the_recorded_body(loopback: Loopback, tmp_path, fast_policy, sleeps):
    url = loopback.route(
        "/avas.geojson",
        Reply(
            200, b'{"type": "FeatureCollection"}', {"ETag": '"v1"', "Last-Modified": "Tue, 21 Jan 2025 00:00:00 GMT"}
        ),
        Reply(304, b""),
    )
    store = SnapshotStore(tmp_path)
    with live(store, fast_policy, sleeps) as fetcher:
        first = fetcher.get(url)
        second = fetcher.get(url)
    conditional = loopback.requests["/avas.geojson"][1]
    assert conditional["if-none-match"] == '"v1"'
    assert conditional["if-modified-since"] == "Tue, 21 Jan 2025 00:00:00 GMT"
    assert second.body == first.body and second.exchange == first.exchange
    assert second.revalidated_by is not None and second.revalidated_by.status == 304
    replayed = ReplayFetcher(SnapshotStore(tmp_path)).get(url)  # a fresh store reads what was recorded
    assert replayed.body == first.body and replayed.revalidated_by == second.revalidated_by


def test_per_host_rate_limit_spaces_requests(loopback: Loopback, tmp_path, sleeps):
    clock = iter([0.0, 0.0, 0.1, 0.1, 0.2, 0.2, 0.3, 0.3])
    policy = FetchPolicy(min_interval_s=2.0, respect_robots=False)
    url = loopback.route("/r", Reply(200, b"ok"))
    with LiveFetcher(SnapshotStore(tmp_path), policy, sleep=sleeps.append, clock=lambda: next(clock)) as fetcher:
        fetcher.get(url)
        fetcher.get(url)
    assert sleeps == [pytest.approx(1.9)]  # second request waits for its slot, 2 s after the first


def test_replay_serves_recorded_responses_with_zero_connections(
    loopback: Loopback, tmp_path, fast_policy, sleeps, monkeypatch
):
    url = loopback.route("/data.csv", Reply(200, CP1252_ROW, {"Content-Type": "text/csv"}))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher:
        recorded = fetcher.get(url)
    attempts: list[object] = []
    original = socket.socket.connect
    monkeypatch.setattr(socket.socket, "connect", lambda s, a: attempts.append(a) or original(s, a))
    replay = ReplayFetcher(SnapshotStore(tmp_path))
    with forbid_network():
        assert replay.get(url).body == recorded.body
        with pytest.raises(ReplayMiss, match="not in snapshot"):
            replay.get(loopback.url("/never-recorded"))
        with pytest.raises(NetworkForbidden):
            socket.create_connection(("127.0.0.1", loopback.server.server_port))
    assert attempts == []
    assert loopback.hits("/data.csv") == 1


def test_replay_of_a_recorded_error_fails_like_the_live_run(loopback: Loopback, tmp_path, fast_policy, sleeps):
    url = loopback.route("/gone", Reply(404, b"not here"))
    with live(SnapshotStore(tmp_path), fast_policy, sleeps) as fetcher, pytest.raises(FetchError, match="404"):
        fetcher.get(url)
    with pytest.raises(FetchError, match="404"):
        ReplayFetcher(SnapshotStore(tmp_path)).get(url)
