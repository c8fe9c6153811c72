"""The review section of a benchmark spec (a leaf: pydantic and the standard library only)."""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, IPvAnyNetwork, PositiveFloat, model_validator

RubricSetName = Literal["kina6", "oenobench8"]

# The rubric keys of each set, in form order; review/rubrics.py adds titles, scales and guidance.
RUBRIC_KEYS: Final[dict[str, tuple[str, ...]]] = {
    # KINA 4.1: six rubrics scored 1-5
    "kina6": (
        "representativeness_depth",
        "factuality",
        "source_reliability",
        "logical_rigor",
        "distractor_plausibility",
        "combinatorial_validity",
    ),
    # OenoBench 4.2 / App. D: eight rubrics rated pass / warn / fail
    "oenobench8": (
        "answer_correctness",
        "distractor_plausibility",
        "ambiguity",
        "source_faithfulness",
        "needs_source",
        "vague_language",
        "label_correctness",
        "verbatim_copying",
    ),
}


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
    rubric_set: RubricSetName = "kina6"  # which rubrics reviewers score, and on which scale
    # KINA's "rubric weight schedule": weight per rubric of the set (missing rubrics weigh 1)
    weights: dict[str, float] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _weights_name_the_set(self) -> ReviewPolicy:
        unknown = sorted(set(self.weights) - set(RUBRIC_KEYS[self.rubric_set]))
        if unknown:
            raise ValueError(
                f"weights name rubrics {unknown} that the {self.rubric_set} set does not have; "
                f"its rubrics are {list(RUBRIC_KEYS[self.rubric_set])}"
            )
        if any(v < 0 for v in self.weights.values()) or sum(self.weight(k) for k in RUBRIC_KEYS[self.rubric_set]) <= 0:
            raise ValueError("rubric weights must be >= 0 with a positive sum")
        return self

    def weight(self, rubric: str) -> float:
        return self.weights.get(rubric, 1.0)


class LoginThrottle(BaseModel):
    """Backoff after failed logins, per account and per client address (OWASP authentication cheat sheet)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    free_failures_per_account: int = Field(default=5, ge=1)  # wrong passwords before the account backs off
    free_failures_per_address: int = Field(default=20, ge=1)  # wrong logins from one address before it backs off
    first_delay_seconds: float = Field(default=2.0, gt=0)  # doubled with every further failure
    max_delay_seconds: float = Field(default=900.0, gt=0)


class ReviewConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    policy: ReviewPolicy = Field(default_factory=ReviewPolicy)
    bonus_by_discipline: dict[str, PositiveFloat] = Field(
        default_factory=dict
    )  # calibrated B per discipline (Corollary 1)
    phase: Literal["flat", "tournament"] = "tournament"  # logged with each assignment, for KINA Table 5
    target_effort_rate: float = Field(default=0.8, ge=0, lt=1)  # pi* of Corollary 1.2
    hourly_rate: float = Field(default=40.0, gt=0)  # prices reviewer time in the pilot cost proxy
    currency: str = Field(default="USD", pattern=r"^[A-Z]{3}$")  # ISO 4217 code of wages, bonuses and penalties
    session_hours: float = Field(default=8.0, gt=0, le=24)  # web session lifetime
    login_throttle: LoginThrottle = Field(default_factory=LoginThrottle)
    # addresses or networks of reverse proxies whose X-Forwarded-For the login throttle believes; off by default
    # (anyone can write that header: believed from anyone, it lets a client rotate addresses past the throttle)
    trusted_proxies: list[IPvAnyNetwork] = Field(default_factory=list)

    def policy_for(self, discipline: str) -> ReviewPolicy:
        bonus = self.bonus_by_discipline.get(discipline)
        return self.policy if bonus is None else self.policy.model_copy(update={"bonus": bonus})
