"""Typed records of the review stage (KINA 3.2, 4.1; Appendix E.3, E.5)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.review.config import ReviewPolicy

__all__ = [
    "Assignment",
    "Decision",
    "Rating",
    "ReviewItem",
    "ReviewPolicy",
    "Reviewer",
    "Verdict",
    "check_disciplines",
    "name_set",
]


def name_set(text: str) -> frozenset[str]:
    """The names of a comma-separated list (disciplines, conflicts), blanks dropped."""
    return frozenset(x.strip() for x in text.split(",") if x.strip())


def plural(n: int, word: str) -> str:
    """'1 item', '2 items': counts shown to people read as English."""
    return f"{n} {word}{'' if n == 1 else 's'}"


def check_disciplines(names: Iterable[str], known: Sequence[str], spec: str) -> None:
    """Every name a person typed must be a discipline key of the spec: a misspelt one would be stored and silently
    never match an item, so the reviewer would get no work for a reason pointing elsewhere."""
    unknown = sorted(set(names) - set(known))
    if unknown:
        valid = ", ".join(known) if known else "none"
        raise ValueError(
            f"unknown discipline {', '.join(repr(u) for u in unknown)}; the discipline keys of spec {spec!r} are: {valid}"
        )


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
    """A pool member: disciplines, the two-round exam of KINA 4.1 / E.1 per discipline, and whitelist state."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    reviewer_id: str = Field(min_length=1)
    disciplines: frozenset[str]
    exams_passed: frozenset[str] = frozenset()  # disciplines whose two exam rounds (depth test, item simulation) passed
    affiliation: str = ""
    level: str = ""  # certification, e.g. "WSET Level 3" (OenoBench App. D records it at registration)
    whitelisted: bool = True
    declared_conflicts: frozenset[str] = frozenset()  # reviewer or author ids this reviewer must not be paired with

    def eligible_for(self, discipline: str) -> bool:
        return self.whitelisted and discipline in self.disciplines and discipline in self.exams_passed


class ReviewItem(BaseModel):
    """An item to review; the author is known to the server only (double-blind)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    item_id: str = Field(min_length=1)
    discipline: str = Field(min_length=1)
    author_id: str = ""
    author_affiliation: str = ""
    suspect: bool = False  # a key-error suspect of the post-evaluation audit (issue 31): assigned before the others


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
    def _scores(self) -> Rating:  # which rubrics and scale is the rubric set's business, checked at submission
        if not self.scores:
            raise ValueError(f"rating of item {self.item_id!r} by {self.reviewer_id!r} scores no rubric")
        return self
