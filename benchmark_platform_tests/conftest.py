"""Shared fixtures: the real PostgreSQL (the configured server, else the embedded one), real data, specs."""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg2
import pytest

from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.review import security
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
    "cli/test_run_parallel.py",
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


def _admin_execute(url: str, *statements: tuple[str, tuple[object, ...]]) -> None:
    """Statements on the server's `postgres` database, outside a transaction (CREATE/DROP DATABASE refuse one)."""
    conn = _admin(url)  # not `with conn`: psycopg2 would open a transaction
    try:
        with conn.cursor() as cur:
            for sql, params in statements:
                cur.execute(sql, params)
    finally:
        conn.close()


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
        _admin_execute(server_url, (f'CREATE DATABASE "{name}"' + (f' TEMPLATE "{template}"' if template else ""), ()))
        created.append(name)
        return with_database(server_url, name)

    yield make

    def drop(name: str) -> None:
        _admin_execute(server_url, (f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', ()))

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


TEMPLATES_FILE = "built_once_templates.txt"  # in the run's base temp dir: what pytest_sessionfinish drops


def _run_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The base temp dir of this pytest run, the same for every xdist worker (each has a `popen-gwN` inside it)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


@pytest.fixture(scope="session")
def built_once(
    migrated_database, fresh_database, server_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Callable[[str, Callable[[str], None]], str]:
    """built_once(name, build): a private copy of a database that `build(url)` filled once per test run.

    The first process to ask builds it into a template database (under a file lock, so the other xdist worker waits
    instead of building it again) and every caller, that one included, gets its own clone (~0.2 s), free to write.
    The templates outlive the workers, which finish at different times, and `pytest_sessionfinish` of the run's
    controlling process drops them.
    """
    root = _run_root(tmp_path_factory)

    def make(name: str, build: Callable[[str], None]) -> str:
        done = root / f"built_once_{name}.done"
        with (root / f"built_once_{name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if not done.is_file():
                template = f"bp_once_{name}_{uuid.uuid4().hex[:10]}"
                with (root / TEMPLATES_FILE).open("a") as listed:  # listed first: a failed build is dropped too
                    listed.write(template + "\n")
                migrated = urlsplit(migrated_database("bp_once")).path.lstrip("/")
                _admin_execute(server_url, (f'CREATE DATABASE "{template}" TEMPLATE "{migrated}"', ()))
                build(with_database(server_url, template))
                # a template must have no session to be cloned
                _admin_execute(server_url, (TERMINATE, (template,)))
                done.write_text(template)
            return fresh_database(f"bp_{name}", template=done.read_text())

    return make


TERMINATE = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s"


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The controlling process (not an xdist worker) drops the templates of `built_once`."""
    if hasattr(session.config, "workerinput"):
        return
    listed = session.config._tmp_path_factory.getbasetemp() / TEMPLATES_FILE  # type: ignore[attr-defined]
    if not listed.is_file():
        return
    drops = [(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)', ()) for name in listed.read_text().split()]
    _admin_execute(database_url(start_embedded=True), *drops)


@pytest.fixture(autouse=True)
def cheap_scrypt(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The suite's accounts are hashed at scrypt N=2^12, not the production 2^17 (0.75 s a hash, 1 s a check: about
    half of `make check` went to hashing fixture passwords). Tests marked `production_scrypt` keep today's cost."""
    if request.node.get_closest_marker("production_scrypt") is None:
        monkeypatch.setattr(security, "SCRYPT_N", 2**12)


@pytest.fixture(scope="session")
def db(migrated_database) -> Database:
    """One migrated database for the session; tests write to their own spec/partition names or clean up."""
    return Database(migrated_database())


@pytest.fixture(scope="session")
def wine_spec() -> BenchmarkSpec:
    return load_spec("wine")
