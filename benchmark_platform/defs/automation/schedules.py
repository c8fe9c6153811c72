"""Schedules built from the partition definitions: periodic re-ingestion of every source and re-evaluation of every
discipline. Each tick asks for the partitions in as few runs as the asset's backfill policy allows."""

import dagster as dg

from benchmark_platform.defs.automation.requests import partition_run_requests
from benchmark_platform.defs.common import discipline_partitions, key, source_partitions
from benchmark_platform.spec import BenchmarkSpec


def _every_partition(
    spec: BenchmarkSpec, name: str, asset: str, cron: str, partitions: dg.StaticPartitionsDefinition, description: str
) -> dg.ScheduleDefinition:
    asset_key = key(spec, asset)

    @dg.schedule(
        name=f"{spec.name}_{name}",
        cron_schedule=cron,
        execution_timezone=spec.automation.timezone,
        target=dg.AssetSelection.assets(asset_key),
        # off: every partition at once (re-reading every source, re-asking every model) is a person's decision;
        # turn it on in the UI (Automation) once the spec's crons suit
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description=description,
    )
    def every_partition(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        tick = context.scheduled_execution_time.isoformat()
        return partition_run_requests(
            context,
            asset_key,
            partitions.get_partition_keys(),
            f"{name}@{tick}",
            tags={"benchmark_platform/schedule": name},
        )

    return every_partition


def build_schedules(spec: BenchmarkSpec) -> list[dg.ScheduleDefinition]:
    schedules = [
        _every_partition(
            spec,
            "reevaluate",
            "evaluation_answers",
            spec.automation.reevaluate_cron,
            discipline_partitions(spec),
            "Re-evaluate every discipline (answers already cached cost nothing).",
        )
    ]
    if spec.sources:  # only specs with sources have the ingest stage
        schedules.append(
            _every_partition(
                spec,
                "reingest",
                "source_documents",
                spec.automation.reingest_cron,
                source_partitions(spec),
                "Re-read every source (new or changed documents).",
            )
        )
    return schedules
