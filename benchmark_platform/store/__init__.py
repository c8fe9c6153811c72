"""PostgreSQL, the system of record: connection (`Database`), migrations, and the embedded default server."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.store.current import clear_current, make_current
    from benchmark_platform.store.db import Database, as_json, insert_rows, returned
    from benchmark_platform.store.drop import drop_spec, spec_row_counts
    from benchmark_platform.store.embedded import EmbeddedPostgres
    from benchmark_platform.store.migrations import MigrationError, migrate
    from benchmark_platform.store.runlock import spec_lock
    from benchmark_platform.store.settings import (
        DAGSTER_DATABASE_URL_ENV,
        DATABASE_URL_ENV,
        configured_url,
        dagster_database_url,
        database_url,
        redact,
        with_timeouts,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "DAGSTER_DATABASE_URL_ENV",
    "DATABASE_URL_ENV",
    "Database",
    "EmbeddedPostgres",
    "MigrationError",
    "as_json",
    "clear_current",
    "configured_url",
    "dagster_database_url",
    "database_url",
    "drop_spec",
    "insert_rows",
    "make_current",
    "migrate",
    "redact",
    "returned",
    "spec_lock",
    "spec_row_counts",
    "with_timeouts",
]
