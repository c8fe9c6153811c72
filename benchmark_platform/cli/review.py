"""`benchmark-platform review serve|add-reviewer|appeal|simulate-round`: the expert review stage."""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path


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
    add.add_argument("--disciplines", default="", help="comma-separated discipline keys")
    add.add_argument("--affiliation", default="")
    add.add_argument("--exams-passed", action="store_true", help="passed both exam rounds (KINA 4.1)")
    add.add_argument("--conflicts", default="", help="comma-separated reviewer/author ids this reviewer must not meet")
    add.set_defaults(handler=_add_reviewer)

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


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from benchmark_platform.review.web import create_app
    from benchmark_platform.spec import load_spec
    from benchmark_platform.store import Database, database_url, migrate

    spec = load_spec(args.spec)
    db = Database(database_url(start_embedded=True))
    migrate(db)
    app = create_app(db, session_hours=spec.review.session_hours, secure_cookies=args.secure_cookies)
    uvicorn.run(app, host=args.host, port=args.port, log_level="info")
    return 0


def _add_reviewer(args: argparse.Namespace) -> int:
    from benchmark_platform.review.models import Reviewer
    from benchmark_platform.review.repository import add_reviewer
    from benchmark_platform.store import Database, database_url

    password = getpass.getpass("password: ") if sys.stdin.isatty() else sys.stdin.readline().rstrip("\n")
    reviewer = Reviewer(
        reviewer_id=args.reviewer_id,
        disciplines=_names(args.disciplines),
        affiliation=args.affiliation,
        exam_round1_passed=args.exams_passed,
        exam_round2_passed=args.exams_passed,
        declared_conflicts=_names(args.conflicts),
    )
    try:
        add_reviewer(Database(database_url()), reviewer, args.role, password)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.role} {args.reviewer_id!r} added")
    return 0


def _appeal(args: argparse.Namespace) -> int:
    from benchmark_platform.review.repository import file_appeal
    from benchmark_platform.store import Database, database_url

    try:
        handles = file_appeal(Database(database_url()), args.item_id, args.evidence)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"item {args.item_id!r} reopened for its {len(handles)} reviewers")
    return 0


def _names(text: str) -> frozenset[str]:
    return frozenset(x.strip() for x in text.split(",") if x.strip())


def _simulate(args: argparse.Namespace) -> int:
    import polars as pl

    from benchmark_platform.review.simround import SimulationConfig, simulate_review_round

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
