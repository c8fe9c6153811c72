"""Fixtures of the ingest tests: a loopback server per test and a fetch policy without waits."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from benchmark_platform.ingest.fetch import FetchPolicy
from benchmark_platform_tests.ingest.loopback import Loopback, Reply


@pytest.fixture
def loopback() -> Iterator[Loopback]:
    server = Loopback()
    server.route("/robots.txt", Reply(404))
    yield server
    server.close()


@pytest.fixture
def fast_policy() -> FetchPolicy:
    """No politeness delay or backoff waits in tests (the waits requested are recorded by `sleeps`)."""
    return FetchPolicy(min_interval_s=0, backoff_base_s=0.5, timeout_s=1.0, max_attempts=3, max_retry_after_s=30)


@pytest.fixture
def sleeps() -> list[float]:
    return []
