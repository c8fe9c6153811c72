"""`benchmark-platform spec check SPEC`: validate a benchmark spec and open every file it names (item bank, results
imports, anchors), without loading Dagster; `spec drop NAME`: remove one spec's data from the system of record."""

from __future__ import annotations

import argparse
import sys

from benchmark_platform.spec import SpecError, load_spec
from benchmark_platform.spec.loader import spec_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("spec", help="check benchmark specs")
    commands = parser.add_subparsers(dest="spec_command", required=True)
    check = commands.add_parser(
        "check",
        help="validate a spec and open every file it names (item bank, imports, anchors): every error on its own "
        "line (stage, file and field), or ok with a summary",
    )
    check.add_argument("spec", help="a bundled spec name (e.g. wine) or the path of a spec .yaml file")
    check.set_defaults(handler=_check)


def _check(args: argparse.Namespace) -> int:
    try:
        spec = load_spec(args.spec)
    except SpecError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    from benchmark_platform.itembank.check import check_spec_files

    files = check_spec_files(spec)
    for problem in files.problems:
        print(f"error: {problem}", file=sys.stderr)
    if files.problems:
        return 2
    for note in files.notes:
        print(f"note: {note}")
    print(
        f"ok: {spec_path(args.spec)}: spec {spec.name}, {len(spec.discipline_keys)} disciplines, "
        f"{len(spec.sources)} sources, {len(spec.models)} models, {files.opened} files opened"
    )
    return 0
