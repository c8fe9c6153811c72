"""`benchmark-platform spec check SPEC`: validate a benchmark spec and open every file it names (item bank, results
imports, anchors), without loading Dagster; `spec drop NAME`: remove one spec's data from the system of record."""

from __future__ import annotations

import argparse
import sys

from benchmark_platform.spec import SpecError, load_spec, spec_path


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
    drop = commands.add_parser(
        "drop",
        help="remove one spec's data from the database (items, findings, selections, answers, analyses, release "
        "records); other specs' rows are untouched; release folders on disk are kept",
    )
    drop.add_argument("spec", help="the spec's name, or the path of its .yaml")
    drop.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    drop.set_defaults(handler=_drop)


def _check(args: argparse.Namespace) -> int:
    try:
        spec = load_spec(args.spec)
    except SpecError as error:
        for problem in error.problems:
            print(f"error: {problem}", file=sys.stderr)
        return 2
    from benchmark_platform.cli.spec_files import check_spec_files

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


def _drop(args: argparse.Namespace) -> int:
    from benchmark_platform.store import Database, database_url, drop_spec, migrate, spec_row_counts

    name = load_spec(args.spec).name if args.spec.endswith((".yaml", ".yml")) else args.spec
    db = Database(database_url(start_embedded=True))
    migrate(db)
    counts = spec_row_counts(db, name)
    if not counts:
        print(f"spec {name}: no rows in the database; nothing to drop")
        return 0
    summary = ", ".join(f"{table} {n}" for table, n in counts.items())
    if not args.yes:
        if not sys.stdin.isatty():
            print(f"error: spec {name}: dropping {summary} needs confirmation: rerun with --yes", file=sys.stderr)
            return 2
        answer = input(f"drop every row of spec {name} ({summary})? type the spec's name to confirm: ")
        if answer.strip() != name:
            print("not confirmed; nothing was dropped")
            return 1
    deleted = drop_spec(db, name)
    print(f"dropped spec {name}: {sum(deleted.values())} rows ({', '.join(f'{t} {n}' for t, n in deleted.items())})")
    wiped = _wipe_dagster_assets(name)
    print(f"wiped Dagster's materialisation history of {wiped} assets of {name} (a later run rebuilds them)")
    return 0


def _wipe_dagster_assets(name: str) -> int:
    """Dagster's records of the spec's assets (keys `<spec>/...`): with the rows gone, they must not claim the data is
    materialised and current. Dagster loads only here, after the rows are dropped."""
    import dagster as dg

    from benchmark_platform.cli.run import prepare_environment

    prepare_environment()
    with dg.DagsterInstance.get() as instance:
        keys = list(instance.get_asset_keys(prefix=[name]))
        if keys:
            instance.wipe_assets(keys)
    return len(keys)
