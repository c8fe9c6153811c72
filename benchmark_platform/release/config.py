"""Release settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class ReleaseConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    version: str = Field(pattern=r"^v\d+\.\d+$")  # vX.Y
    licence: str
    # contamination control: a string that marks every released file, so crawled copies can be detected
    canary: str
