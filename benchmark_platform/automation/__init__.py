"""Automation settings of a spec (schedules, sensor intervals, freshness); the Dagster wiring is defs/automation."""

from benchmark_platform.automation.config import AutomationConfig

__all__ = ["AutomationConfig"]
