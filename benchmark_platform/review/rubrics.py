"""The six review rubrics of KINA 4.1 and the weight schedule that turns a validated review into S_i.

A reviewer scores an item on each rubric from 1 (fails) to 5 (fully satisfies). The principal's validation
(or the audit stage's adjudicated verdict) gives a reference score per rubric; a review is as good as its
per-rubric agreement with that reference. The validated score S_i is the weighted rubric sum of these
agreements, normalised by the weight schedule, so S_i lies in [0, 1] and is monotone in review quality
(Assumption 2 of KINA Appendix C): two lazy reviewers who wave a flawed item through both score low and
neither clears the bar tau.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict, field_validator

RUBRICS: Final[tuple[str, ...]] = (
    "representativeness_depth",
    "factuality",
    "source_reliability",
    "logical_rigor",
    "distractor_plausibility",
    "combinatorial_validity",
)
RUBRIC_TITLES: Final[dict[str, str]] = {
    "representativeness_depth": "Representativeness and depth",
    "factuality": "Factuality",
    "source_reliability": "Source reliability",
    "logical_rigor": "Logical rigor",
    "distractor_plausibility": "Distractor plausibility",
    "combinatorial_validity": "Combinatorial validity (>= 6 statements, no subset relations among options)",
}
SCORE_MIN: Final[int] = 1
SCORE_MAX: Final[int] = 5


class WeightSchedule(BaseModel):
    """Non-negative weight per rubric (KINA's "rubric weight schedule"); at least one must be positive."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    weights: dict[str, float] = {r: 1.0 for r in RUBRICS}

    @field_validator("weights")
    @classmethod
    def _complete(cls, w: dict[str, float]) -> dict[str, float]:
        if set(w) != set(RUBRICS):
            raise ValueError(f"weight schedule must name exactly the rubrics {RUBRICS}, got {sorted(w)}")
        if any(v < 0 for v in w.values()) or sum(w.values()) <= 0:
            raise ValueError("rubric weights must be >= 0 with a positive sum")
        return w


def check_rubric_scores(scores: Mapping[str, int], where: str) -> dict[str, int]:
    """Return ``scores`` as a dict if it has every rubric with an integer in [SCORE_MIN, SCORE_MAX]; else raise naming ``where``."""
    if set(scores) != set(RUBRICS):
        raise ValueError(f"{where}: rubric scores must name exactly {RUBRICS}, got {sorted(scores)}")
    for rubric, value in scores.items():
        if isinstance(value, bool) or not isinstance(value, int) or not SCORE_MIN <= value <= SCORE_MAX:
            raise ValueError(f"{where}: rubric {rubric!r} must be an integer {SCORE_MIN}..{SCORE_MAX}, got {value!r}")
    return dict(scores)


def validated_score(review: Mapping[str, int], reference: Mapping[str, int], schedule: WeightSchedule) -> float:
    """S_i = sum_k w_k (1 - |r_ik - r*_k| / (max - min)) / sum_k w_k for reviewer scores r_i and reference r*."""
    span = SCORE_MAX - SCORE_MIN
    total = sum(schedule.weights.values())
    agreement = sum(w * (1.0 - abs(review[k] - reference[k]) / span) for k, w in schedule.weights.items())
    return agreement / total
