"""A simulated review round through the real workflow: pilot -> bonus calibration -> tournament round -> ledger.

Reviewers with i.i.d. cost types score items on the six rubrics; a high-effort review reads every rubric close to the
truth, a low-effort one mostly waves rubrics through at the top score. The flat pilot (effort instructed at random)
calibrates B per discipline by Corollary 1; in the tournament round a reviewer works hard iff kappa <= B Delta p_min
(the types Theorem 1 guarantees). Assignment, validated scores, bonuses, audits, penalties and the whitelist are
all computed by the production code, and both phases are logged for KINA Table 5.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.review.assignment import assign_pairs
from benchmark_platform.review.calibration import BonusCalibration, calibrate
from benchmark_platform.review.metrics import LOG_SCHEMA, table5
from benchmark_platform.review.models import Assignment, Decision, Rating, Reviewer, ReviewItem, ReviewPolicy, Verdict
from benchmark_platform.review.rubrics import RUBRICS, SCORE_MAX, SCORE_MIN, validated_score
from benchmark_platform.review.workflow import RoundOutcome, decide, select_audits, settle_round, whitelist_after_audits


class SimulationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    disciplines: tuple[str, ...] = ("chemistry", "law", "medicine")
    reviewers_per_discipline: int = Field(default=8, ge=2)
    items_per_discipline: int = Field(default=60, ge=1)
    flaw_rate: float = Field(default=0.3, ge=0, le=1)
    cost_mean: float = 2.0  # kappa in currency units per review
    cost_sd: float = Field(default=1.5, gt=0)
    tau: float = Field(default=0.8, ge=0, le=1)
    target_rate: float = Field(default=0.8, ge=0, lt=1)
    base_wage: float = 10.0
    audit_penalty: float = 15.0
    audit_rate: float = 0.10
    wip_cap: int = 4
    seed: int = 7


class SimulatedRound(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)
    calibrations: list[BonusCalibration]
    outcomes: dict[str, RoundOutcome]  # discipline -> tournament round
    reviewers: list[Reviewer]
    logs: pl.DataFrame
    table5: pl.DataFrame

    def ledger(self) -> pl.DataFrame:
        rows = [
            {"discipline": d, **e.model_dump(mode="json")} for d, o in sorted(self.outcomes.items()) for e in o.ledger
        ]
        return pl.DataFrame(rows).sort("discipline", "reviewer_id", "item_id", "kind")


def _truth(rng: np.random.Generator, flawed: bool) -> dict[str, int]:
    scores = rng.integers(4, SCORE_MAX + 1, len(RUBRICS))
    if flawed:
        bad = rng.choice(len(RUBRICS), size=rng.integers(1, 3), replace=False)
        scores[bad] = rng.integers(SCORE_MIN, 3, len(bad))
    return dict(zip(RUBRICS, map(int, scores), strict=True))


def _review(rng: np.random.Generator, truth: dict[str, int], high: bool) -> dict[str, int]:
    noise = rng.normal(0, 0.3 if high else 0.8, len(RUBRICS))
    waved = np.logical_and(not high, rng.random(len(RUBRICS)) < 0.8)
    raw = np.where(waved, SCORE_MAX, np.array(list(truth.values())) + noise)
    return dict(zip(RUBRICS, map(int, np.clip(np.rint(raw), SCORE_MIN, SCORE_MAX)), strict=True))


def _verdict(scores: dict[str, int]) -> Verdict:
    worst = min(scores.values())
    return Verdict.APPROVE if worst >= 4 else Verdict.REJECT if worst == SCORE_MIN else Verdict.REVISE


def _batches(items: list[ReviewItem], reviewers: list[Reviewer], wip_cap: int, seed: int) -> Iterator[list[Assignment]]:
    """Allocate under the WIP cap batch by batch: each batch is reviewed (freeing capacity) before the next."""
    pending = items
    while pending:
        result = assign_pairs(pending, reviewers, {}, wip_cap, seed)
        if not result.assignments:
            raise ValueError(
                f"items {sorted(result.unassigned)[:5]} cannot be assigned: {set(result.unassigned.values())}"
            )
        yield result.assignments
        pending = [i for i in pending if i.item_id in result.unassigned]


def _flawed(truth: dict[str, int]) -> bool:
    return min(truth.values()) <= 2


def simulate_review_round(cfg: SimulationConfig) -> SimulatedRound:
    """Pilot (instructed random effort) -> calibration -> flat phase and tournament phase over the same items."""
    rng = np.random.default_rng(cfg.seed)
    reviewers: list[Reviewer] = []
    kappa: dict[str, float] = {}
    items: list[ReviewItem] = []
    truth: dict[str, dict[str, int]] = {}
    for d in cfg.disciplines:
        for k in range(cfg.reviewers_per_discipline):
            rid = f"{d}-r{k:02d}"
            reviewers.append(
                Reviewer(
                    reviewer_id=rid,
                    disciplines=frozenset({d}),
                    affiliation=f"{d}-lab{k % 3}",
                    exams_passed=frozenset({d}),
                )
            )
            kappa[rid] = float(rng.normal(cfg.cost_mean, cfg.cost_sd))
        for k in range(cfg.items_per_discipline):
            iid = f"{d}-q{k:03d}"
            items.append(ReviewItem(item_id=iid, discipline=d, author_id=f"{d}-author{k % 5}"))
            truth[iid] = _truth(rng, rng.random() < cfg.flaw_rate)
    discipline_of = {i.item_id: i.discipline for i in items}
    scoring = ReviewPolicy()  # KINA's six rubrics, equal weights

    def run(works_hard: Callable[[str], bool], seed: int) -> list[tuple[Rating, bool]]:
        out = []
        for batch in _batches(items, reviewers, cfg.wip_cap, seed):
            for a in batch:
                high = works_hard(a.reviewer_id)
                scores = _review(rng, truth[a.item_id], high)
                out.append(
                    (
                        Rating(item_id=a.item_id, reviewer_id=a.reviewer_id, scores=scores, verdict=_verdict(scores)),
                        high,
                    )
                )
        return out

    pilot = run(lambda _: bool(rng.random() < 0.5), cfg.seed)
    pilot_frame = pl.DataFrame(
        [
            {
                "discipline": discipline_of[r.item_id],
                "effort": "H" if high else "L",
                "validated_score": validated_score(r.scores, truth[r.item_id], scoring),
                "cost": kappa[r.reviewer_id],
            }
            for r, high in pilot
        ]
    )
    calibrations = calibrate(pilot_frame, cfg.tau, cfg.target_rate)
    policies = {
        c.discipline: ReviewPolicy(
            base_wage=cfg.base_wage,
            bonus=math.floor(c.bonus_target * 100 + 1) / 100,
            tau=cfg.tau,
            audit_rate=cfg.audit_rate,
            audit_penalty=cfg.audit_penalty,
            wip_cap=cfg.wip_cap,
        )
        for c in calibrations
    }
    cutoff = {c.discipline: policies[c.discipline].bonus * c.dp_min for c in calibrations}
    reviewer_discipline = {r.reviewer_id: next(iter(r.disciplines)) for r in reviewers}
    flat = run(lambda rid: kappa[rid] <= 0.0, cfg.seed + 1)
    tour = run(lambda rid: kappa[rid] <= cutoff[reviewer_discipline[rid]], cfg.seed + 2)

    outcomes: dict[str, RoundOutcome] = {}
    for d, policy in sorted(policies.items()):
        ratings = [r for r, _ in tour if discipline_of[r.item_id] == d]
        outcomes[d] = _settle(ratings, truth, policy, cfg.seed)
    flawed_counts: dict[str, int] = {}
    for o in outcomes.values():
        for rid, n in o.flawed_audits.items():
            flawed_counts[rid] = flawed_counts.get(rid, 0) + n
    reviewers = whitelist_after_audits(reviewers, flawed_counts, next(iter(policies.values())))
    flat_outcomes = {
        d: _settle([r for r, _ in flat if discipline_of[r.item_id] == d], truth, p, cfg.seed)
        for d, p in policies.items()
    }
    logs = pl.concat([_log("flat", flat, flat_outcomes), _log("tournament", tour, outcomes)])
    return SimulatedRound(
        calibrations=calibrations, outcomes=outcomes, reviewers=reviewers, logs=logs, table5=table5(logs)
    )


def _settle(ratings: list[Rating], truth: dict[str, dict[str, int]], policy: ReviewPolicy, seed: int) -> RoundOutcome:
    """Decide, audit a random share of approved items against the truth, and settle the ledger."""
    by_item: dict[str, list[Rating]] = {}
    for r in ratings:
        by_item.setdefault(r.item_id, []).append(r)
    approved = [i for i, (a, b) in by_item.items() if decide(a.verdict, b.verdict) is Decision.APPROVED]
    audited = select_audits(approved, policy.audit_rate, seed)
    committee = {i: Decision.REJECTED if _flawed(truth[i]) else Decision.APPROVED for i in by_item}
    return settle_round(
        ratings, {i: truth[i] for i in by_item}, {i: _flawed(truth[i]) for i in audited}, policy, committee
    )


def _log(phase: str, rated: list[tuple[Rating, bool]], outcomes: dict[str, RoundOutcome]) -> pl.DataFrame:
    by_item: dict[str, list[Rating]] = {}
    for r, _ in rated:
        by_item.setdefault(r.item_id, []).append(r)
    audited: dict[str, bool] = {}
    decisions: dict[str, Decision] = {}
    for o in outcomes.values():
        decisions.update(o.decisions)
        audited.update(o.audited)
    rows = [
        {
            "phase": phase,
            "item_id": i,
            "flagged_a": a.verdict is not Verdict.APPROVE,
            "flagged_b": b.verdict is not Verdict.APPROVE,
            "decision": decisions[i].value,
            "audited": i in audited,
            "audit_flawed": audited.get(i),
        }
        for i, (a, b) in sorted(by_item.items())
    ]
    return pl.DataFrame(rows, schema=LOG_SCHEMA)
