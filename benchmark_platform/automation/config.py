"""The `automation` section of a benchmark spec: when schedules fire and how old a source may get."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt


class AutomationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = "UTC"
    reingest_cron: str = "0 3 * * 1"  # every source re-read weekly (Monday 03:00)
    reevaluate_cron: str = "0 4 * * *"  # every discipline re-evaluated daily (cached LLM calls cost nothing)
    source_max_age_hours: PositiveInt = 8 * 24  # a source not re-ingested for longer than this warns
    sensor_interval_s: PositiveInt = Field(default=60, ge=5)  # how often the event sensors look
