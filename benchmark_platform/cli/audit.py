"""`benchmark-platform audit gold-sheet|import-gold|kappa`: a stratified gold sheet for human raters, gold sheets into
the system of record (then the specs' calibration, so the next run's audit applies it), and the kappa report of the
agents that need no frontier model on gold sheets read from files."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from benchmark_platform.inputs import InputLimits
from benchmark_platform.spec import DEFAULT_SPEC

if TYPE_CHECKING:
    from benchmark_platform.store import Database


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("audit", help="gold labels and the audit agents' calibration")
    commands = parser.add_subparsers(dest="audit_command", required=True)

    gold = commands.add_parser(
        "import-gold",
        help="import gold sheets (CSV, UTF-8 or cp1252) with rubric ratings; a sheet replaces its earlier import",
    )
    gold.add_argument("sheets", type=Path, nargs="+")
    gold.add_argument("--reviewer", help="reviewer of rows without a `reviewer` column (default: the sheet's name)")
    gold.add_argument(
        "--spec",
        action="append",
        help="spec to recalibrate after the import (repeatable; default: every bundled spec the database has audited)",
    )
    add_limit_flags(gold)
    gold.set_defaults(handler=_import_gold)

    sheet = commands.add_parser(
        "gold-sheet",
        help="write a stratified gold sheet (discipline x strategy x difficulty) of a spec's audited items for raters",
    )
    sheet.add_argument("--spec", default=DEFAULT_SPEC, help="bundled spec name or path to a spec.yaml")
    sheet.add_argument("--n", type=int, default=50, help="items on the sheet (default 50, OenoBench 4.2)")
    sheet.add_argument("--out", type=Path, required=True, help="the CSV to write")
    sheet.add_argument("--seed", type=int, help="sampling seed (default: the spec's seed)")
    sheet.set_defaults(handler=_gold_sheet)

    kappa = commands.add_parser("kappa", help="Cohen's kappa per agent against the human rubrics of gold sheets")
    kappa.add_argument("sheets", type=Path, nargs="+")
    kappa.add_argument("--spec", default=DEFAULT_SPEC, help="spec whose audit thresholds and rubric links apply")
    kappa.add_argument("--human-reference", type=Path, help="JSONL of human-written stems (A4 negatives)")
    kappa.set_defaults(handler=_kappa)


def add_limit_flags(parser: argparse.ArgumentParser) -> None:
    """--max-bytes/--max-rows/--max-depth: raise an import's limits (benchmark_platform.inputs.InputLimits)."""
    defaults = InputLimits()
    parser.add_argument("--max-bytes", type=int, default=defaults.max_bytes, help="largest file accepted")
    parser.add_argument("--max-rows", type=int, default=defaults.max_rows, help="most rows accepted per file")
    parser.add_argument("--max-depth", type=int, default=defaults.max_depth, help="deepest bracket nesting in a field")


def limits_of(args: argparse.Namespace) -> InputLimits:
    return InputLimits(max_bytes=args.max_bytes, max_rows=args.max_rows, max_depth=args.max_depth)


def _import_gold(args: argparse.Namespace) -> int:
    from benchmark_platform.audit import read_gold_sheet, store_gold_sheets
    from benchmark_platform.store import Database, database_url, migrate

    limits = limits_of(args)
    # every sheet is read and validated before anything is written; then all are stored in one transaction
    sheets = [(path, read_gold_sheet(path, reviewer=args.reviewer or path.stem, limits=limits)) for path in args.sheets]
    db = Database(database_url(start_embedded=True))
    migrate(db)
    store_gold_sheets(db, [sheet for _, sheet in sheets])
    for path, sheet in sheets:
        print(
            f"{path}: {len(sheet.items)} items, {len(sheet.ratings)} ratings ({sheet.encoding}) as sheet {sheet.name!r}"
        )
    _recalibrate(db, args.spec)
    return 0


def _recalibrate(db: Database, names: list[str] | None) -> None:
    """The calibration of each spec on the gold labels now stored (what the asset `audit_calibration` does): the
    next run's audit then applies the new advisory set (it is part of the audit's digest), in the same run."""
    from benchmark_platform.audit import advisory_agents, calibrate_spec
    from benchmark_platform.embed import StaticEmbedder
    from benchmark_platform.paths import SPECS_DIR
    from benchmark_platform.spec import load_spec

    if names is None:  # a spec loaded from a path elsewhere is named with --spec
        audited = {r["spec"] for r in db.query("SELECT DISTINCT spec FROM audit_runs")}
        names = sorted(p.name for p in SPECS_DIR.iterdir() if (p / "spec.yaml").exists() and p.name in audited)
    for name in names:
        spec = load_spec(name)
        rows = asyncio.run(calibrate_spec(db, spec, StaticEmbedder()))
        advisory = sorted(advisory_agents(rows))
        print(
            f"recalibrated {spec.name}: {len(rows)} agent-rubric pairs, advisory: {', '.join(advisory) or 'none'}; "
            "the next `benchmark-platform run` re-applies the audit policy"
        )


def _gold_sheet(args: argparse.Namespace) -> int:
    from benchmark_platform.audit import load_gold_candidates, sheet_rubrics, stratified_sample, write_gold_sheet
    from benchmark_platform.spec import load_spec
    from benchmark_platform.store import Database, database_url, migrate

    spec = load_spec(args.spec)
    db = Database(database_url(start_embedded=True))
    migrate(db)
    candidates = load_gold_candidates(db, spec.name)
    if not candidates:
        raise ValueError(
            f"{spec.name}: no audited items in the database; run `benchmark-platform run --spec {args.spec}`"
        )
    chosen = stratified_sample(candidates, args.n, spec.seed if args.seed is None else args.seed)
    rubrics = sheet_rubrics(spec.audit)
    write_gold_sheet(args.out, chosen, rubrics)
    strata = len({c.stratum for c in chosen})
    high = sorted({link.rubric for links in spec.audit.rubrics.values() for link in links if link.defect_if == "high"})
    print(
        f"{args.out}: {len(chosen)} of {len(candidates)} audited items of {spec.name} in {strata} strata "
        f"(discipline x strategy x difficulty); rubric columns to fill with 0 or 1 (1 = fine"
        + (f"; for {', '.join(r for r in high if r in rubrics)} 1 = the defect is there" if high else "")
        + f"; blank = not rated): {', '.join(rubrics)}; then `benchmark-platform audit import-gold {args.out}`"
    )
    return 0


def _kappa(args: argparse.Namespace) -> int:
    from benchmark_platform.audit import report_markdown, sheet_kappa_report
    from benchmark_platform.embed import StaticEmbedder
    from benchmark_platform.spec import load_spec

    spec = load_spec(args.spec)
    try:
        rows, _ = asyncio.run(sheet_kappa_report(args.sheets, spec, StaticEmbedder(), args.human_reference))
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(report_markdown(rows, spec.audit.kappa_advisory_below))
    return 0
