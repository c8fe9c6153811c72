"""Evaluation settings in a benchmark spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class EvaluationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    bootstrap_samples: int = 1000
    random_baseline_samples: int = 5  # avg@k of the random baseline
