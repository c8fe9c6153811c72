"""Automation settings of a spec (schedules, sensor intervals, freshness); the Dagster wiring is defs/automation."""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.automation.config import AutomationConfig
    from benchmark_platform.automation.persist import record_leaves
    from benchmark_platform.automation.plan import plan_runs
    from benchmark_platform.automation.release_inputs import (
        CHECK_SAMPLE,
        duplicate_options,
        unaudited_items,
        uncalibrated_agents,
        unevaluated_items,
        unlinked_items,
    )
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "AutomationConfig",
    "CHECK_SAMPLE",
    "duplicate_options",
    "plan_runs",
    "record_leaves",
    "unaudited_items",
    "uncalibrated_agents",
    "unevaluated_items",
    "unlinked_items",
]
