"""Item decisions, the bonus-on-bar award, stochastic audits, appeals, the whitelist and the payout ledger.

KINA 3.2 / 4.1 / Appendix C eq. (3): W_i = w_0 + B * 1{S_i > S_-i, S_i >= tau}; a random 5-10% of approved items
is audited by the principal and a flawed one costs both reviewers a joint penalty; E.3 escalation to the core
committee; E.5 appeals and removal of reviewers who keep approving flawed items.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.review.assignment import stable_uniform
from benchmark_platform.review.models import Assignment, Decision, Rating, Reviewer, ReviewPolicy, Verdict, plural
from benchmark_platform.review.rubrics import validated_score


def decide(a: Verdict, b: Verdict) -> Decision:
    """Both approve -> approved; an escalation or an approve/reject split -> the committee; else the stricter verdict."""
    pair = {a, b}
    if pair == {Verdict.APPROVE}:
        return Decision.APPROVED
    if Verdict.ESCALATE in pair or pair == {Verdict.APPROVE, Verdict.REJECT}:
        return Decision.ESCALATED
    return Decision.REJECTED if Verdict.REJECT in pair else Decision.REVISE


def bonus_award(scores: Mapping[str, float], policy: ReviewPolicy) -> dict[str, float]:
    """The single bonus B to the higher validated score if it clears tau; an exact tie (discrete rubrics) splits it."""
    best = max(scores.values())
    if best < policy.tau:
        return {}
    winners = sorted(r for r, s in scores.items() if s == best)
    cents = round(policy.bonus * 100)
    share, odd = divmod(cents, len(winners))  # whole cents: the split never pays more than B
    return {r: (share + (k < odd)) / 100 for k, r in enumerate(winners)}


def select_audits(approved_item_ids: Iterable[str], rate: float, seed: int, already: Iterable[str] = ()) -> list[str]:
    """The principal's stochastic audit: ceil(rate * n) of the n approved items, drawn by a seeded hash.

    Items chosen before (``already``) stay chosen and count toward the quota, so selecting again as more items are
    approved only tops the sample up: an item's audit status never flips.
    """
    ids = sorted(set(approved_item_ids))
    chosen = set(already) & set(ids)
    k = math.ceil(rate * len(ids)) - len(chosen)
    rest = sorted((i for i in ids if i not in chosen), key=lambda i: stable_uniform(seed, "audit", i))
    return sorted(chosen | set(rest[: max(k, 0)]))


def appeal_assignments(item_id: str, decision: Decision, evidence: str, previous: list[Assignment]) -> list[Assignment]:
    """An annotator's appeal (E.5): the same two reviewers re-evaluate the item in a new round, given new evidence."""
    if decision not in (Decision.REVISE, Decision.REJECTED):
        raise ValueError(f"item {item_id!r}: only revised or rejected items can be appealed, not {decision.value}")
    if not evidence.strip():
        raise ValueError(f"item {item_id!r}: an appeal must bring new academic evidence")
    last = max(a.round for a in previous)
    return [Assignment(item_id=item_id, reviewer_id=a.reviewer_id, round=last + 1) for a in previous if a.round == last]


def whitelist_after_audits(
    reviewers: Iterable[Reviewer], flawed_audits: Mapping[str, int], policy: ReviewPolicy
) -> list[Reviewer]:
    """Reviewers with ``max_audit_failures`` or more flawed audited approvals leave the whitelist (E.5)."""
    return [
        r.model_copy(update={"whitelisted": False})
        if flawed_audits.get(r.reviewer_id, 0) >= policy.max_audit_failures
        else r
        for r in reviewers
    ]


class EntryKind(StrEnum):
    BASE = "base"
    BONUS = "bonus"
    PENALTY = "penalty"


class LedgerEntry(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    reviewer_id: str
    item_id: str
    round: int = Field(ge=1)
    kind: EntryKind
    amount: float
    validated_score: float | None = None


class RoundOutcome(BaseModel):
    """Everything one review round settles: decisions, validated scores, audits and the payout ledger."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    decisions: dict[str, Decision]
    validated_scores: dict[str, dict[str, float]]  # item -> reviewer -> S_i
    audited: dict[str, bool]  # item -> the principal found it flawed
    flawed_audits: dict[str, int]  # reviewer -> flawed audited approvals this round
    ledger: list[LedgerEntry]

    def payouts(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for e in self.ledger:
            totals[e.reviewer_id] = round(totals.get(e.reviewer_id, 0.0) + e.amount, 2)
        return totals


def settlement_text(outcomes: Sequence[RoundOutcome]) -> str:
    """What a settlement did, in words; items without the admin's validation are named, since their reviews got the
    base wage only and settling looks the same otherwise."""
    settled = sum(len(o.decisions) for o in outcomes)
    missing = sum(1 for o in outcomes for s in o.validated_scores.values() if not s)
    text = plural(settled, "fully rated item")
    if missing:
        text += (
            f"; {missing} not validated: {'its' if missing == 1 else 'their'} reviews got the base wage only and no"
            " bonus (the bonus needs your reference scores: validate on the item page, then settle again)"
        )
    return text


def settle_round(
    ratings: Iterable[Rating],
    references: Mapping[str, Mapping[str, int]],
    audit_flawed: Mapping[str, bool],
    policy: ReviewPolicy,
    committee: Mapping[str, Decision] | None = None,
) -> RoundOutcome:
    """Settle one round: base wage per review, bonus per validated item, joint penalty per flawed audit.

    ``references`` maps item -> the validated rubric scores (principal validation or adjudicated audit verdict);
    items without one are paid the base wage and wait for validation before any bonus. ``audit_flawed`` holds the
    principal's verdict on items chosen by :func:`select_audits`; ``committee`` resolves escalated items.
    """
    by_item: dict[str, list[Rating]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, []).append(r)
    decisions: dict[str, Decision] = {}
    scores: dict[str, dict[str, float]] = {}
    ledger: list[LedgerEntry] = []
    for item_id, pair in sorted(by_item.items()):
        if len(pair) != 2 or len({p.round for p in pair}) != 1:
            raise ValueError(f"item {item_id!r}: a round needs exactly two ratings of the same round, got {len(pair)}")
        decision = decide(pair[0].verdict, pair[1].verdict)
        if decision is Decision.ESCALATED and committee and item_id in committee:
            decision = committee[item_id]
        decisions[item_id] = decision
        reference = references.get(item_id)
        s = {p.reviewer_id: validated_score(p.scores, reference, policy) for p in pair} if reference else {}
        scores[item_id] = s
        award = bonus_award(s, policy) if s else {}
        for p in sorted(pair, key=lambda p: p.reviewer_id):
            common = {
                "reviewer_id": p.reviewer_id,
                "item_id": item_id,
                "round": p.round,
                "validated_score": s.get(p.reviewer_id),
            }
            ledger.append(LedgerEntry(kind=EntryKind.BASE, amount=policy.base_wage, **common))
            if p.reviewer_id in award:
                ledger.append(LedgerEntry(kind=EntryKind.BONUS, amount=award[p.reviewer_id], **common))
    audited = {i: audit_flawed[i] for i in sorted(audit_flawed) if decisions.get(i) is Decision.APPROVED}
    flawed: Counter[str] = Counter()
    for item_id, is_flawed in audited.items():
        if is_flawed:
            for p in sorted(by_item[item_id], key=lambda p: p.reviewer_id):
                flawed[p.reviewer_id] += 1
                ledger.append(
                    LedgerEntry(
                        reviewer_id=p.reviewer_id,
                        item_id=item_id,
                        round=p.round,
                        kind=EntryKind.PENALTY,
                        amount=-policy.audit_penalty,
                    )
                )
    return RoundOutcome(
        decisions=decisions, validated_scores=scores, audited=audited, flawed_audits=dict(flawed), ledger=ledger
    )
