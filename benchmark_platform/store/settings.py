"""Where the system of record is: a configured URL, or else the embedded default.

Connection strings are the only environment knobs (DESIGN rule 5):
- BENCHMARK_PLATFORM_DATABASE_URL: the system of record, e.g. postgresql://user@host:5432/benchmark_platform
- BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL: Dagster's instance storage (default: the same server, database `dagster`
  for the embedded server, the same database otherwise).
"""

from __future__ import annotations

import os

from benchmark_platform.store.embedded import EmbeddedPostgres

DATABASE_URL_ENV = "BENCHMARK_PLATFORM_DATABASE_URL"
DAGSTER_DATABASE_URL_ENV = "BENCHMARK_PLATFORM_DAGSTER_DATABASE_URL"


class DatabaseNotConfigured(RuntimeError):
    pass


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
    return url.replace("postgresql://", "postgresql+psycopg2://", 1).replace("postgres://", "postgresql+psycopg2://", 1)


def redact(url: str) -> str:
    """A URL safe to print: the password, if any, replaced."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
    return urlunsplit(parts._replace(netloc=netloc))
