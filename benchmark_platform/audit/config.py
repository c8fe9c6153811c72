"""Audit thresholds in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fact_echo_fail: float = 0.65  # A3: longest-common-substring ratio at which a question copies its fact
    vague_terms: list[str] = Field(default_factory=lambda: [
        "some", "various", "many", "often", "generally", "typically", "arguably", "best", "famous",
        "world-class", "which of the following is true", "according to the text", "the passage"])
