"""Selection settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class SelectionConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    facts_per_discipline: int = 40  # K_d for topic pre-approval (facts chosen before generation)
