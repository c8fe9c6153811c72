"""Automation and scale-out: schedules, sensors, release-input checks, the release job and the executor."""

import dagster as dg

from benchmark_platform.defs.automation.checks import (
    freshness_checks,
    release_input_checks,
    release_job,
    warning_checks,
)
from benchmark_platform.defs.automation.executors import benchmark_executor
from benchmark_platform.defs.automation.schedules import build_schedules
from benchmark_platform.defs.automation.sensors import new_model_evaluation, taxonomy_automation
from benchmark_platform.spec import BenchmarkSpec

__all__ = ["benchmark_executor", "build_defs"]


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    register_job, taxonomy_sensor = taxonomy_automation(spec)
    sensors = [taxonomy_sensor, new_model_evaluation(spec)]
    freshness = freshness_checks(spec)
    if freshness:
        sensors.append(
            dg.build_sensor_for_freshness_checks(
                freshness_checks=freshness, name=f"{spec.name}_source_freshness_sensor"
            )
        )
    return dg.Definitions(
        asset_checks=[*release_input_checks(spec), *warning_checks(spec), *freshness],
        schedules=build_schedules(spec),
        sensors=sensors,
        jobs=[register_job, release_job(spec)],
        executor=benchmark_executor,
    )
