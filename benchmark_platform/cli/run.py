"""`benchmark-platform run` and `benchmark-platform dev`: the main job, and the Dagster UI with its daemon.

Both resolve the database first (starting the embedded default when no URL is configured) and hand Dagster the
connection strings through the environment, which is how dagster.yaml and the `database` resource read them.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from benchmark_platform.cli.progress import benchmark_summary
from benchmark_platform.paths import LOCAL_DIR, PROJECT_ROOT, RELEASES_DIR
from benchmark_platform.spec import DEFAULT_SPEC, BenchmarkSpec, load_spec
from benchmark_platform.store import (
    DAGSTER_DATABASE_URL_ENV,
    DATABASE_URL_ENV,
    Database,
    dagster_database_url,
    database_url,
    migrate,
    redact,
    spec_lock,
)

DEFAULT_RUN_SPECS = (DEFAULT_SPEC, "mmlu_pro")  # what `make run` builds: the wine benchmark and compact MMLU-Pro
SUMMARY_TABLES = ("documents", "facts", "selected_facts", "items", "item_facts", "audit_findings", "evaluation_answers")


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run",
        help="build what is stale or missing (Dagster's stale status) of the default benchmarks (wine, mmlu_pro) or "
        "the given specs",
    )
    run.add_argument(
        "--spec",
        action="append",
        help=f"bundled spec name or path to a spec.yaml (repeatable; default: {', '.join(DEFAULT_RUN_SPECS)})",
    )
    run.add_argument(
        "--releases-dir",
        type=Path,
        default=RELEASES_DIR,
        help=f"where release bundles are written, <dir>/<spec>/<version>/ (default: {RELEASES_DIR})",
    )
    run.add_argument(
        "--force", action="store_true", help="rebuild every asset of every partition, stale or not (a full rebuild)"
    )
    run.add_argument(
        "--plan",
        action="store_true",
        help="observe the inputs and print what Dagster's stale status says is stale or missing, per asset and "
        "partition (what the run would start from, and the UI marks); build nothing",
    )
    run.set_defaults(handler=_serialized_run)
    dev = subparsers.add_parser("dev", help="open the Dagster UI (with its daemon) on 127.0.0.1")
    dev.add_argument("--port", type=int, default=3000)
    dev.set_defaults(handler=_dev)


def prepare_environment() -> str:
    """Start/migrate the database and export what Dagster reads; returns the system-of-record URL."""
    url = database_url(start_embedded=True)
    migrate(Database(url))
    os.environ[DATABASE_URL_ENV] = url
    os.environ[DAGSTER_DATABASE_URL_ENV] = dagster_database_url()
    os.environ["DAGSTER_HOME"] = str(PROJECT_ROOT)
    os.environ["DAGSTER_DISABLE_TELEMETRY"] = "1"
    return url


def summary(db: Database, spec: BenchmarkSpec) -> dict[str, int]:
    counts = {}
    for table in SUMMARY_TABLES:
        column = "spec" if table in {"facts", "selected_facts", "items"} else None
        if column:
            counts[table] = db.scalar(f"SELECT count(*) FROM {table} WHERE spec = %s", (spec.name,))
        else:
            counts[table] = db.scalar(f"SELECT count(*) FROM {table}")
    return counts


def _serialized_run(args: argparse.Namespace) -> int:
    """`_run`, while no other build of the same specs runs (store/runlock.py)."""
    print("starting the database (the embedded PostgreSQL unless a URL is configured) and migrating ...", flush=True)
    url = prepare_environment()
    specs = [load_spec(name) for name in (args.spec or DEFAULT_RUN_SPECS)]
    with spec_lock(url, [spec.name for spec in specs]):
        return _plan(specs, args) if args.plan else _run(url, specs, args)


def _plan(specs: list[BenchmarkSpec], args: argparse.Namespace) -> int:
    from benchmark_platform.defs.pipeline import stale_plan
    from benchmark_platform.defs.release.assets import ReleaseDirectory

    for spec in specs:
        plan = stale_plan(spec, resources={"release_directory": ReleaseDirectory(root=str(args.releases_dir))})
        print(f"== {spec.name}: {sum(len(p) for p in plan.values())} stale or missing asset partitions")
        for asset_key, partitions in plan.items():
            print(f"{asset_key.to_user_string()}: {', '.join(p or '(unpartitioned)' for p in partitions)}")
    return 0


def _run(url: str, specs: list[BenchmarkSpec], args: argparse.Namespace) -> int:
    # Dagster loads only for the commands that run it
    from benchmark_platform.cli.runs import recover
    from benchmark_platform.defs.pipeline import materialize_all
    from benchmark_platform.defs.progress import EventLogFile
    from benchmark_platform.defs.release.assets import ReleaseDirectory

    events = EventLogFile(LOCAL_DIR / "logs" / "dagster-events.log")
    print(f"database {redact(url)}; Dagster's event log: {events.path}", flush=True)
    recover()  # a run killed earlier must not hold the pools this one needs
    db = Database(url)
    started = time.perf_counter()
    summaries: list[str] = []
    timings: list[str] = []
    for spec in specs:
        print(
            f"== building {spec.name} {spec.release.version}: {len(spec.sources)} sources, "
            f"{'an item bank, ' if spec.item_bank else ''}{len(spec.discipline_keys)} disciplines",
            flush=True,
        )
        began = time.perf_counter()
        gate = materialize_all(
            spec,
            log=lambda line: print(line, flush=True),
            events=events,
            resources={"release_directory": ReleaseDirectory(root=str(args.releases_dir))},
            starting=lambda prefix: print(prefix, end=" ", flush=True),
            # Dagster's console repeats every event with stack traces; --debug restores it
            console_level="DEBUG" if args.debug else "CRITICAL",
            force=args.force,
        )
        timings.append(f"{spec.name} {time.perf_counter() - began:.0f} s")
        path = db.scalar(
            "SELECT path FROM releases WHERE spec = %s AND version = %s", (spec.name, spec.release.version)
        )
        summaries += benchmark_summary(db, spec, path if gate.passed else None)
    print("\n".join(summaries))
    print(f"done in {time.perf_counter() - started:.0f} s ({', '.join(timings)}); Dagster's event log: {events.path}")
    return 0


def _set_pool_limits() -> None:
    """The concurrency pools of every code location (stages, LLM providers, database) with their chosen limits."""
    import dagster as dg

    from benchmark_platform.defs.automation.concurrency import set_pool_limits, workspace_pool_limits

    limits = workspace_pool_limits(PROJECT_ROOT / "workspace.yaml")
    with dg.DagsterInstance.get() as instance:
        set_pool_limits(instance, limits)
    print(f"concurrency pools: {', '.join(f'{pool} {slots}' for pool, slots in sorted(limits.items()))}", flush=True)


def _dev(args: argparse.Namespace) -> int:
    prepare_environment()
    from benchmark_platform.cli.runs import recover

    recover()  # at once; afterwards the daemon's run monitoring does it (dagster.yaml)
    _set_pool_limits()
    command = [
        sys.executable,
        "-m",
        "dagster",
        "dev",
        "-h",
        "127.0.0.1",
        "-p",
        str(args.port),
        "-w",
        str(PROJECT_ROOT / "workspace.yaml"),
    ]
    # `dagster dev` stops its webserver and daemon cleanly on SIGINT only. A process started in the background
    # inherits SIGINT ignored, so restore it for the child (own session) and forward SIGINT/SIGTERM we receive.
    process = subprocess.Popen(
        command,
        cwd=PROJECT_ROOT,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )

    def forward(signum: int, _frame: object) -> None:
        process.send_signal(signal.SIGINT)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    return process.wait()
