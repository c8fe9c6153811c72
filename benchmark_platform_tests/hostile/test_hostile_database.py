"""A frozen database and a second build (issue 40, 7 and 8), on a PostgreSQL server of the test's own (SIGSTOP on
the shared server would freeze every other session's tests)."""

from __future__ import annotations

import subprocess
import sys
import time

import psycopg2
import pytest

from benchmark_platform.bench._scratchpg import ScratchServer
from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, DATABASE_URL_ENV, with_timeouts

# The CLI with a short connect timeout (the default is 30 s), as a user would set in their own entry point.
SHORT_TIMEOUT = """
import sys
import benchmark_platform.store.settings as settings
settings.CONNECT_TIMEOUT_S = 3
from benchmark_platform.cli.main import main
sys.exit(main(sys.argv[1:]))
"""
HANG_GUARD_S = 600  # not a speed limit: before the fix these commands never returned


@pytest.fixture(scope="module")
def scratch():
    server = ScratchServer()
    yield server
    server.close()


def cli(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in __import__("os").environ.items() if k != DAGSTER_DATABASE_URL_ENV}
    env[DATABASE_URL_ENV] = url
    return subprocess.run(
        [sys.executable, "-c", SHORT_TIMEOUT, *args], capture_output=True, text=True, env=env, timeout=HANG_GUARD_S
    )


def one_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in stderr, stderr[-2000:]
    return lines[0]


def test_timeouts_are_added_unless_the_url_sets_them():
    url = with_timeouts("postgresql://u@h:5/db")
    assert "connect_timeout=30" in url and "statement_timeout" in url
    own = "postgresql://u@h:5/db?connect_timeout=7&options=-c%20statement_timeout%3D5"
    assert with_timeouts(own) == own
    assert "connect_timeout=30" in with_timeouts("host=h dbname=db")


def test_the_statement_timeout_reaches_the_server(scratch):
    with psycopg2.connect(with_timeouts(scratch.url())) as conn, conn.cursor() as cur:
        cur.execute("SHOW statement_timeout")
        assert cur.fetchone()[0] == "30min"


@pytest.mark.slow  # over 3 s with its setup: the full suite only
@pytest.mark.parametrize("command", [["db", "status"], ["run", "--spec", "wine"]])
def test_a_frozen_database_stops_a_command_with_one_line(scratch, command):
    with scratch.frozen():
        result = cli(scratch.url(), *command)
    assert result.returncode == 2
    assert "the database does not answer" in one_error(result.stderr)


def test_a_second_build_of_a_spec_stops_at_once_and_says_why(scratch):
    from benchmark_platform.store.runlock import spec_lock

    url = scratch.url()
    with spec_lock(url, ["wine"], "run"):  # the first build, still running
        result = cli(url, "run", "--spec", "wine")
        with psycopg2.connect(url) as conn, conn.cursor() as cur:  # the first one's lock is untouched
            cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted")
            assert cur.fetchone()[0] == 1
    assert result.returncode == 2
    line = one_error(result.stderr)
    assert "wine: benchmark-platform run of wine (pid" in line and "is in progress since" in line
    assert "changed nothing" in line


def test_the_lock_is_free_again_when_its_holder_ends(scratch):
    from benchmark_platform.store.runlock import SpecBusy, spec_lock

    url = scratch.url()
    with spec_lock(url, ["a", "b"]):
        with pytest.raises(SpecBusy, match="b: benchmark-platform run of a,b"):
            with spec_lock(url, ["b", "c"]):
                pass
    with spec_lock(url, ["b", "c"]):  # the holder ended: free
        pass


@pytest.mark.slow  # a real build of wine up to its second group of sources
def test_a_database_lost_during_a_build_is_one_line():
    """Issue 40, 13: the server stopped while `run` builds printed about 85 lines (Dagster's handlers' tracebacks)."""
    server = ScratchServer()  # its own: this test stops it for good
    try:
        env = {k: v for k, v in __import__("os").environ.items() if k != DAGSTER_DATABASE_URL_ENV}
        env[DATABASE_URL_ENV] = server.url()
        build = subprocess.Popen(
            [sys.executable, "-c", SHORT_TIMEOUT, "run", "--spec", "wine"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert build.stdout is not None
        for line in build.stdout:  # until the build is well under way: its second group of assets
            if line.startswith("[wine sources 2/"):
                break
        time.sleep(5)  # inside a step: Dagster's event-log writes and connection retries fail there (21 lines before)
        server.stop()
        _, stderr = build.communicate(timeout=HANG_GUARD_S)
    finally:
        server.close()
    assert build.returncode == 2
    assert "lost the database" in one_error(stderr) or "does not answer" in one_error(stderr)
