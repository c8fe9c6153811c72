"""`benchmark-platform runs recover`: fail runs whose process is gone and free the concurrency slots they hold."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("runs", help="Dagster runs of this project")
    commands = parser.add_subparsers(dest="runs_command", required=True)
    recover = commands.add_parser(
        "recover",
        help="mark runs whose process is gone (killed, crashed, database lost) failed and free their pool slots",
    )
    recover.set_defaults(handler=_recover)


def recover(log: Callable[[str], None] = print) -> int:
    """Recover crashed runs on the project's Dagster instance (the environment must be prepared); returns how many."""
    import dagster as dg

    from benchmark_platform.defs.automation.recovery import recover_runs

    with dg.DagsterInstance.get() as instance:
        recovered = recover_runs(instance)
    for r in recovered:
        if r.reason == "finished":
            log(f"freed the concurrency slots of finished run {r.run_id} ({r.job_name}, {r.status})")
        else:
            log(f"run {r.run_id} ({r.job_name}, was {r.status}) {r.reason}; its concurrency slots are freed")
    return len(recovered)


def _recover(_: argparse.Namespace) -> int:
    from benchmark_platform.cli.run import prepare_environment

    prepare_environment()
    if not recover():
        print("no crashed runs: nothing to recover")
    return 0
