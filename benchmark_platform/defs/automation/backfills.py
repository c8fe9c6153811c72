"""Scheduled partition backfills (`automation.backfills` in the spec): per entry, a job over the chosen assets (the
UI launches it as a backfill of every discipline partition) and a cron-driven sensor that submits the same backfill.
Every discipline stage has a single-run backfill policy, so the backfill of N disciplines is one run (the stages of
one policy and partition set run together, in dependency order), not N; `anchors`, one discipline per run on
purpose, would add one run per discipline (defs/anchors).

Why a sensor and not a `dg.schedule`: only the sensor daemon turns a request into a backfill (one backfill per tick,
shown under Backfills with each discipline's status, its runs queued on the stages' pools, assets of another policy,
e.g. `anchors`, run before the stages that read them); a schedule can only launch runs.
The cursor is the last tick handled, stored in the instance's Postgres: a restarted daemon does not repeat a tick,
and a tick missed while the daemon was down is handled once, not once per missed tick."""

from __future__ import annotations

import time
from datetime import datetime

import dagster as dg

# Private Dagster imports, each because 1.13.27 has no public equivalent:
# - AssetGraphSubset: the only way a sensor submits a backfill is `RunRequest.for_asset_graph_subset`, whose argument
#   type Dagster keeps private ("intentionally left private"; no public constructor exists yet). Built below from
#   public partition subsets only;
# - UnresolvedAssetJobDefinition: the return type of the public `define_asset_job`, for annotations only;
# - cron_string_iterator: the cron ticks between two instants (a `dg.schedule` evaluates at its ticks, but schedules
#   cannot submit backfills, and Dagster exports no cron iterator).
from dagster._core.definitions.assets.graph.asset_graph_subset import AssetGraphSubset
from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition
from dagster._utils.schedules import cron_string_iterator

from benchmark_platform.automation.config import BackfillSchedule
from benchmark_platform.defs.common import discipline_partitions, key
from benchmark_platform.spec import BenchmarkSpec

SCHEDULE_TAG = "benchmark_platform/schedule"


def due_tick(cron: str, timezone: str, last: float, now: float) -> datetime | None:
    """The latest cron tick after `last` and at or before `now` (None: no tick passed)."""
    due = None
    for tick in cron_string_iterator(last, cron, timezone):
        if tick.timestamp() > now:
            break
        if tick.timestamp() > last:
            due = tick
    return due


def backfill_job(spec: BenchmarkSpec, entry: BackfillSchedule) -> UnresolvedAssetJobDefinition:
    return dg.define_asset_job(
        f"{spec.name}_backfill_{entry.name}",
        selection=dg.AssetSelection.assets(*[key(spec, a) for a in entry.assets]),
        partitions_def=discipline_partitions(spec),
        tags={SCHEDULE_TAG: entry.name},
        description=f"{', '.join(entry.assets)} of a chosen set of disciplines; Launch backfill → all partitions.",
    )


def backfill_sensor(spec: BenchmarkSpec, entry: BackfillSchedule) -> dg.SensorDefinition:
    keys = [key(spec, a) for a in entry.assets]
    partitions = discipline_partitions(spec)

    @dg.sensor(
        name=f"{spec.name}_backfill_{entry.name}_schedule",
        asset_selection=keys,
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING if entry.running else dg.DefaultSensorStatus.STOPPED,
        description=f"At `{entry.cron}` ({spec.automation.timezone}): one backfill of {', '.join(entry.assets)} "
        "over every discipline partition.",
    )
    def scheduled_backfill(context: dg.SensorEvaluationContext) -> dg.SensorResult:
        now = time.time()
        if context.cursor is None:  # turned on: the next tick is the first one
            return dg.SensorResult(cursor=str(now), skip_reason=dg.SkipReason("waiting for the next cron tick"))
        tick = due_tick(entry.cron, spec.automation.timezone, float(context.cursor), now)
        if tick is None:
            return dg.SensorResult(skip_reason=dg.SkipReason("no cron tick since the last backfill"))
        subset = AssetGraphSubset.create_empty_subset()._replace(
            partitions_subsets_by_asset_key={k: partitions.subset_with_all_partitions() for k in keys}
        )
        request = dg.RunRequest.for_asset_graph_subset(subset, tags={SCHEDULE_TAG: entry.name})
        context.log.info(f"{entry.name}: tick {tick.isoformat()}, backfill of {len(partitions.get_partition_keys())}")
        return dg.SensorResult(run_requests=[request], cursor=str(tick.timestamp()))

    return scheduled_backfill


def build_backfills(spec: BenchmarkSpec) -> tuple[list[UnresolvedAssetJobDefinition], list[dg.SensorDefinition]]:
    entries = spec.automation.backfills
    return [backfill_job(spec, e) for e in entries], [backfill_sensor(spec, e) for e in entries]
