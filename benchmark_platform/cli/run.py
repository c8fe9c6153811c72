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
import tempfile
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
    run.add_argument(
        "--jobs",
        type=int,
        default=None,
        help="specs built at once, each in its own process (default: one per core, at most one per spec; 1 builds "
        "them one after the other)",
    )
    # the process building one spec of a parallel run writes its summary here, for the parent to print in order
    run.add_argument("--summary-file", type=Path, help=argparse.SUPPRESS)
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
    """`_run`, while no other build of the same specs runs (store/runlock.py); several specs in parallel processes
    when the machine has the cores (`_run_in_parallel`)."""
    child = args.summary_file is not None
    if not child:
        print(
            "starting the database (the embedded PostgreSQL unless a URL is configured) and migrating ...", flush=True
        )
    url = prepare_environment()
    names = list(args.spec or DEFAULT_RUN_SPECS)
    specs = [load_spec(name) for name in names]
    if min(len(specs), args.jobs or available_cores()) > 1 and not args.plan:
        return _run_in_parallel({spec.name: given for spec, given in zip(specs, names, strict=True)}, args)
    with spec_lock(url, [spec.name for spec in specs]):
        return _plan(specs, args) if args.plan else _run(url, specs, args)


def available_cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _run_in_parallel(specs: dict[str, str], args: argparse.Namespace) -> int:
    """Each spec (name -> the name or path given) built by its own `benchmark-platform run --spec` process, all at once.

    Why processes and not Dagster's multiprocess executor: within a partition the stages form a chain, so a run has
    nothing to execute in parallel, and that executor would start a Python (about 1.1 s of CPU importing Dagster) for
    each of some 300 steps. Different specs share nothing but the instance: each process runs its spec's Dagster jobs
    in process, as a lone `run --spec` does, and Dagster's concurrency pools (one step per stage, instance-wide)
    arbitrate between them. The summaries are printed in spec order once every process has finished; a spec that
    fails does not stop the others, and the exit status is the worst of them.
    """
    from benchmark_platform.cli.runs import recover

    recover()  # once, before the builds start (each build skips it)
    started = time.perf_counter()
    print(f"building {', '.join(specs)} at once, one process each", flush=True)
    with tempfile.TemporaryDirectory(prefix="benchmark-platform-run-") as scratch:
        summaries = [Path(scratch) / f"{n}.txt" for n in range(len(specs))]
        debug = ["--debug"] if args.debug else []
        force = ["--force"] if args.force else []
        children = {
            name: subprocess.Popen(
                [sys.executable, "-m", "benchmark_platform.cli.main", *debug, "run", "--spec", given, *force]
                + ["--releases-dir", str(args.releases_dir), "--summary-file", str(summary)]
            )
            for (name, given), summary in zip(specs.items(), summaries, strict=True)
        }
        timings: dict[str, str] = {}
        while len(timings) < len(children):
            for name, child in children.items():
                if name not in timings and child.poll() is not None:
                    took = f"{time.perf_counter() - started:.0f} s"
                    timings[name] = f"{name} {took}" if child.returncode == 0 else f"{name} failed after {took}"
            time.sleep(0.2)
        for summary in summaries:
            if summary.is_file():
                print(summary.read_text(), end="", flush=True)
    print(f"done in {time.perf_counter() - started:.0f} s ({', '.join(timings[n] for n in specs)})", flush=True)
    return max(child.returncode for child in children.values())


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
    child = args.summary_file is not None  # one spec of `_run_in_parallel`: whole lines, the summary to its file
    if not child:
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
            starting=None if child else lambda prefix: print(prefix, end=" ", flush=True),
            # Dagster's console repeats every event with stack traces; --debug restores it
            console_level="DEBUG" if args.debug else "CRITICAL",
            force=args.force,
        )
        timings.append(f"{spec.name} {time.perf_counter() - began:.0f} s")
        path = db.scalar(
            "SELECT path FROM releases WHERE spec = %s AND version = %s", (spec.name, spec.release.version)
        )
        summaries += benchmark_summary(db, spec, path if gate.passed else None)
    if child:
        args.summary_file.write_text("".join(f"{line}\n" for line in summaries))
        return 0
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
