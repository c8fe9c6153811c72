"""Numbered SQL migrations in sql/, applied in order, once each, recorded with their checksums.

An applied file that has since changed is an error naming the file: applied migrations are immutable; add a new one.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from benchmark_platform.paths import SQL_DIR
from benchmark_platform.store.db import Database

MIGRATION_NAME = re.compile(r"^(\d{4})_[a-z0-9_]+\.sql$")
LOCK_KEY = 7_304_112_019  # advisory lock: concurrent `migrate` calls apply each file once


class MigrationError(RuntimeError):
    pass


@dataclass(frozen=True)
class Migration:
    version: int
    path: Path

    @property
    def checksum(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def discover(sql_dir: Path = SQL_DIR) -> list[Migration]:
    migrations = []
    for path in sorted(sql_dir.glob("*.sql")):
        match = MIGRATION_NAME.match(path.name)
        if not match:
            raise MigrationError(f"{path}: migration files are named NNNN_lower_snake.sql")
        migrations.append(Migration(int(match.group(1)), path))
    versions = [m.version for m in migrations]
    if len(set(versions)) != len(versions):
        dupes = sorted({v for v in versions if versions.count(v) > 1})
        raise MigrationError(f"{sql_dir}: two migration files share number(s) {dupes}")
    return migrations


def migrate(db: Database, sql_dir: Path = SQL_DIR) -> list[str]:
    """Apply pending migrations; returns the names applied (empty when up to date)."""
    applied_now: list[str] = []
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK_KEY,))
        cur.execute("""CREATE TABLE IF NOT EXISTS schema_migrations (
                           version integer PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
                           applied_at timestamptz NOT NULL DEFAULT now())""")
        cur.execute("SELECT version, name, checksum FROM schema_migrations")
        applied = {version: (name, checksum) for version, name, checksum in cur.fetchall()}
        for migration in discover(sql_dir):
            if migration.version in applied:
                name, checksum = applied[migration.version]
                if checksum != migration.checksum or name != migration.path.name:
                    raise MigrationError(
                        f"{migration.path}: already applied as {name} with a different checksum; applied migrations "
                        "must not change — add a new numbered file instead"
                    )
                continue
            try:
                cur.execute(migration.path.read_text())
            except Exception as exc:
                raise MigrationError(f"{migration.path}: {exc}".strip()) from exc
            cur.execute(
                "INSERT INTO schema_migrations (version, name, checksum) VALUES (%s, %s, %s)",
                (migration.version, migration.path.name, migration.checksum),
            )
            applied_now.append(migration.path.name)
    return applied_now
