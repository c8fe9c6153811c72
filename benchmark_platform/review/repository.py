"""All database access of the review stage (tables of sql/0011_review.sql).

Double-blindness lives here: every reviewer-facing query is keyed by (blind_id, reviewer_id) and selects only the
item and the caller's own assignment, never the other reviewer or their rating.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

from benchmark_platform.review.assignment import AssignmentResult, assign_pairs
from benchmark_platform.review.models import Assignment, Decision, Rating, Reviewer, ReviewItem, ReviewPolicy, Verdict
from benchmark_platform.review.rubrics import RUBRICS, check_rubric_scores
from benchmark_platform.review.security import DUMMY_HASH, hash_password, new_token, token_hash, verify_password
from benchmark_platform.review.workflow import (
    RoundOutcome,
    appeal_assignments,
    decide,
    select_audits,
    settle_round,
    whitelist_after_audits,
)
from benchmark_platform.store import Database, as_json, insert_rows

ROLES = ("reviewer", "admin")


def add_reviewer(db: Database, reviewer: Reviewer, role: str, password: str) -> None:
    if role not in ROLES:
        raise ValueError(f"reviewer {reviewer.reviewer_id!r}: role must be one of {ROLES}, got {role!r}")
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT 1 FROM review_reviewers WHERE reviewer_id = %s", (reviewer.reviewer_id,))
        if cur.fetchone():
            raise ValueError(f"reviewer {reviewer.reviewer_id!r} already exists")
        cur.execute(
            """INSERT INTO review_reviewers (reviewer_id, role, password_hash, disciplines, affiliation,
                   exam_round1_passed, exam_round2_passed, whitelisted, declared_conflicts)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                reviewer.reviewer_id,
                role,
                hash_password(password),
                sorted(reviewer.disciplines),
                reviewer.affiliation,
                reviewer.exam_round1_passed,
                reviewer.exam_round2_passed,
                reviewer.whitelisted,
                sorted(reviewer.declared_conflicts),
            ),
        )


def load_reviewers(db: Database) -> list[Reviewer]:
    rows = db.query("SELECT * FROM review_reviewers WHERE role = 'reviewer' ORDER BY reviewer_id")
    return [
        Reviewer(
            reviewer_id=r["reviewer_id"],
            disciplines=frozenset(r["disciplines"]),
            affiliation=r["affiliation"],
            exam_round1_passed=r["exam_round1_passed"],
            exam_round2_passed=r["exam_round2_passed"],
            whitelisted=r["whitelisted"],
            declared_conflicts=frozenset(r["declared_conflicts"]),
        )
        for r in rows
    ]


# --- sessions ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    reviewer_id: str
    role: str
    csrf_token: str


def login(db: Database, reviewer_id: str, password: str, hours: float) -> tuple[str, Session] | None:
    """A new session token for valid credentials, else None (an unknown name costs a full hash, like a bad password)."""
    rows = db.query("SELECT role, password_hash FROM review_reviewers WHERE reviewer_id = %s", (reviewer_id,))
    stored = rows[0]["password_hash"] if rows else DUMMY_HASH
    if not (verify_password(password, stored) and rows):
        return None
    token, csrf = new_token(), new_token()
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM review_sessions WHERE expires_at <= now()")
        cur.execute(
            "INSERT INTO review_sessions (token_hash, reviewer_id, csrf_token, expires_at) VALUES (%s, %s, %s, %s)",
            (token_hash(token), reviewer_id, csrf, datetime.now(UTC) + timedelta(hours=hours)),
        )
    return token, Session(reviewer_id, rows[0]["role"], csrf)


def session(db: Database, token: str | None) -> Session | None:
    if not token:
        return None
    rows = db.query(
        """SELECT s.reviewer_id, r.role, s.csrf_token FROM review_sessions s
           JOIN review_reviewers r USING (reviewer_id) WHERE s.token_hash = %s AND s.expires_at > now()""",
        (token_hash(token),),
    )
    return Session(**rows[0]) if rows else None


def logout(db: Database, token: str) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM review_sessions WHERE token_hash = %s", (token_hash(token),))


# --- the reviewer's side ------------------------------------------------------------------------------------------


def reviewer_queue(db: Database, reviewer_id: str) -> list[dict[str, Any]]:
    """The caller's own assignments: blind handle, discipline, round, whether rated. Nothing about anyone else."""
    return db.query(
        """SELECT a.blind_id, a.discipline, a.round, a.assigned_at, (r.assignment_id IS NOT NULL) AS rated
           FROM review_assignments a LEFT JOIN review_ratings r USING (assignment_id)
           WHERE a.reviewer_id = %s ORDER BY rated, a.assigned_at, a.blind_id""",
        (reviewer_id,),
    )


def open_assignment(db: Database, blind_id: str, reviewer_id: str) -> dict[str, Any] | None:
    """The item behind the caller's own assignment (None for anyone else's handle); stamps the first opening."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE review_assignments SET opened_at = coalesce(opened_at, now()) WHERE blind_id = %s AND reviewer_id = %s",
            (blind_id, reviewer_id),
        )
        if cur.rowcount != 1:
            return None
    rows = db.query(
        """SELECT a.blind_id, a.discipline, a.round, i.format, i.question, i.options, i.answer_index, i.explanation,
                  (r.assignment_id IS NOT NULL) AS rated,
                  coalesce((SELECT json_agg(json_build_object('text', f.text, 'title', d.title, 'url', d.url)
                                            ORDER BY f.fact_id)
                            FROM item_facts x JOIN facts f USING (fact_id) JOIN documents d USING (document_id)
                            WHERE x.item_id = a.item_id), '[]') AS sources
           FROM review_assignments a JOIN items i USING (item_id) LEFT JOIN review_ratings r USING (assignment_id)
           WHERE a.blind_id = %s AND a.reviewer_id = %s""",
        (blind_id, reviewer_id),
    )
    return rows[0]


class Submit(StrEnum):
    STORED = "stored"
    NOT_FOUND = "not_found"
    ALREADY_RATED = "already_rated"


def submit_rating(
    db: Database,
    blind_id: str,
    reviewer_id: str,
    scores: dict[str, int],
    verdict: Verdict,
    comment: str,
    seconds_claimed: float,
) -> Submit:
    """Store the caller's rating of their own assignment and its gold labels, once, in one transaction.

    Time on page is the browser's count of visible seconds, capped by the server's clock since first opening.
    """
    check_rubric_scores(scores, f"rating of {blind_id!r}")
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """SELECT assignment_id, spec, discipline, item_id, round, extract(epoch FROM now() - opened_at)
               FROM review_assignments WHERE blind_id = %s AND reviewer_id = %s FOR UPDATE""",
            (blind_id, reviewer_id),
        )
        row = cur.fetchone()
        if row is None:
            return Submit.NOT_FOUND
        assignment_id, spec, discipline, item_id, round_, elapsed = row
        cur.execute("SELECT 1 FROM review_ratings WHERE assignment_id = %s", (assignment_id,))
        if cur.fetchone():
            return Submit.ALREADY_RATED
        seconds = max(0.0, min(float(seconds_claimed), float(elapsed or 0.0)))
        cur.execute(
            "INSERT INTO review_ratings (assignment_id, scores, verdict, comment, seconds_on_page) VALUES (%s, %s, %s, %s, %s)",
            (assignment_id, as_json(scores), verdict.value, comment, seconds),
        )
        labels = [*((k, float(scores[k])) for k in RUBRICS), ("approve", float(verdict is Verdict.APPROVE))]
        insert_rows(
            conn,
            "gold_labels",
            ("sheet", "item_ref", "reviewer", "rubric", "rating"),
            [(f"review:{spec}:{discipline}:r{round_}", item_id, reviewer_id, k, v) for k, v in labels],
        )
    return Submit.STORED


# --- allocation and settlement (the Dagster assets call these) ---------------------------------------------------


def assign_partition(
    db: Database, spec: str, discipline: str, policy: ReviewPolicy, seed: int, phase: str
) -> AssignmentResult:
    """Allocate two reviewers to every item of the partition that has none yet, under the WIP cap."""
    items = [
        ReviewItem(item_id=r["item_id"], discipline=discipline, author_id=r["author"] or "")
        for r in db.query(
            """SELECT i.item_id, g.generator AS author FROM items i LEFT JOIN generation_metadata g USING (item_id)
               WHERE i.spec = %s AND i.discipline = %s
                 AND NOT EXISTS (SELECT 1 FROM review_assignments a WHERE a.item_id = i.item_id)
               ORDER BY i.item_id""",
            (spec, discipline),
        )
    ]
    load = {
        r["reviewer_id"]: r["n"]
        for r in db.query(
            """SELECT a.reviewer_id, count(*)::int AS n FROM review_assignments a
               LEFT JOIN review_ratings r USING (assignment_id) WHERE r.assignment_id IS NULL GROUP BY a.reviewer_id"""
        )
    }
    result = assign_pairs(items, load_reviewers(db), load, policy.wip_cap, seed)
    with db.transaction() as conn:
        insert_rows(
            conn,
            "review_assignments",
            ("blind_id", "spec", "discipline", "item_id", "reviewer_id", "round", "phase"),
            [(new_token(), spec, discipline, a.item_id, a.reviewer_id, a.round, phase) for a in result.assignments],
        )
    return result


def _ratings(db: Database, spec: str, discipline: str) -> list[Rating]:
    rows = db.query(
        """SELECT a.item_id, a.reviewer_id, a.round, r.scores, r.verdict, r.comment, r.seconds_on_page
           FROM review_assignments a JOIN review_ratings r USING (assignment_id)
           WHERE a.spec = %s AND a.discipline = %s
             AND (SELECT count(*) FROM review_assignments b JOIN review_ratings rb USING (assignment_id)
                  WHERE b.item_id = a.item_id AND b.round = a.round) = 2
           ORDER BY a.item_id, a.round, a.reviewer_id""",
        (spec, discipline),
    )
    return [Rating(**r) for r in rows]


def settle_partition(db: Database, spec: str, discipline: str, policy: ReviewPolicy, seed: int) -> list[RoundOutcome]:
    """Settle every fully rated round of the partition: top up the audit sample, replace the partition's ledger,
    and take reviewers with too many flawed audited approvals off the whitelist; one transaction."""
    ratings = _ratings(db, spec, discipline)
    mine = "item_id IN (SELECT item_id FROM items WHERE spec = %s AND discipline = %s)"
    validations = {
        (r["item_id"], r["round"]): r["reference"]
        for r in db.query(f"SELECT * FROM review_validations WHERE {mine}", (spec, discipline))
    }
    committee = {
        (r["item_id"], r["round"]): Decision(r["decision"])
        for r in db.query(f"SELECT * FROM review_committee_decisions WHERE {mine}", (spec, discipline))
    }
    audits = {
        (r["item_id"], r["round"]): r["flawed"]
        for r in db.query(
            "SELECT item_id, round, flawed FROM review_audits WHERE spec = %s AND discipline = %s", (spec, discipline)
        )
    }
    outcomes, new_audits = [], []
    for round_ in sorted({r.round for r in ratings}):
        these = [r for r in ratings if r.round == round_]
        items = sorted({r.item_id for r in these})
        decisions = {
            i: committee.get((i, round_)) or decide(*(r.verdict for r in these if r.item_id == i)) for i in items
        }
        approved = [i for i, d in decisions.items() if d is Decision.APPROVED]
        chosen = select_audits(approved, policy.audit_rate, seed + round_, [i for (i, rd) in audits if rd == round_])
        new_audits += [(i, round_, spec, discipline) for i in chosen if (i, round_) not in audits]
        outcomes.append(
            settle_round(
                these,
                {i: validations[(i, round_)] for i in items if (i, round_) in validations},
                {i: audits[(i, round_)] for i in chosen if audits.get((i, round_)) is not None},
                policy,
                {i: committee[(i, round_)] for i in items if (i, round_) in committee},
            )
        )
    with db.transaction() as conn, conn.cursor() as cur:
        insert_rows(
            conn,
            "review_audits",
            ("item_id", "round", "spec", "discipline"),
            new_audits,
            on_conflict="ON CONFLICT DO NOTHING",
        )
        cur.execute("DELETE FROM review_ledger WHERE spec = %s AND discipline = %s", (spec, discipline))
        insert_rows(
            conn,
            "review_ledger",
            ("spec", "discipline", "reviewer_id", "item_id", "round", "kind", "amount", "validated_score"),
            [
                (spec, discipline, e.reviewer_id, e.item_id, e.round, e.kind.value, e.amount, e.validated_score)
                for o in outcomes
                for e in o.ledger
            ],
        )
        cur.execute("SELECT reviewer_id, count(*) FROM review_ledger WHERE kind = 'penalty' GROUP BY reviewer_id")
        failures = dict(cur.fetchall())
        reviewers = load_reviewers(db)
        dropped = [
            r.reviewer_id
            for r, after in zip(reviewers, whitelist_after_audits(reviewers, failures, policy), strict=True)
            if r.whitelisted and not after.whitelisted
        ]
        cur.execute("UPDATE review_reviewers SET whitelisted = false WHERE reviewer_id = ANY(%s)", (dropped,))
    return outcomes


# --- the principal's side (admin role only) -----------------------------------------------------------------------


def payouts(db: Database) -> list[dict[str, Any]]:
    return db.query(
        """SELECT spec, discipline, reviewer_id,
                  sum(amount) FILTER (WHERE kind = 'base') AS base, coalesce(sum(amount) FILTER (WHERE kind = 'bonus'), 0) AS bonus,
                  coalesce(sum(amount) FILTER (WHERE kind = 'penalty'), 0) AS penalty, sum(amount) AS total
           FROM review_ledger GROUP BY spec, discipline, reviewer_id ORDER BY spec, discipline, reviewer_id"""
    )


def rating_pairs(db: Database, spec: str | None = None, discipline: str | None = None) -> list[dict[str, Any]]:
    """Both ratings of every fully rated (item, round) (of one partition if given), for agreement and Table 5 logs."""
    return db.query(
        """SELECT a.spec, a.discipline, a.phase, a.item_id, a.round,
                  ra.verdict AS verdict_a, rb.verdict AS verdict_b, ra.scores AS scores_a, rb.scores AS scores_b,
                  au.flawed AS audit_flawed, (au.item_id IS NOT NULL) AS audited, c.decision AS committee
           FROM review_assignments a JOIN review_ratings ra ON ra.assignment_id = a.assignment_id
           JOIN review_assignments b ON b.item_id = a.item_id AND b.round = a.round AND b.reviewer_id > a.reviewer_id
           JOIN review_ratings rb ON rb.assignment_id = b.assignment_id
           LEFT JOIN review_audits au ON au.item_id = a.item_id AND au.round = a.round
           LEFT JOIN review_committee_decisions c ON c.item_id = a.item_id AND c.round = a.round
           WHERE (%(spec)s::text IS NULL OR a.spec = %(spec)s) AND (%(discipline)s::text IS NULL OR a.discipline = %(discipline)s)
           ORDER BY a.spec, a.discipline, a.item_id, a.round""",
        {"spec": spec, "discipline": discipline},
    )


def item_detail(db: Database, item_id: str, round_: int) -> dict[str, Any] | None:
    """Everything about one item's round, both reviewers included: for the principal only."""
    items = db.query(
        "SELECT item_id, spec, discipline, question, options, answer_index, explanation FROM items WHERE item_id = %s",
        (item_id,),
    )
    if not items:
        return None
    reviews = db.query(
        """SELECT a.reviewer_id, r.scores, r.verdict, r.comment, r.seconds_on_page FROM review_assignments a
           LEFT JOIN review_ratings r USING (assignment_id) WHERE a.item_id = %s AND a.round = %s ORDER BY a.reviewer_id""",
        (item_id, round_),
    )
    extra = {
        "validation": db.query(
            "SELECT reference, validator FROM review_validations WHERE item_id = %s AND round = %s", (item_id, round_)
        ),
        "audit": db.query(
            "SELECT flawed, auditor, note FROM review_audits WHERE item_id = %s AND round = %s", (item_id, round_)
        ),
        "committee": db.query(
            "SELECT decision, decided_by FROM review_committee_decisions WHERE item_id = %s AND round = %s",
            (item_id, round_),
        ),
    }
    return {**items[0], "round": round_, "reviews": reviews, **{k: (v[0] if v else None) for k, v in extra.items()}}


def record_validation(db: Database, item_id: str, round_: int, reference: dict[str, int], validator: str) -> None:
    check_rubric_scores(reference, f"validation of item {item_id!r} round {round_}")
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO review_validations (item_id, round, reference, validator) VALUES (%s, %s, %s, %s)
               ON CONFLICT (item_id, round) DO UPDATE SET reference = EXCLUDED.reference, validator = EXCLUDED.validator,
                                                          created_at = now()""",
            (item_id, round_, as_json(reference), validator),
        )


def record_committee(db: Database, item_id: str, round_: int, decision: Decision, decided_by: str, note: str) -> None:
    if decision is Decision.ESCALATED:
        raise ValueError(f"item {item_id!r}: the committee must decide approved, revise or rejected")
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO review_committee_decisions (item_id, round, decision, decided_by, note) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (item_id, round) DO UPDATE SET decision = EXCLUDED.decision, decided_by = EXCLUDED.decided_by,
                                                          note = EXCLUDED.note, created_at = now()""",
            (item_id, round_, decision.value, decided_by, note),
        )


def record_audit(db: Database, item_id: str, round_: int, flawed: bool, auditor: str, note: str) -> bool:
    """The principal's verdict on an item drawn for audit (False if it was not drawn); also a gold label."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE review_audits SET flawed = %s, auditor = %s, note = %s WHERE item_id = %s AND round = %s RETURNING spec, discipline",
            (flawed, auditor, note, item_id, round_),
        )
        row = cur.fetchone()
        if row is None:
            return False
        insert_rows(
            conn,
            "gold_labels",
            ("sheet", "item_ref", "reviewer", "rubric", "rating"),
            [(f"review-audit:{row[0]}:{row[1]}:r{round_}", item_id, auditor, "flawed", float(flawed))],
            on_conflict="ON CONFLICT (sheet, item_ref, reviewer, rubric) DO UPDATE SET rating = EXCLUDED.rating",
        )
    return True


def file_appeal(db: Database, item_id: str, evidence: str) -> list[str]:
    """An annotator's appeal of the item's latest round: its two reviewers get a new round (returns the blind ids)."""
    rows = [r for r in rating_pairs(db) if r["item_id"] == item_id]
    if not rows:
        raise ValueError(f"item {item_id!r} has no fully rated round to appeal")
    last = rows[-1]
    decision = (
        Decision(last["committee"])
        if last["committee"]
        else decide(Verdict(last["verdict_a"]), Verdict(last["verdict_b"]))
    )
    previous = [
        Assignment(**a)
        for a in db.query(
            "SELECT item_id, reviewer_id, round FROM review_assignments WHERE item_id = %s AND round = %s",
            (item_id, last["round"]),
        )
    ]
    new = appeal_assignments(item_id, decision, evidence, previous)
    blind = [new_token() for _ in new]
    with db.transaction() as conn:
        insert_rows(conn, "review_appeals", ("item_id", "from_round", "evidence"), [(item_id, last["round"], evidence)])
        insert_rows(
            conn,
            "review_assignments",
            ("blind_id", "spec", "discipline", "item_id", "reviewer_id", "round", "phase"),
            [
                (b, last["spec"], last["discipline"], a.item_id, a.reviewer_id, a.round, last["phase"])
                for b, a in zip(blind, new, strict=True)
            ],
        )
    return blind
