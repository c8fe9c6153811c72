"""How many runs a scheduled partition backfill (`automation.backfills`) becomes, on a real Dagster instance.

The spec's backfill sensor is evaluated as at a past cron tick; its request is submitted as the sensor daemon
submits it (a backfill in the instance), and Dagster's backfill daemon takes one iteration over it with the spec's
code location served by a real code server (gRPC subprocess). The instance is the project's (dagster.yaml: Postgres,
QueuedRunCoordinator): the runs the backfill creates stay queued, as no run-queue daemon runs, so they can be
counted without executing them.

    BENCHMARK_PLATFORM_DATABASE_URL=postgresql://.../empty_db python -m benchmark_platform.bench._backfillkit kina

Private Dagster APIs (the daemons' own entry points; no public ones exist): `PartitionBackfill`,
`execute_backfill_iteration`, the test workspace context."""

from __future__ import annotations

import json
import logging
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg

ASSETS = ("audit_findings", "evaluation_answers")  # in every spec: re-audit, then re-evaluate
PAST_TICK = datetime(2026, 11, 21, tzinfo=UTC).timestamp()  # a Saturday: the Sunday 05:00 tick has passed since

LOCATION = """from benchmark_platform.automation.config import BackfillSchedule
from benchmark_platform.defs import build_definitions
from benchmark_platform.spec import load_spec

spec = load_spec({spec!r})
entry = BackfillSchedule(name="rescore", assets={assets!r}, cron="0 5 * * 0")
spec = spec.model_copy(update={{"automation": spec.automation.model_copy(update={{"backfills": [entry]}})}})
defs = build_definitions(spec)
"""


def scheduled_backfill_runs(
    instance: dg.DagsterInstance, spec_name: str, folder: Path, assets: tuple[str, ...] = ASSETS
) -> tuple[int, list[dg.DagsterRun]]:
    """(partitions, runs) of one scheduled backfill of `assets` over every discipline of the spec."""
    from dagster._core.execution.backfill import BulkActionStatus, PartitionBackfill
    from dagster._core.test_utils import create_test_daemon_workspace_context
    from dagster._core.utils import make_new_backfill_id
    from dagster._core.workspace.load_target import PythonFileTarget
    from dagster._daemon.backfill import execute_backfill_iteration

    module = folder / f"location_{spec_name}.py"
    module.write_text(LOCATION.format(spec=spec_name, assets=list(assets)), encoding="utf-8")
    namespace: dict[str, object] = {}
    exec(compile(module.read_text(encoding="utf-8"), str(module), "exec"), namespace)
    spec, defs = namespace["spec"], namespace["defs"]
    assert isinstance(defs, dg.Definitions)
    [sensor] = [s for s in defs.sensors or [] if isinstance(s, dg.SensorDefinition) and "_backfill_" in s.name]
    context = dg.build_sensor_context(instance=instance, definitions=defs, cursor=str(PAST_TICK))
    [request] = sensor.evaluate_tick(context).run_requests or []
    assert request.asset_graph_subset is not None
    backfill_id = make_new_backfill_id()
    instance.add_backfill(  # what the sensor daemon does with a request that carries an asset graph subset
        PartitionBackfill.from_asset_graph_subset(
            backfill_id=backfill_id,
            dynamic_partitions_store=instance,
            backfill_timestamp=time.time(),
            asset_graph_subset=request.asset_graph_subset,
            tags=request.tags or {},
            title=None,
            description=None,
            run_config=None,
        )
    )
    target = PythonFileTarget(
        python_file=str(module), attribute="defs", working_directory=str(folder), location_name=spec_name
    )
    with create_test_daemon_workspace_context(target, instance) as workspace:
        list(execute_backfill_iteration(workspace, logging.getLogger("backfill")))
    runs = list(instance.get_runs(dg.RunsFilter(tags={"dagster/backfill": backfill_id})))
    backfill = instance.get_backfill(backfill_id)
    if backfill is not None:  # counted: the next spec's daemon iteration (another code location) leaves it alone
        instance.update_backfill(backfill.with_status(BulkActionStatus.CANCELED))
    return len(spec.discipline_keys), runs  # type: ignore[attr-defined]


def main() -> int:
    import os

    from benchmark_platform.defs.automation.requests import run_partitions
    from benchmark_platform.paths import PROJECT_ROOT
    from benchmark_platform.spec import load_spec
    from benchmark_platform.store import Database, migrate
    from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, dagster_database_url, database_url

    os.environ.setdefault("DAGSTER_DISABLE_TELEMETRY", "1")
    migrate(Database(database_url()))
    os.environ[DAGSTER_DATABASE_URL_ENV] = dagster_database_url()
    figures = {}
    with tempfile.TemporaryDirectory() as folder, dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
        for name in sys.argv[1:] or ["wine", "kina"]:
            started = time.perf_counter()
            partitions, runs = scheduled_backfill_runs(instance, name, Path(folder))
            keys = load_spec(name).discipline_keys
            figures[name] = {
                "partitions": partitions,
                "runs": len(runs),
                "partitions_per_run": sorted({len(run_partitions(r.tags, keys)) for r in runs}),
                "assets_per_run": sorted({len(r.asset_selection or ()) for r in runs}),
                "seconds": round(time.perf_counter() - started, 1),
            }
    print(json.dumps({"bench": "scheduled_backfill", **figures}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
