"""The `automation` section of a benchmark spec: when schedules fire, how old a source may get, what automation may
spend on LLMs."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, PositiveInt


class AutomationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    timezone: str = "UTC"
    reingest_cron: str = "0 3 * * 1"  # every source re-read weekly (Monday 03:00)
    reevaluate_cron: str = "0 4 * * *"  # every discipline re-evaluated daily (cached LLM calls cost nothing)
    source_max_age_hours: PositiveInt = 8 * 24  # a source not re-ingested for longer than this warns
    sensor_interval_s: PositiveInt = Field(default=60, ge=5)  # how often the event sensors look
    # LLM calls per item that automation may spend with no person deciding: generation expecting more per item waits
    # for a launch (UI, schedule); 0 keeps every LLM-calling generation manual
    auto_llm_calls_per_item: float = Field(default=0.0, ge=0)
