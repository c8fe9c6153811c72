"""Automation and scale-out: schedules, sensors, release-input checks, the release job and the executor."""

import dagster as dg

from benchmark_platform.defs.automation.backfills import build_backfills
from benchmark_platform.defs.automation.checks import (
    freshness_checks,
    release_input_checks,
    release_job,
    warning_checks,
)
from benchmark_platform.defs.automation.executors import benchmark_executor
from benchmark_platform.defs.automation.schedules import build_schedules
from benchmark_platform.defs.automation.sensors import (
    automation_condition_sensor,
    new_model_evaluation,
    taxonomy_sensor,
)
from benchmark_platform.spec import BenchmarkSpec

__all__ = ["benchmark_executor", "build_defs"]


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    backfill_jobs, backfill_sensors = build_backfills(spec)
    sensors = [taxonomy_sensor(spec), new_model_evaluation(spec), automation_condition_sensor(spec), *backfill_sensors]
    freshness = freshness_checks(spec)
    if freshness:
        sensors.append(
            dg.build_sensor_for_freshness_checks(
                freshness_checks=freshness,
                name=f"{spec.name}_source_freshness_sensor",
                # off: each evaluation launches a run of the freshness checks (measured: a fresh daemon over a
                # built database launched one at once); turn it on in the UI to be warned of a stale source
                default_status=dg.DefaultSensorStatus.STOPPED,
            )
        )
    return dg.Definitions(
        asset_checks=[*release_input_checks(spec), *warning_checks(spec), *freshness],
        schedules=build_schedules(spec),
        sensors=sensors,
        jobs=[release_job(spec), *backfill_jobs],
        executor=benchmark_executor,
    )
