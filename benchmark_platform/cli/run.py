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
from dataclasses import dataclass

from benchmark_platform.cli.progress import (
    QUIET_RUN_CONFIG,
    EventLogFile,
    benchmark_summary,
    partition_prefix,
    partition_stages,
    stage_outcomes,
)
from benchmark_platform.paths import LOCAL_DIR, PROJECT_ROOT
from benchmark_platform.spec import DEFAULT_SPEC, BenchmarkSpec, load_spec
from benchmark_platform.store import Database, dagster_database_url, database_url, migrate
from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, DATABASE_URL_ENV, redact

DEFAULT_RUN_SPECS = (DEFAULT_SPEC, "mmlu_pro")  # what `make run` builds: the wine benchmark and compact MMLU-Pro
SUMMARY_TABLES = ("documents", "facts", "selected_facts", "items", "item_facts", "audit_findings", "evaluation_answers")


def register(subparsers: argparse._SubParsersAction) -> None:
    run = subparsers.add_parser(
        "run", help="materialise every asset of the default benchmarks (wine, mmlu_pro) or the given specs"
    )
    run.add_argument(
        "--spec",
        action="append",
        help=f"bundled spec name or path to a spec.yaml (repeatable; default: {', '.join(DEFAULT_RUN_SPECS)})",
    )
    run.set_defaults(handler=_run)
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


def materialize_all(
    spec: BenchmarkSpec,
    instance=None,  # noqa: ANN001
    resources: dict | None = None,
    log=print,  # noqa: ANN001 - a print-like callable
    events: EventLogFile | None = None,
    disciplines: list[str] | None = None,
    starting=None,  # noqa: ANN001 - called with a partition's prefix before it runs (a terminal prints it at once)
) -> ReleaseGate:
    """Every asset for every partition, in dependency order: sources, then disciplines, then unpartitioned assets;
    then the release gate's blocking checks, and the release only if they pass (as `<spec>_release_job` does).

    `instance` defaults to the project's Dagster instance (dagster.yaml); `resources` override the definitions'.
    Prints one line per partition (each stage: rows and time); Dagster's events go to `events` (a file), if given.
    `disciplines` restricts the discipline partitions run (default: all).
    """
    import dagster as dg

    from benchmark_platform.defs import build_definitions
    from benchmark_platform.defs.automation.checks import release_input_checks
    from benchmark_platform.defs.common import key

    defs = build_definitions(spec)
    assets = [a for a in defs.assets if isinstance(a, dg.AssetsDefinition)]
    resources = {**defs.resources, **(resources or {})}
    instance = instance or dg.DagsterInstance.get()
    release_key = key(spec, "release")
    source_ids = [s.id for s in spec.sources]
    groups = [
        (
            "sources",
            source_ids,
            [a for a in assets if a.partitions_def and list(a.partitions_def.get_partition_keys()) == source_ids],
        ),
        (
            "disciplines",
            disciplines or spec.discipline_keys,
            [
                a
                for a in assets
                if a.partitions_def and list(a.partitions_def.get_partition_keys()) == spec.discipline_keys
            ],
        ),
        (
            "unpartitioned",
            [None],
            [a for a in assets if a.partitions_def is None and release_key not in a.keys],
        ),
    ]

    def run(selection: dg.AssetSelection, partition_key: str | None, extra: list | None = None):  # noqa: ANN202
        result = dg.materialize(
            [*assets, *(extra or [])],
            selection=selection,
            partition_key=partition_key,
            instance=instance,
            resources=resources,
            raise_on_error=True,
            run_config=QUIET_RUN_CONFIG,
        )
        if events is not None:
            events.append_run(instance, result.run_id)
        return result

    for label, partition_keys, selected in groups:
        if not selected:
            continue
        for n, partition_key in enumerate(partition_keys, 1):
            prefix = partition_prefix(spec.name, label, n, len(partition_keys), partition_key)
            if starting:
                starting(prefix)
            result = run(dg.AssetSelection.assets(*selected), partition_key)
            stages = partition_stages(stage_outcomes(result, instance))
            log(stages if starting else f"{prefix} {stages}")
    checks = release_input_checks(spec)
    result = run(dg.AssetSelection.checks(*[k for c in checks for k in c.check_keys]), None, checks)
    gate = ReleaseGate([(e.check_name, e.passed) for e in result.get_asset_check_evaluations()])
    log(f"[{spec.name} release gate] {gate.describe()}")
    if gate.passed:
        prefix = partition_prefix(spec.name, "release", 1, 1, None)
        if starting:
            starting(prefix)
        result = run(dg.AssetSelection.assets(release_key), None)
        stages = partition_stages(stage_outcomes(result, instance))
        log(stages if starting else f"{prefix} {stages}")
    return gate


@dataclass(frozen=True)
class ReleaseGate:
    outcomes: list[tuple[str, bool]]  # (blocking check, passed)

    @property
    def passed(self) -> bool:
        return all(ok for _, ok in self.outcomes)

    def describe(self) -> str:
        checks = ", ".join(f"{name} {'passed' if ok else 'FAILED'}" for name, ok in sorted(self.outcomes))
        return f"{'passed' if self.passed else 'FAILED: no release written'} ({checks})"


def summary(db: Database, spec: BenchmarkSpec) -> dict[str, int]:
    counts = {}
    for table in SUMMARY_TABLES:
        column = "spec" if table in {"facts", "selected_facts", "items"} else None
        if column:
            counts[table] = db.scalar(f"SELECT count(*) FROM {table} WHERE spec = %s", (spec.name,))
        else:
            counts[table] = db.scalar(f"SELECT count(*) FROM {table}")
    return counts


def _run(args: argparse.Namespace) -> int:
    specs = [load_spec(name) for name in (args.spec or DEFAULT_RUN_SPECS)]
    print("starting the database (the embedded PostgreSQL unless a URL is configured) and migrating ...", flush=True)
    url = prepare_environment()
    events = EventLogFile(LOCAL_DIR / "logs" / "dagster-events.log")
    print(f"database {redact(url)}; Dagster's event log: {events.path}", flush=True)
    db = Database(url)
    started = time.perf_counter()
    summaries, timings = [], []
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
            starting=lambda prefix: print(prefix, end=" ", flush=True),
        )
        timings.append(f"{spec.name} {time.perf_counter() - began:.0f} s")
        path = db.scalar(
            "SELECT path FROM releases WHERE spec = %s AND version = %s", (spec.name, spec.release.version)
        )
        summaries += benchmark_summary(db, spec, path if gate.passed else None)
    print("\n".join(summaries))
    print(f"done in {time.perf_counter() - started:.0f} s ({', '.join(timings)}); Dagster's event log: {events.path}")
    return 0


def _dev(args: argparse.Namespace) -> int:
    prepare_environment()
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
