"""Typed records of the review stage (KINA 3.2, 4.1; Appendix E.3, E.5)."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.review.rubrics import WeightSchedule, check_rubric_scores


class Verdict(StrEnum):
    """What one reviewer says about an item (E.3: return with one comprehensive report, or escalate)."""

    APPROVE = "approve"
    REVISE = "revise"
    REJECT = "reject"
    ESCALATE = "escalate"


class Decision(StrEnum):
    """The item's outcome after both reviews of a round."""

    APPROVED = "approved"
    REVISE = "revise"
    REJECTED = "rejected"
    ESCALATED = "escalated"


class Reviewer(BaseModel):
    """A pool member: disciplines, the two-round exam of KINA 4.1 / E.1, and whitelist state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reviewer_id: str = Field(min_length=1)
    disciplines: frozenset[str]
    affiliation: str = ""
    exam_round1_passed: bool
    exam_round2_passed: bool
    whitelisted: bool = True
    declared_conflicts: frozenset[str] = frozenset()  # reviewer or author ids this reviewer must not be paired with

    @property
    def eligible(self) -> bool:
        return self.exam_round1_passed and self.exam_round2_passed and self.whitelisted


class ReviewItem(BaseModel):
    """An item to review; the author is known to the server only (double-blind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    item_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    author_id: str = ""
    author_affiliation: str = ""


class Assignment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    item_id: str
    reviewer_id: str
    round: int = Field(default=1, ge=1)


class Rating(BaseModel):
    """One reviewer's completed review of one item in one round."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    item_id: str
    reviewer_id: str
    round: int = Field(default=1, ge=1)
    scores: dict[str, int]
    verdict: Verdict
    comment: str = ""
    seconds_on_page: float = Field(default=0.0, ge=0)

    @model_validator(mode="after")
    def _scores(self) -> Rating:
        check_rubric_scores(self.scores, f"rating of item {self.item_id!r} by {self.reviewer_id!r}")
        return self


class ReviewPolicy(BaseModel):
    """The money and the knobs of the bonus-on-bar tournament (KINA 3.2, 4.1), in the spec's currency units."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    base_wage: float = Field(default=10.0, ge=0)  # w_0 per completed review
    bonus: float = Field(default=20.0, gt=0)  # B, to the higher validated score when it clears tau
    tau: float = Field(default=0.8, ge=0, le=1)  # the bar on max_i S_i
    audit_rate: float = Field(default=0.10, ge=0.05, le=0.10)  # stochastic principal audit of approved items
    audit_penalty: float = Field(default=15.0, ge=0)  # charged to each reviewer of an item the audit finds flawed
    wip_cap: int = Field(default=4, ge=3, le=5)  # open assignments per reviewer
    max_audit_failures: int = Field(default=2, ge=1)  # flawed audits before a reviewer leaves the whitelist (E.5)
    weights: WeightSchedule = WeightSchedule()
