"""`benchmark-platform db up/url/status/down` round trip on a real embedded PostgreSQL in a temporary directory."""

import subprocess
import sys

import psycopg2
import pytest

from benchmark_platform.store.embedded import EmbeddedPostgres


@pytest.fixture
def embedded(tmp_path, monkeypatch):
    server = EmbeddedPostgres(tmp_path / "pg")
    yield server
    server.down()


def test_embedded_server_up_url_down_round_trip(embedded):
    state = embedded.up()
    assert embedded.is_running()
    with psycopg2.connect(state.url()) as conn, conn.cursor() as cur:
        cur.execute("SELECT current_database(), version()")
        database, version = cur.fetchone()
    assert database == "benchmark_platform" and "PostgreSQL 18" in version
    assert embedded.up() == state  # idempotent while running
    assert embedded.down() is True
    assert not embedded.is_running()
    assert embedded.down() is False
    restarted = embedded.up()  # the data directory survives a restart
    assert embedded.is_running() and restarted.data_dir == state.data_dir


def test_cli_db_commands(tmp_path):
    """The real console entry point, as a user runs it (the project-local embedded server)."""

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "benchmark_platform.cli.main", *args], capture_output=True, text=True, timeout=300
        )

    up = cli("db", "up")
    assert up.returncode == 0, up.stderr
    url = cli("db", "url")
    assert url.returncode == 0 and url.stdout.startswith("postgresql://")
    status = cli("db", "status")
    assert status.returncode == 0 and "migrations applied" in status.stdout
    with psycopg2.connect(url.stdout.strip()) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM schema_migrations")
        assert cur.fetchone()[0] >= 1
