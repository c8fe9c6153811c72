"""`benchmark-platform db up|down|url|status|migrate`: the system of record."""

from __future__ import annotations

import argparse

from benchmark_platform.store import (
    DATABASE_URL_ENV,
    Database,
    EmbeddedPostgres,
    configured_url,
    database_url,
    migrate,
    redact,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("db", help="the PostgreSQL system of record")
    commands = parser.add_subparsers(dest="db_command", required=True)
    for name, handler, help_text in [
        ("up", _up, "start the embedded PostgreSQL (unless a URL is configured) and migrate"),
        ("down", _down, "stop the embedded PostgreSQL (its data stays)"),
        ("url", _url, "print the system-of-record URL"),
        ("status", _status, "say where the database is and whether it answers"),
        ("migrate", _migrate, "apply pending migrations from sql/"),
    ]:
        commands.add_parser(name, help=help_text).set_defaults(handler=handler)


def _up(_: argparse.Namespace) -> int:
    url = database_url(start_embedded=True)
    applied = migrate(Database(url))
    print(f"database up at {redact(url)}; migrations applied: {', '.join(applied) or 'none (up to date)'}")
    return 0


def _down(_: argparse.Namespace) -> int:
    if configured_url():
        print(f"{DATABASE_URL_ENV} is set: that server is not ours to stop")
        return 0
    print("embedded database stopped" if EmbeddedPostgres().down() else "embedded database was not running")
    return 0


def _url(_: argparse.Namespace) -> int:
    print(database_url())
    return 0


def _status(_: argparse.Namespace) -> int:
    if url := configured_url():
        where = f"configured by {DATABASE_URL_ENV}: {redact(url)}"
    else:
        embedded = EmbeddedPostgres()
        state = embedded.state()
        if state is None:
            print(f"embedded database: not initialised ({embedded.root}); run `benchmark-platform db up`")
            return 1
        if not embedded.is_running():
            print(f"embedded database: stopped (data in {state.data_dir})")
            return 1
        url, where = state.url(), f"embedded, data in {state.data_dir}: {state.url()}"
    db = Database(url)
    version = db.scalar("SHOW server_version")
    migrations = db.scalar("SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations'")
    applied = db.scalar("SELECT count(*) FROM schema_migrations") if migrations else 0
    print(f"{where}\nPostgreSQL {version}, {applied} migrations applied")
    return 0


def _migrate(_: argparse.Namespace) -> int:
    applied = migrate(Database(database_url()))
    print(f"applied: {', '.join(applied) or 'none (up to date)'}")
    return 0
