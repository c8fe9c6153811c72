"""PostgreSQL, the system of record: connection (`Database`), migrations, and the embedded default server."""

from benchmark_platform.store.db import Database, as_json, insert_rows
from benchmark_platform.store.migrations import MigrationError, migrate
from benchmark_platform.store.settings import dagster_database_url, database_url

__all__ = ["Database", "MigrationError", "as_json", "dagster_database_url", "database_url", "insert_rows", "migrate"]
