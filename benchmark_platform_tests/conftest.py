"""Shared fixtures: the real PostgreSQL (the configured server, else the embedded one), real data, specs."""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest

from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database, migrate
from benchmark_platform.store.settings import database_url

SHARED_DATA = PROJECT_ROOT.parent / "shared" / "data"

os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")

# The longest modules first (serial seconds of `make test`, 2026-12-03 session 7 at load 1-9: daemon 540, mmlu_pro
# 268, wine 188, crash recovery 174, release bundle 132, stale status 104, ...): the Makefile's `--dist loadfile
# --no-loadscope-reorder` hands modules to the two processes in this order, so the long ones overlap instead of one
# starting last and setting the wall time (xdist's default order, by number of tests, started the one-test builds
# last). Then the other modules with slow tests, then the rest, each module's tests in their own order.
LONGEST_FIRST = (
    "automation/test_daemon_automation.py",
    "pipeline/test_ui_materialize.py",
    "pipeline/test_mmlu_pro_release.py",
    "pipeline/test_wine_pipeline.py",
    "automation/test_crash_recovery.py",
    "release/test_release_bundle.py",
    "pipeline/test_stale_status.py",
    "review/test_review_chromium.py",
    "review/test_review_web.py",
    "pipeline/test_kina_item_bank.py",
    "itembank/test_readme_own_bank.py",
    "selection/test_item_selection.py",
    "automation/test_scheduled_backfill.py",
    "hostile/test_hostile_database.py",
    "pipeline/test_cross_blas.py",
    "pipeline/test_incremental.py",
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    slow = {item.path for item in items if item.get_closest_marker("slow")}

    def order(item: pytest.Item) -> int:
        name = item.path.relative_to(here).as_posix()
        return rank.get(name, len(rank) + (item.path not in slow))

    items.sort(key=order)  # stable: the order within a module, and among unlisted modules, is collection order


def with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _admin(url: str) -> psycopg2.extensions.connection:
    conn = psycopg2.connect(with_database(url, "postgres"))
    conn.autocommit = True
    return conn


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.exists():
        pytest.skip(f"real data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def server_url() -> str:
    """A URL on the test server: BENCHMARK_PLATFORM_DATABASE_URL's server in CI, else the embedded default."""
    return database_url(start_embedded=True)


@pytest.fixture(scope="session")
def fresh_database(server_url: str) -> Iterator[callable]:
    """A factory of new empty databases on the test server, all dropped at the end of the session."""
    created: list[str] = []

    def make(prefix: str = "bp_test", template: str | None = None) -> str:
        name = f"{prefix}_{uuid.uuid4().hex[:10]}"
        conn = _admin(server_url)  # not `with conn`: psycopg2 would open a transaction, CREATE DATABASE refuses one
        try:
            with conn.cursor() as cur:
                cur.execute(f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""))
        finally:
            conn.close()
        created.append(name)
        return with_database(server_url, name)

    yield make

    def drop(name: str) -> None:
        conn = _admin(server_url)
        try:
            with conn.cursor() as cur:
                cur.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        finally:
            conn.close()

    # Each DROP DATABASE waits for a checkpoint (seconds when other sessions write): concurrent drops share one.
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(drop, created))


@pytest.fixture(scope="session")
def migrated_database(fresh_database) -> Callable[[], str]:
    """A factory of new databases with every migration applied: cloned from one migrated template per test process.

    CREATE DATABASE ... TEMPLATE copies the files (~0.2 s) where migrating anew costs ~2 s; the template is private
    to this process (its own name), so parallel workers never clone a template another one is writing.
    """
    template: list[str] = []

    def make(prefix: str = "bp_test") -> str:
        if not template:
            url = fresh_database("bp_template")
            database = Database(url)
            migrate(database)
            template.append(urlsplit(url).path.lstrip("/"))
        return fresh_database(prefix, template=template[0])

    return make


@pytest.fixture(scope="session")
def db(migrated_database) -> Database:
    """One migrated database for the session; tests write to their own spec/partition names or clean up."""
    return Database(migrated_database())


@pytest.fixture(scope="session")
def wine_spec() -> BenchmarkSpec:
    return load_spec("wine")
