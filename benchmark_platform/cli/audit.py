"""`benchmark-platform audit import-gold|kappa`: gold sheets into the system of record, and the kappa report of the
agents that need no frontier model on gold sheets read from files."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from benchmark_platform.inputs import InputLimits
from benchmark_platform.spec import DEFAULT_SPEC


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("audit", help="gold labels and the audit agents' calibration")
    commands = parser.add_subparsers(dest="audit_command", required=True)

    gold = commands.add_parser(
        "import-gold",
        help="import gold sheets (CSV, UTF-8 or cp1252) with rubric ratings; a sheet replaces its earlier import",
    )
    gold.add_argument("sheets", type=Path, nargs="+")
    gold.add_argument("--reviewer", help="reviewer of rows without a `reviewer` column (default: the sheet's name)")
    add_limit_flags(gold)
    gold.set_defaults(handler=_import_gold)

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
    from benchmark_platform.audit.calibration import read_gold_sheet
    from benchmark_platform.audit.persist import store_gold_sheets
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
    return 0


def _kappa(args: argparse.Namespace) -> int:
    from benchmark_platform.audit.calibration import report_markdown
    from benchmark_platform.audit.stage import sheet_kappa_report
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
