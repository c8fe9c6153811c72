"""`benchmark-platform spec check SPEC`: validate a benchmark spec without loading Dagster or any stage."""

from __future__ import annotations

import argparse
import sys

from benchmark_platform.spec import SpecError, load_spec
from benchmark_platform.spec.loader import spec_path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("spec", help="check benchmark specs")
    commands = parser.add_subparsers(dest="spec_command", required=True)
    check = commands.add_parser(
        "check", help="validate a spec: every error on its own line (file and field path), or ok with a summary"
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
    print(
        f"ok: {spec_path(args.spec)}: spec {spec.name}, {len(spec.discipline_keys)} disciplines, "
        f"{len(spec.sources)} sources, {len(spec.models)} models"
    )
    return 0
