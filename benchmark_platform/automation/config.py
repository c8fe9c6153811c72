"""The `automation` section of a benchmark spec: when schedules fire, how old a source may get, what automation may
spend on LLMs, and the scheduled partition backfills."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt


class BackfillSchedule(BaseModel):
    """A scheduled backfill: every discipline partition of `assets` (asset names of the spec's graph), as one
    Dagster backfill per cron tick; its runs queue on the stages' pools like any other."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    assets: list[str] = Field(min_length=1)
    cron: str
    running: bool = False  # the default status; off, as every backfill of a costly stage is a person's decision


class AutomationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = "UTC"
    reingest_cron: str = "0 3 * * 1"  # every source re-read weekly (Monday 03:00)
    reevaluate_cron: str = "0 4 * * *"  # every discipline re-evaluated daily (cached LLM calls cost nothing)
    source_max_age_hours: PositiveInt = 8 * 24  # a source not re-ingested for longer than this warns
    sensor_interval_s: PositiveInt = Field(default=60, ge=5)  # how often the event sensors look
    # false for a spec nobody builds (kina, the empty shell): its event sensors are off by default and say so, so
    # `make dev` does not tick and record partitions for it; a person turns them on in the UI
    sensors_running: bool = True
    # LLM calls per item that automation may spend with no person deciding: generation expecting more per item waits
    # for a launch (UI, schedule); 0 keeps every LLM-calling generation manual
    auto_llm_calls_per_item: float = Field(default=0.0, ge=0)
    backfills: list[BackfillSchedule] = Field(default_factory=list)  # scheduled partition backfills
