"""`benchmark-platform review serve|add-reviewer|edit-reviewer|assign|settle|appeal|simulate-round`: expert review."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from benchmark_platform.store import Database


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("review", help="two-reviewer double-blind review (KINA bonus-on-bar tournament)")
    commands = parser.add_subparsers(dest="review_command", required=True)

    serve = commands.add_parser("serve", help="serve the review web app for reviewers and the principal")
    serve.add_argument(
        "--spec", default="wine", help="bundled spec name or path (its review section sets session length)"
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8765)
    serve.add_argument("--secure-cookies", action="store_true", help="mark cookies HTTPS-only (behind a TLS proxy)")
    serve.set_defaults(handler=_serve)

    add = commands.add_parser("add-reviewer", help="create a reviewer or admin account (password read from stdin)")
    add.add_argument("reviewer_id")
    add.add_argument("--role", choices=["reviewer", "admin"], default="reviewer")
    add.add_argument("--disciplines", default="", help="comma-separated discipline keys of --spec")
    add.add_argument("--spec", default="wine", help="bundled spec name or path whose discipline keys are valid")
    add.add_argument("--affiliation", default="")
    add.add_argument(
        "--exams-passed", action="store_true", help="passed both exam rounds (KINA 4.1) in each of --disciplines"
    )
    add.add_argument("--level", default="", help="certification, e.g. 'WSET Level 3'")
    add.add_argument("--conflicts", default="", help="comma-separated reviewer/author ids this reviewer must not meet")
    add.set_defaults(handler=_add_reviewer)

    edit = commands.add_parser(
        "edit-reviewer", help="change an account: disciplines, exam rounds, level, whitelist, conflicts, password"
    )
    edit.add_argument("reviewer_id")
    edit.add_argument("--spec", default="wine", help="bundled spec name or path whose discipline keys are valid")
    edit.add_argument("--disciplines", help="comma-separated discipline keys (replaces the list)")
    edit.add_argument("--add-disciplines", default="", help="comma-separated discipline keys to add")
    edit.add_argument(
        "--exam",
        action="append",
        default=[],
        metavar="DISCIPLINE:ROUND:passed|failed",
        help="record an exam result, e.g. regions:1:passed (round 1 depth test, round 2 item simulation)",
    )
    edit.add_argument("--exams-passed", action="store_true", help="both rounds passed in every discipline it reviews")
    edit.add_argument("--affiliation")
    edit.add_argument("--level")
    edit.add_argument("--conflicts", help="comma-separated reviewer/author ids (replaces the list)")
    edit.add_argument("--role", choices=["reviewer", "admin"])
    whitelist = edit.add_mutually_exclusive_group()
    whitelist.add_argument("--whitelist", dest="whitelisted", action="store_true", default=None)
    whitelist.add_argument("--no-whitelist", dest="whitelisted", action="store_false")
    edit.add_argument("--password", action="store_true", help="set a new password, read from stdin")
    edit.set_defaults(handler=_edit_reviewer)

    assign = commands.add_parser(
        "assign", help="assign reviewers to waiting items now (what the review assignment sensor does under make dev)"
    )
    assign.add_argument("--spec", default="wine", help="bundled spec name or path")
    assign.set_defaults(handler=_assign)

    settle = commands.add_parser("settle", help="settle every fully rated item: the payout ledger and audit sample")
    settle.add_argument("--spec", default="wine", help="bundled spec name or path")
    settle.set_defaults(handler=_settle)

    appeal = commands.add_parser(
        "appeal", help="an annotator's appeal: the item's two reviewers re-evaluate it in a new round"
    )
    appeal.add_argument("item_id")
    appeal.add_argument("--evidence", required=True, help="the new academic evidence (citation, page)")
    appeal.set_defaults(handler=_appeal)

    sim = commands.add_parser(
        "simulate-round", help="pilot -> calibration -> tournament round; writes the payout ledger"
    )
    sim.add_argument("--out", type=Path, required=True, help="CSV of the payout ledger")
    sim.add_argument("--items-per-discipline", type=int, default=60)
    sim.add_argument("--seed", type=int, default=7)
    sim.set_defaults(handler=_simulate)


def _database() -> Database:
    """The system of record, migrated: every review command works on a fresh database (the embedded one if none is
    configured)."""
    from benchmark_platform.store import Database, database_url, migrate

    db = Database(database_url(start_embedded=True))
    migrate(db)
    return db


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from benchmark_platform.review import ReviewSite, create_app, server_config
    from benchmark_platform.spec import load_spec

    spec = load_spec(args.spec)
    db = _database()
    site = ReviewSite(spec=spec.name, seed=spec.seed, disciplines=tuple(spec.discipline_keys), config=spec.review)
    app = create_app(db, site, secure_cookies=args.secure_cookies)
    uvicorn.Server(server_config(app, args.host, args.port)).run()
    return 0


def _add_reviewer(args: argparse.Namespace) -> int:
    from benchmark_platform.review import add_reviewer
    from benchmark_platform.review.models import Reviewer

    disciplines = _names(args.disciplines)
    try:
        _check_disciplines(disciplines, args.spec)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    password = _read_password()
    reviewer = Reviewer(
        reviewer_id=args.reviewer_id,
        disciplines=disciplines,
        exams_passed=disciplines if args.exams_passed else frozenset(),
        affiliation=args.affiliation,
        level=args.level,
        declared_conflicts=_names(args.conflicts),
    )
    try:
        add_reviewer(_database(), reviewer, args.role, password)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.role} {args.reviewer_id!r} added")
    return 0


def _read_password() -> str:
    return getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")


def _exam(text: str) -> tuple[str, int, bool]:
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or parts[1] not in ("1", "2") or parts[2] not in ("passed", "failed"):
        raise ValueError(f"--exam {text!r}: write DISCIPLINE:ROUND:passed or DISCIPLINE:ROUND:failed, ROUND 1 or 2")
    return parts[0], int(parts[1]), parts[2] == "passed"


def _edit_reviewer(args: argparse.Namespace) -> int:
    from benchmark_platform.review import ReviewerChange, edit_reviewer, load_reviewers

    db = _database()
    try:
        exams = [_exam(text) for text in args.exam]
        typed = _names(args.disciplines or "") | _names(args.add_disciplines) | {d for d, _, _ in exams}
        _check_disciplines(typed, args.spec)
        current = next((r for r in load_reviewers(db) if r.reviewer_id == args.reviewer_id), None)
        disciplines = _names(args.disciplines) if args.disciplines is not None else None
        added = _names(args.add_disciplines)
        if added:
            disciplines = (
                disciplines if disciplines is not None else (current.disciplines if current else frozenset())
            ) | added
        if args.exams_passed:
            reviews = disciplines if disciplines is not None else (current.disciplines if current else frozenset())
            exams += [(d, round_, True) for d in sorted(reviews) for round_ in (1, 2)]
        change = ReviewerChange(
            disciplines=disciplines,
            affiliation=args.affiliation,
            level=args.level,
            whitelisted=args.whitelisted,
            declared_conflicts=_names(args.conflicts) if args.conflicts is not None else None,
            role=args.role,
            exams=tuple(exams),
            password=_read_password() if args.password else None,
        )
        edit_reviewer(db, args.reviewer_id, change, recorded_by="cli")
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.reviewer_id!r} updated")
    return 0


def _assign(args: argparse.Namespace) -> int:
    from benchmark_platform.review import assign_partition
    from benchmark_platform.spec import load_spec

    spec = load_spec(args.spec)
    db = _database()
    for d in spec.discipline_keys:
        result = assign_partition(db, spec.name, d, spec.review.policy_for(d), spec.seed, spec.review.phase)
        reasons = sorted(set(result.unassigned.values()))
        waiting = f", {len(result.unassigned)} wait ({'; '.join(reasons)})" if result.unassigned else ""
        print(f"{d}: {len(result.assignments) // 2} items assigned{waiting}")
    return 0


def _settle(args: argparse.Namespace) -> int:
    from benchmark_platform.review import settle_partition, settlement_text
    from benchmark_platform.spec import load_spec

    spec = load_spec(args.spec)
    db = _database()
    for d in spec.discipline_keys:
        outcomes = settle_partition(db, spec.name, d, spec.review.policy_for(d), spec.seed)
        total = sum(e.amount for o in outcomes for e in o.ledger)
        print(f"{d}: settled {settlement_text(outcomes)}; {total:.2f} {spec.review.currency} paid")
    return 0


def _appeal(args: argparse.Namespace) -> int:
    from benchmark_platform.review import file_appeal

    try:
        handles = file_appeal(_database(), args.item_id, args.evidence)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"item {args.item_id!r} reopened for its {len(handles)} reviewers")
    return 0


def _check_disciplines(names: frozenset[str] | set[str], spec_name: str) -> None:
    """Typed discipline names against the spec's taxonomy (the spec is read only when a name was typed)."""
    if not names:
        return
    from benchmark_platform.review.models import check_disciplines
    from benchmark_platform.spec import load_spec

    spec = load_spec(spec_name)
    check_disciplines(names, spec.discipline_keys, spec.name)


def _names(text: str) -> frozenset[str]:
    from benchmark_platform.review.models import name_set

    return name_set(text)


def _simulate(args: argparse.Namespace) -> int:
    import polars as pl

    from benchmark_platform.review import SimulationConfig, simulate_review_round

    result = simulate_review_round(SimulationConfig(items_per_discipline=args.items_per_discipline, seed=args.seed))
    ledger = result.ledger()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    ledger.write_csv(args.out)
    for c in result.calibrations:
        print(
            f"{c.discipline}: Delta p_min={c.dp_min:.3f}  B(pi*={c.target_rate})={c.bonus_target:.2f}  "
            f"B_dominant>{c.bonus_dominant:.2f}  C_bonus={c.expected_bonus_at_target:.2f}/task"
        )
    totals = ledger.group_by("kind").agg(pl.col("amount").sum()).sort("kind")
    print(" ".join(f"{k}={v:.2f}" for k, v in totals.iter_rows()), f"-> {args.out}")
    print(result.table5)
    return 0
