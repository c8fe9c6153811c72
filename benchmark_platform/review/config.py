"""The review section of a benchmark spec."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat

from benchmark_platform.review.models import ReviewPolicy


class ReviewConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: ReviewPolicy = Field(default_factory=ReviewPolicy)
    bonus_by_discipline: dict[str, PositiveFloat] = Field(
        default_factory=dict
    )  # calibrated B per discipline (Corollary 1)
    phase: Literal["flat", "tournament"] = "tournament"  # logged with each assignment, for KINA Table 5
    target_effort_rate: float = Field(default=0.8, ge=0, lt=1)  # pi* of Corollary 1.2
    hourly_rate: float = Field(default=40.0, gt=0)  # prices reviewer time in the pilot cost proxy
    session_hours: float = Field(default=8.0, gt=0, le=24)  # web session lifetime

    def policy_for(self, discipline: str) -> ReviewPolicy:
        bonus = self.bonus_by_discipline.get(discipline)
        return (
            self.policy if bonus is None else ReviewPolicy.model_validate({**self.policy.model_dump(), "bonus": bonus})
        )
