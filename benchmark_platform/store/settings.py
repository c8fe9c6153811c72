"""Where the system of record is: a configured URL, or else the embedded default.

Connection strings are the only environment knobs (DESIGN rule 5):
- BENCHMARK_PLATFORM_DATABASE_URL: the system of record, e.g. postgresql://user@host:5432/benchmark_platform
- BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL: Dagster's instance storage (default: the same server, database `dagster`
  for the embedded server, the same database otherwise).

Every connection (ours and Dagster's storage) gets a connect timeout and a statement timeout, so a frozen server
stops a command with one line instead of hanging it: generous defaults below, overridden by the URL's own
`connect_timeout=` (seconds) or `options=-c statement_timeout=...` (milliseconds) query parameters.
"""

from __future__ import annotations

import os
from urllib.parse import parse_qsl, quote, urlsplit

from benchmark_platform.store.embedded import EmbeddedPostgres

DATABASE_URL_ENV = "BENCHMARK_PLATFORM_DATABASE_URL"
DAGSTER_DATABASE_URL_ENV = "BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL"


CONNECT_TIMEOUT_S = 30  # a loaded server answers a connection in well under a second
STATEMENT_TIMEOUT_MS = 30 * 60 * 1000  # the longest statement of a full build (bulk inserts) takes seconds


class DatabaseNotConfigured(RuntimeError):
    pass


def with_timeouts(url: str) -> str:
    """`url` plus the default connect and statement timeouts, unless it sets its own."""
    parts = urlsplit(url)
    if "=" in url and not parts.scheme:  # a libpq keyword string (host=... dbname=...)
        extra = "" if "connect_timeout" in url else f" connect_timeout={CONNECT_TIMEOUT_S}"
        if "statement_timeout" not in url and "options" not in url:
            extra += f" options='-c statement_timeout={STATEMENT_TIMEOUT_MS}'"
        return url + extra
    params = dict(parse_qsl(parts.query))
    added: list[str] = []
    if "connect_timeout" not in params:
        added.append(f"connect_timeout={CONNECT_TIMEOUT_S}")
    if "options" not in params:
        added.append("options=" + quote(f"-c statement_timeout={STATEMENT_TIMEOUT_MS}", safe=""))
    if not added:
        return url
    return parts._replace(query="&".join(filter(None, [parts.query, *added]))).geturl()


def configured_url() -> str | None:
    return os.environ.get(DATABASE_URL_ENV) or None


def database_url(start_embedded: bool = False) -> str:
    """The system-of-record URL: the configured one, else the embedded server's (started if asked)."""
    if url := configured_url():
        return url
    embedded = EmbeddedPostgres()
    if start_embedded:
        return embedded.up().url()
    state = embedded.state()
    if state is None or not embedded.is_running():
        raise DatabaseNotConfigured(
            f"no database: set {DATABASE_URL_ENV} or run `benchmark-platform db up` for the embedded default"
        )
    return state.url()


def dagster_database_url(start_embedded: bool = False) -> str:
    """Dagster's storage URL, with the psycopg2 scheme (SQLAlchemy 2.1 maps plain postgresql:// to psycopg 3)."""
    url = os.environ.get(DAGSTER_DATABASE_URL_ENV) or configured_url()
    if not url:
        database_url(start_embedded)  # raises unless the embedded server runs (starts it when asked)
        state = EmbeddedPostgres().state()
        assert state is not None  # a running embedded server has its state file
        url = state.url("dagster")
    url = url.replace("postgresql://", "postgresql+psycopg2://", 1).replace("postgres://", "postgresql+psycopg2://", 1)
    return with_timeouts(url)


def redact(url: str) -> str:
    """A URL safe to print: the password, if any, replaced."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
