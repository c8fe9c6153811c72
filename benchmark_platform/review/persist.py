"""All database access of the review stage (tables of sql/0011_review.sql).

Double-blindness lives here: every reviewer-facing query is keyed by (blind_id, reviewer_id) and selects only the
item and the caller's own assignment, never the other reviewer or their rating.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from typing import Any

import polars as pl

from benchmark_platform.review.assignment import AssignmentResult, assign_pairs, why_no_work
from benchmark_platform.review.calibration import BonusCalibration
from benchmark_platform.review.config import LoginThrottle
from benchmark_platform.review.models import Assignment, Decision, Rating, Reviewer, ReviewItem, ReviewPolicy, Verdict
from benchmark_platform.review.rubrics import check_rubric_scores
from benchmark_platform.review.security import (
    backoff_seconds,
    dummy_hash,
    hash_password,
    needs_rehash,
    new_token,
    token_hash,
    verify_password,
)
from benchmark_platform.review.sources import EXCERPT_CONTEXT_CHARS, excerpt, link_titles, provenance_url
from benchmark_platform.review.workflow import (
    RoundOutcome,
    appeal_assignments,
    decide,
    select_audits,
    settle_round,
    whitelist_after_audits,
)
from benchmark_platform.store import Database, as_json, insert_rows, returned

ROLES = ("reviewer", "admin")
EXAM_ROUNDS = (1, 2)  # KINA 4.1 / E.1: a discipline depth test, then a one-shot formal item simulation

# Items approved for review: those the current audit run of their discipline did not drop (a discipline never
# audited sends all its items). %(spec)s names the spec; the alias i is the items table.
_APPROVED_FOR_REVIEW = """NOT EXISTS (
    SELECT 1 FROM audit_policy p
    WHERE p.item_id = i.item_id AND p.action = 'drop' AND p.audit_run_id = (
        SELECT ar.audit_run_id FROM current_audit_runs ar WHERE ar.spec = i.spec AND ar.discipline = i.discipline))"""


def add_reviewer(db: Database, reviewer: Reviewer, role: str, password: str, recorded_by: str = "cli") -> None:
    """A new account; ``reviewer.exams_passed`` records both exam rounds as passed for those disciplines."""
    if role not in ROLES:
        raise ValueError(f"reviewer {reviewer.reviewer_id!r}: role must be one of {ROLES}, got {role!r}")
    password_hash = hash_password(password)
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT 1 FROM review_reviewers WHERE reviewer_id = %s", (reviewer.reviewer_id,))
        if cur.fetchone():
            raise ValueError(
                f"reviewer {reviewer.reviewer_id!r} already exists; change it with "
                f"`benchmark-platform review edit-reviewer {reviewer.reviewer_id} ...` or on the admin's Reviewers page"
            )
        cur.execute(
            """INSERT INTO review_reviewers (reviewer_id, role, password_hash, disciplines, affiliation, level,
                   whitelisted, declared_conflicts)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                reviewer.reviewer_id,
                role,
                password_hash,
                sorted(reviewer.disciplines),
                reviewer.affiliation,
                reviewer.level,
                reviewer.whitelisted,
                sorted(reviewer.declared_conflicts),
            ),
        )
        _record_exams(
            cur,
            reviewer.reviewer_id,
            [(d, r, True) for d in sorted(reviewer.exams_passed) for r in EXAM_ROUNDS],
            recorded_by,
        )


def _record_exams(cur: Any, reviewer_id: str, exams: list[tuple[str, int, bool]], recorded_by: str) -> None:
    for discipline, round_, passed in exams:
        if round_ not in EXAM_ROUNDS:
            raise ValueError(f"exam round must be 1 (depth test) or 2 (item simulation), got {round_}")
        if not discipline:
            raise ValueError("an exam result needs a discipline")
        cur.execute(
            """INSERT INTO review_exams (reviewer_id, discipline, round, passed, recorded_by) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (reviewer_id, discipline, round) DO UPDATE SET passed = EXCLUDED.passed,
                   recorded_by = EXCLUDED.recorded_by, recorded_at = now()""",
            (reviewer_id, discipline, round_, passed, recorded_by),
        )


@dataclass(frozen=True)
class ReviewerChange:
    """What an admin changes on an account; None leaves a field as it is."""

    disciplines: frozenset[str] | None = None
    affiliation: str | None = None
    level: str | None = None
    whitelisted: bool | None = None
    declared_conflicts: frozenset[str] | None = None
    role: str | None = None
    exams: tuple[tuple[str, int, bool], ...] = ()  # (discipline, round, passed)
    password: str | None = None


def edit_reviewer(db: Database, reviewer_id: str, change: ReviewerChange, recorded_by: str) -> None:
    """Apply ``change`` to an existing account in one transaction (a plain error if there is no such account)."""
    if change.role is not None and change.role not in ROLES:
        raise ValueError(f"role must be one of {ROLES}, got {change.role!r}")
    password_hash = hash_password(change.password) if change.password is not None else None
    fields = {
        "disciplines": sorted(change.disciplines) if change.disciplines is not None else None,
        "affiliation": change.affiliation,
        "level": change.level,
        "whitelisted": change.whitelisted,
        "declared_conflicts": sorted(change.declared_conflicts) if change.declared_conflicts is not None else None,
        "role": change.role,
        "password_hash": password_hash,
    }
    updates = {k: v for k, v in fields.items() if v is not None}
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT 1 FROM review_reviewers WHERE reviewer_id = %s FOR UPDATE", (reviewer_id,))
        if cur.fetchone() is None:
            raise ValueError(
                f"there is no reviewer {reviewer_id!r}; create it with `benchmark-platform review add-reviewer`"
            )
        if updates:
            assignments = ", ".join(f"{column} = %s" for column in updates)  # column names are ours, never input
            cur.execute(
                f"UPDATE review_reviewers SET {assignments} WHERE reviewer_id = %s", (*updates.values(), reviewer_id)
            )
        _record_exams(cur, reviewer_id, list(change.exams), recorded_by)
        if password_hash is not None:  # a new password ends the account's sessions
            cur.execute("DELETE FROM review_sessions WHERE reviewer_id = %s", (reviewer_id,))


def load_reviewers(db: Database) -> list[Reviewer]:
    """Every reviewer-role account, with the disciplines whose two exam rounds it passed."""
    rows = db.query(
        """SELECT r.*, coalesce((SELECT array_agg(q.discipline) FROM (
                                     SELECT e.discipline FROM review_exams e WHERE e.reviewer_id = r.reviewer_id
                                     AND e.passed GROUP BY e.discipline HAVING count(*) = 2) q), '{}') AS passed
           FROM review_reviewers r WHERE role = 'reviewer' ORDER BY reviewer_id"""
    )
    return [_reviewer(r) for r in rows]


def _reviewer(row: dict[str, Any]) -> Reviewer:
    return Reviewer(
        reviewer_id=row["reviewer_id"],
        disciplines=frozenset(row["disciplines"]),
        exams_passed=frozenset(row["passed"]),
        affiliation=row["affiliation"],
        level=row["level"],
        whitelisted=row["whitelisted"],
        declared_conflicts=frozenset(row["declared_conflicts"]),
    )


def exams(db: Database) -> dict[str, dict[str, dict[int, bool]]]:
    """reviewer -> discipline -> exam round -> passed, for every recorded result."""
    out: dict[str, dict[str, dict[int, bool]]] = {}
    for r in db.query("SELECT reviewer_id, discipline, round, passed FROM review_exams ORDER BY 1, 2, 3"):
        out.setdefault(r["reviewer_id"], {}).setdefault(r["discipline"], {})[r["round"]] = r["passed"]
    return out


def accounts(db: Database) -> list[dict[str, Any]]:
    """Every account for the admin's Reviewers page (never the password hash)."""
    return db.query(
        """SELECT reviewer_id, role, disciplines, affiliation, level, whitelisted, declared_conflicts, created_at
           FROM review_reviewers ORDER BY role DESC, reviewer_id"""
    )


def open_load(db: Database) -> dict[str, int]:
    """reviewer -> assignments not yet rated (what the WIP cap counts)."""
    return {
        r["reviewer_id"]: r["n"]
        for r in db.query(
            """SELECT a.reviewer_id, count(*)::int AS n FROM review_assignments a
               LEFT JOIN review_ratings r USING (assignment_id) WHERE r.assignment_id IS NULL GROUP BY a.reviewer_id"""
        )
    }


def waiting_items(db: Database, spec: str) -> dict[str, int]:
    """discipline -> items approved for review that have no reviewers yet."""
    return {
        r["discipline"]: r["n"]
        for r in db.query(
            f"""SELECT i.discipline, count(*)::int AS n FROM items i
                WHERE i.spec = %(spec)s AND {_APPROVED_FOR_REVIEW}
                  AND NOT EXISTS (SELECT 1 FROM review_assignments a WHERE a.item_id = i.item_id)
                GROUP BY i.discipline ORDER BY i.discipline""",
            {"spec": spec},
        )
    }


def reviewer_overview(db: Database, spec: str, policy: ReviewPolicy) -> list[dict[str, Any]]:
    """One row per reviewer for the admin: exams, open items against the cap, and why no new work comes."""
    pool = load_reviewers(db)
    load, waiting, results = open_load(db), waiting_items(db, spec), exams(db)
    return [
        {
            "reviewer": r,
            "exams": results.get(r.reviewer_id, {}),
            "open": load.get(r.reviewer_id, 0),
            "why_no_work": why_no_work(r, pool, load, policy.wip_cap, waiting),
        }
        for r in pool
    ]


# --- sessions and login ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Session:
    reviewer_id: str
    role: str
    csrf_token: str


class LoginOutcome(StrEnum):
    OK = "ok"
    WRONG = "wrong"
    THROTTLED = "throttled"


@dataclass(frozen=True)
class LoginResult:
    outcome: LoginOutcome
    token: str = ""
    session: Session | None = None
    retry_after: float = 0.0  # seconds until this account and address are heard again


def _locked_for(cur: Any, scopes: list[tuple[str, str]]) -> float:
    cur.execute(
        """SELECT coalesce(max(extract(epoch FROM locked_until - now())), 0) FROM review_login_failures
           WHERE (scope, key) IN (SELECT * FROM unnest(%s::text[], %s::text[]))""",
        ([s for s, _ in scopes], [k for _, k in scopes]),
    )
    return max(0.0, float(cur.fetchone()[0]))


def login(
    db: Database, reviewer_id: str, password: str, hours: float, address: str, throttle: LoginThrottle
) -> LoginResult:
    """A session for valid credentials. While the account or the client address backs off after failed attempts,
    every attempt is refused without checking the password (no free guesses, no oracle). A success clears the
    account's failures and rehashes a password hash made at an older scrypt cost.

    An unknown name costs a full hash, like a wrong password, and counts against that name and the address alike.
    """
    scopes = [("account", reviewer_id), ("address", address)]
    with db.transaction() as conn, conn.cursor() as cur:
        wait = _locked_for(cur, scopes)
    if wait > 0:
        return LoginResult(LoginOutcome.THROTTLED, retry_after=wait)
    rows = db.query("SELECT role, password_hash FROM review_reviewers WHERE reviewer_id = %s", (reviewer_id,))
    stored = rows[0]["password_hash"] if rows else dummy_hash()
    if not (verify_password(password, stored) and rows):
        with db.transaction() as conn, conn.cursor() as cur:
            # a day without failures forgets them (and keeps the table small when many names are tried)
            cur.execute("DELETE FROM review_login_failures WHERE last_failure_at < now() - interval '1 day'")
            for scope, key in scopes:
                cur.execute(
                    """INSERT INTO review_login_failures (scope, key, failures) VALUES (%s, %s, 1)
                       ON CONFLICT (scope, key) DO UPDATE SET failures = review_login_failures.failures + 1,
                           last_failure_at = now() RETURNING failures""",
                    (scope, key),
                )
                failures = returned(cur)
                free = throttle.free_failures_per_account if scope == "account" else throttle.free_failures_per_address
                cur.execute(
                    """UPDATE review_login_failures SET locked_until = now() + %s * interval '1 second'
                       WHERE scope = %s AND key = %s""",
                    (backoff_seconds(failures, free, throttle), scope, key),
                )
            wait = _locked_for(cur, scopes)
        return LoginResult(LoginOutcome.WRONG, retry_after=wait)
    token, csrf = new_token(), new_token()
    rehashed = hash_password(password) if needs_rehash(stored) else None
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM review_sessions WHERE expires_at <= now()")
        cur.execute(
            "INSERT INTO review_sessions (token_hash, reviewer_id, csrf_token, expires_at) VALUES (%s, %s, %s, %s)",
            (token_hash(token), reviewer_id, csrf, datetime.now(UTC) + timedelta(hours=hours)),
        )
        cur.execute("DELETE FROM review_login_failures WHERE scope = 'account' AND key = %s", (reviewer_id,))
        if rehashed:  # compare-and-set: a password changed meanwhile is not overwritten
            cur.execute(
                "UPDATE review_reviewers SET password_hash = %s WHERE reviewer_id = %s AND password_hash = %s",
                (rehashed, reviewer_id, stored),
            )
    return LoginResult(LoginOutcome.OK, token, Session(reviewer_id, rows[0]["role"], csrf))


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


def item_sources(db: Database, item_id: str) -> list[dict[str, Any]]:
    """Each source fact of the item with the readable text around its span in the cleaned document (never the raw
    file) and the document's provenance: its source, publisher, licence, tier and retrieval time."""
    sources = [
        {**s, "excerpt": excerpt(s.pop("before"), s.pop("span"), s.pop("after")), "link": provenance_url(s["url"])}
        for s in db.query(
            """SELECT d.title, d.url, d.retrieved_at, s.title AS source_title, s.publisher, s.licence, s.tier,
                      substring(d.text FROM greatest(f.span_start - %(context)s, 0) + 1
                                FOR f.span_start - greatest(f.span_start - %(context)s, 0)) AS before,
                      substring(d.text FROM f.span_start + 1 FOR f.span_end - f.span_start) AS span,
                      substring(d.text FROM f.span_end + 1 FOR %(context)s) AS after
               FROM item_facts x JOIN facts f USING (fact_id) JOIN documents d USING (document_id)
               JOIN sources s USING (source_id) WHERE x.item_id = %(item)s ORDER BY f.fact_id""",
            {"item": item_id, "context": EXCERPT_CONTEXT_CHARS},
        )
    ]
    titles = link_titles([s["title"] for s in sources], [s["link"] for s in sources])
    return [{**s, "title": title} for s, title in zip(sources, titles, strict=True)]


def open_assignment(db: Database, blind_id: str, reviewer_id: str) -> dict[str, Any] | None:
    """The item behind the caller's own assignment (None for anyone else's handle), with its sources
    (:func:`item_sources`); stamps the first opening."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE review_assignments SET opened_at = coalesce(opened_at, now()) WHERE blind_id = %s AND reviewer_id = %s",
            (blind_id, reviewer_id),
        )
        if cur.rowcount != 1:
            return None
    rows = db.query(
        """SELECT a.blind_id, a.discipline, a.round, i.item_id, i.format, i.difficulty, i.question, i.options,
                  i.answer_index, i.explanation, (r.assignment_id IS NOT NULL) AS rated
           FROM review_assignments a JOIN items i USING (item_id) LEFT JOIN review_ratings r USING (assignment_id)
           WHERE a.blind_id = %s AND a.reviewer_id = %s""",
        (blind_id, reviewer_id),
    )
    item = rows[0]
    item["sources"] = item_sources(db, item.pop("item_id"))
    return item


class Submit(StrEnum):
    STORED = "stored"
    NOT_FOUND = "not_found"
    ALREADY_RATED = "already_rated"


def submit_rating(
    db: Database,
    blind_id: str,
    reviewer_id: str,
    scores: Mapping[str, object],
    verdict: Verdict,
    comment: str,
    seconds_claimed: float,
    rubric_set: str = "kina6",
) -> Submit:
    """Store the caller's rating of their own assignment and its gold labels, once, in one transaction.

    The scores must rate exactly the rubrics of ``rubric_set`` that fit the item's format (a ValueError in plain
    words otherwise). Time on page is the browser's count of visible seconds, capped by the server's clock since
    the first opening.
    """
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """SELECT a.assignment_id, a.spec, a.discipline, a.item_id, a.round,
                      extract(epoch FROM now() - a.opened_at), i.format
               FROM review_assignments a JOIN items i USING (item_id)
               WHERE a.blind_id = %s AND a.reviewer_id = %s FOR UPDATE OF a""",
            (blind_id, reviewer_id),
        )
        row = cur.fetchone()
        if row is None:
            return Submit.NOT_FOUND
        assignment_id, spec, discipline, item_id, round_, elapsed, item_format = row
        cur.execute("SELECT 1 FROM review_ratings WHERE assignment_id = %s", (assignment_id,))
        if cur.fetchone():
            return Submit.ALREADY_RATED
        checked = check_rubric_scores(scores, "", rubric_set, item_format)
        seconds = max(0.0, min(float(seconds_claimed), float(elapsed or 0.0)))
        cur.execute(
            """INSERT INTO review_ratings (assignment_id, scores, verdict, comment, seconds_on_page, rubric_set)
               VALUES (%s, %s, %s, %s, %s, %s)""",
            (assignment_id, as_json(checked), verdict.value, comment, seconds, rubric_set),
        )
        labels = [*((k, float(v)) for k, v in checked.items()), ("approve", float(verdict is Verdict.APPROVE))]
        insert_rows(
            conn,
            "gold_labels",
            ("sheet", "item_ref", "reviewer", "rubric", "rating"),
            [(f"review:{spec}:{discipline}:r{round_}", item_id, reviewer_id, k, v) for k, v in labels],
        )
    return Submit.STORED


# --- allocation and settlement (the Dagster assets and sensor call these) -----------------------------------------


def plan_assignments(db: Database, spec: str, discipline: str, policy: ReviewPolicy, seed: int) -> AssignmentResult:
    """The pairs the allocator would give the partition's unassigned items approved for review now (no write); the
    analysis' key-error suspects (analysis_tables 'suspect_items') first."""
    items = [
        ReviewItem(item_id=r["item_id"], discipline=discipline, author_id=r["author"] or "", suspect=r["suspect"])
        for r in db.query(
            f"""SELECT i.item_id, g.generator AS author,
                       EXISTS (SELECT 1 FROM analysis_tables s WHERE s.spec = %(spec)s AND s.name = 'suspect_items'
                               AND s.row ->> 'item_id' = i.item_id) AS suspect
                FROM items i LEFT JOIN generation_metadata g USING (item_id)
                WHERE i.spec = %(spec)s AND i.discipline = %(discipline)s AND {_APPROVED_FOR_REVIEW}
                  AND NOT EXISTS (SELECT 1 FROM review_assignments a WHERE a.item_id = i.item_id)
                ORDER BY i.item_id""",
            {"spec": spec, "discipline": discipline},
        )
    ]
    return assign_pairs(items, load_reviewers(db), open_load(db), policy.wip_cap, seed)


def assign_partition(
    db: Database, spec: str, discipline: str, policy: ReviewPolicy, seed: int, phase: str
) -> AssignmentResult:
    """Allocate two reviewers to every waiting item of the partition, under the WIP cap, in one transaction.

    An advisory lock per partition makes concurrent runs (the sensor's and a manual one) wait for each other, so an
    item never gets two pairs.
    """
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"review_assign:{spec}:{discipline}",))
        result = plan_assignments(db, spec, discipline, policy, seed)
        insert_rows(
            conn,
            "review_assignments",
            ("blind_id", "spec", "discipline", "item_id", "reviewer_id", "round", "phase"),
            [(new_token(), spec, discipline, a.item_id, a.reviewer_id, a.round, phase) for a in result.assignments],
        )
    return result


def _ratings(db: Database, spec: str, discipline: str, rubric_set: str) -> list[Rating]:
    """Both ratings of every round whose two ratings were scored on ``rubric_set``."""
    rows = db.query(
        """SELECT a.item_id, a.reviewer_id, a.round, r.scores, r.verdict, r.comment, r.seconds_on_page
           FROM review_assignments a JOIN review_ratings r USING (assignment_id)
           WHERE a.spec = %(spec)s AND a.discipline = %(discipline)s
             AND (SELECT count(*) FROM review_assignments b JOIN review_ratings rb USING (assignment_id)
                  WHERE b.item_id = a.item_id AND b.round = a.round AND rb.rubric_set = %(set)s) = 2
           ORDER BY a.item_id, a.round, a.reviewer_id""",
        {"spec": spec, "discipline": discipline, "set": rubric_set},
    )
    return [Rating(**r) for r in rows]


def settle_partition(db: Database, spec: str, discipline: str, policy: ReviewPolicy, seed: int) -> list[RoundOutcome]:
    """Settle every fully rated round of the partition: top up the audit sample, replace the partition's ledger,
    and take reviewers with too many flawed audited approvals off the whitelist; one transaction."""
    ratings = _ratings(db, spec, discipline, policy.rubric_set)
    mine = "item_id IN (SELECT item_id FROM items WHERE spec = %s AND discipline = %s)"
    validations = {
        (r["item_id"], r["round"]): r["reference"]
        for r in db.query(
            f"SELECT * FROM review_validations WHERE {mine} AND rubric_set = %s", (spec, discipline, policy.rubric_set)
        )
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
                  au.flawed AS audit_flawed, (au.item_id IS NOT NULL) AS audited, c.decision AS committee,
                  EXISTS (SELECT 1 FROM review_validations v WHERE v.item_id = a.item_id AND v.round = a.round)
                    AS validated
           FROM review_assignments a JOIN review_ratings ra ON ra.assignment_id = a.assignment_id
           JOIN review_assignments b ON b.item_id = a.item_id AND b.round = a.round AND b.reviewer_id > a.reviewer_id
           JOIN review_ratings rb ON rb.assignment_id = b.assignment_id
           LEFT JOIN review_audits au ON au.item_id = a.item_id AND au.round = a.round
           LEFT JOIN review_committee_decisions c ON c.item_id = a.item_id AND c.round = a.round
           WHERE (%(spec)s::text IS NULL OR a.spec = %(spec)s) AND (%(discipline)s::text IS NULL OR a.discipline = %(discipline)s)
           ORDER BY a.spec, a.discipline, a.item_id, a.round""",
        {"spec": spec, "discipline": discipline},
    )


def unvalidated_counts(db: Database, spec: str, rubric_set: str) -> dict[str, int]:
    """Fully rated (item, round)s per discipline with no validation under this rubric set: settling now would pay
    their reviews the base wage only."""
    validated = {
        (r["item_id"], r["round"])
        for r in db.query("SELECT item_id, round FROM review_validations WHERE rubric_set = %s", (rubric_set,))
    }
    counts: dict[str, int] = {}
    for p in rating_pairs(db, spec):
        if (p["item_id"], p["round"]) not in validated:
            counts[p["discipline"]] = counts.get(p["discipline"], 0) + 1
    return counts


def item_detail(db: Database, item_id: str, round_: int) -> dict[str, Any] | None:
    """Everything about one item's round, both reviewers included: for the principal only."""
    items = db.query(
        """SELECT item_id, spec, discipline, format, difficulty, question, options, answer_index, explanation
           FROM items WHERE item_id = %s""",
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
    return {
        **items[0],
        "round": round_,
        "reviews": reviews,
        "sources": item_sources(db, item_id),
        **{k: (v[0] if v else None) for k, v in extra.items()},
    }


def record_validation(
    db: Database, item_id: str, round_: int, reference: Mapping[str, object], validator: str, rubric_set: str = "kina6"
) -> None:
    """The principal's reference scores for an item's round, on the rubrics of ``rubric_set`` that fit its format."""
    formats = db.query("SELECT format FROM items WHERE item_id = %s", (item_id,))
    if not formats:
        raise ValueError(f"there is no item {item_id!r}")
    checked = check_rubric_scores(reference, "", rubric_set, formats[0]["format"])
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO review_validations (item_id, round, reference, validator, rubric_set) VALUES (%s, %s, %s, %s, %s)
               ON CONFLICT (item_id, round) DO UPDATE SET reference = EXCLUDED.reference, validator = EXCLUDED.validator,
                                                          rubric_set = EXCLUDED.rubric_set, created_at = now()""",
            (item_id, round_, as_json(checked), validator, rubric_set),
        )


def record_committee(db: Database, item_id: str, round_: int, decision: Decision, decided_by: str, note: str) -> None:
    """The core committee's decision on an escalated item; refused for an item's round nobody escalated (a forged
    form cannot overrule two reviewers)."""
    if decision is Decision.ESCALATED:
        raise ValueError(f"item {item_id!r}: the committee must decide approved, revise or rejected")
    if not escalated(db, item_id, round_):
        raise ValueError(
            f"no reviewer escalated item {item_id!r} in round {round_}; the committee decides escalated items only"
        )
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


# --- calibration and Table 5 (the Dagster assets call these) -------------------------------------------------------


def validated_reviews(db: Database, spec: str, discipline: str) -> list[dict[str, Any]]:
    """Settled reviews with a validated score: time on page and S_i per reviewer, the pilot of Corollary 1."""
    return db.query(
        """SELECT l.discipline, l.reviewer_id, r.seconds_on_page, l.validated_score
           FROM review_ledger l JOIN review_assignments a USING (item_id, reviewer_id, round)
           JOIN review_ratings r USING (assignment_id)
           WHERE l.spec = %s AND l.discipline = %s AND l.kind = 'base' AND l.validated_score IS NOT NULL""",
        (spec, discipline),
    )


def store_calibration(db: Database, spec: str, discipline: str, calibration: BonusCalibration) -> None:
    """Replace the partition's bonus calibration (one transaction)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM review_calibrations WHERE spec = %s AND discipline = %s", (spec, discipline))
        insert_rows(
            conn,
            "review_calibrations",
            ("spec", "discipline", "calibration"),
            [(spec, discipline, as_json(calibration.model_dump()))],
        )


def store_metrics(db: Database, spec: str, discipline: str, table: pl.DataFrame) -> None:
    """Replace the partition's KINA Table 5 rows (one transaction)."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM review_metrics WHERE spec = %s AND discipline = %s", (spec, discipline))
        insert_rows(
            conn,
            "review_metrics",
            ("spec", "discipline", *table.columns),
            [(spec, discipline, *r) for r in table.iter_rows()],
        )


def round_overview(db: Database, spec: str) -> list[dict[str, Any]]:
    """The team lead's view of a spec's rounds, per reviewer: items assigned, rated, validated (the admin set the
    reference scores), settled (in the ledger), and what was paid (base wages, bonuses, penalties)."""
    return db.query(
        """WITH mine AS (
             SELECT a.reviewer_id, a.item_id, a.round, r.assignment_id IS NOT NULL AS rated,
                    EXISTS (SELECT 1 FROM review_validations v WHERE v.item_id = a.item_id AND v.round = a.round)
                      AS validated
             FROM review_assignments a LEFT JOIN review_ratings r USING (assignment_id) WHERE a.spec = %(spec)s),
           paid AS (
             SELECT reviewer_id, count(*) FILTER (WHERE kind = 'base') AS settled,
                    count(*) FILTER (WHERE kind = 'bonus') AS bonuses, sum(amount) AS paid
             FROM review_ledger WHERE spec = %(spec)s GROUP BY reviewer_id)
           SELECT m.reviewer_id, count(*) AS assigned, count(*) FILTER (WHERE m.rated) AS rated,
                  count(*) FILTER (WHERE m.rated AND m.validated) AS validated,
                  coalesce(max(p.settled), 0) AS settled, coalesce(max(p.bonuses), 0) AS bonuses, max(p.paid) AS paid
           FROM mine m LEFT JOIN paid p USING (reviewer_id) GROUP BY m.reviewer_id ORDER BY m.reviewer_id""",
        {"spec": spec},
    )


def escalated(db: Database, item_id: str, round_: int) -> bool:
    """Whether a reviewer escalated the item's round (or the committee already decided it): only then may the core
    committee decide it."""
    return bool(
        db.scalar(
            """SELECT EXISTS (SELECT 1 FROM review_assignments a JOIN review_ratings r USING (assignment_id)
                              WHERE a.item_id = %(item)s AND a.round = %(round)s AND r.verdict = 'escalate')
                   OR EXISTS (SELECT 1 FROM review_committee_decisions WHERE item_id = %(item)s AND round = %(round)s)""",
            {"item": item_id, "round": round_},
        )
    )
