"""Rebuild bench (issue 41, issue 40 item 2): what an incremental `benchmark-platform run` costs against `--force`.

Into one fresh database, with copies of the specs in a temporary folder (so an anchor file can be edited), six real
`benchmark-platform run` subprocesses, one after the other: `first` (a fresh build), `noop` (nothing changed),
`forced` (`--force`), `change` (one discipline's anchors.yaml edited), `forced_after_change` (`--force`), and
`revert` (the edit undone). Each step's release (all files but lineage.json) is compared with the release it must
equal: noop and first with forced, change with forced_after_change, revert with first (the revert case of issue 40:
the reused audit run and anchor import must be the current ones). Ratios: noop / forced, change / forced_after_change.

`overhead_share` per step: 1 - (sum of Dagster step durations of the step's runs) / wall time of the subprocess
(process start, run creation, planning, stale status and observations are the overhead; a step's own time counts as
stage work). The machine's load average is recorded before each step. Prints one JSON line.

Usage: python -m benchmark_platform.bench rebuild [--spec wine --spec mmlu_pro] [--discipline SPEC:DISCIPLINE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import psycopg2

from benchmark_platform.bench._faultkit import cli, cli_env, write_spec
from benchmark_platform.bench.faults import Databases
from benchmark_platform.cli.run import DEFAULT_RUN_SPECS
from benchmark_platform.release import release_files
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database, migrate

EDITED = {"wine": "regions", "mmlu_pro": "law"}  # the discipline whose anchors.yaml the change edits, per spec
STEPS = ("first", "noop", "forced", "change", "forced_after_change", "revert")


def _run_ids(url: str) -> set[str]:
    try:
        with psycopg2.connect(url) as conn, conn.cursor() as cur:
            cur.execute("SELECT run_id FROM runs")
            return {r[0] for r in cur.fetchall()}
    except psycopg2.errors.UndefinedTable:  # Dagster creates its tables on the first run
        return set()


def _step_seconds(url: str, run_ids: set[str]) -> float:
    """The sum of the runs' step durations (STEP_START to STEP_SUCCESS/FAILURE), from Dagster's event log."""
    if not run_ids:
        return 0.0
    with psycopg2.connect(url) as conn, conn.cursor() as cur:
        cur.execute(
            """SELECT coalesce(sum(extract(epoch FROM e.timestamp - s.timestamp)), 0) FROM event_logs s
               JOIN event_logs e ON e.run_id = s.run_id AND e.step_key = s.step_key
                    AND e.dagster_event_type IN ('STEP_SUCCESS', 'STEP_FAILURE')
               WHERE s.dagster_event_type = 'STEP_START' AND s.run_id = ANY(%s)""",
            (sorted(run_ids),),
        )
        row = cur.fetchone()
        return float(row[0]) if row else 0.0


def release_differences(a: Path, b: Path) -> list[str]:
    """Files (bar lineage.json) missing from one release or with different bytes."""
    names = release_files(a) | release_files(b)
    return sorted(
        n
        for n in names - {"lineage.json"}
        if not (a / n).is_file() or not (b / n).is_file() or (a / n).read_bytes() != (b / n).read_bytes()
    )


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmark_platform.bench rebuild")
    parser.add_argument("--spec", action="append", help=f"bundled spec (default: {', '.join(DEFAULT_RUN_SPECS)})")
    args = parser.parse_args()
    names = args.spec or list(DEFAULT_RUN_SPECS)
    databases = Databases()
    try:
        url = databases.new()
        migrate(Database(url))
        with tempfile.TemporaryDirectory(prefix="bench_rebuild_") as scratch:
            root = Path(scratch)
            specs = {n: write_spec(load_spec(n), root / "specs" / n) for n in names}
            edited = {n: specs[n].parent / "anchors" / EDITED[n] / "anchors.yaml" for n in names}
            originals = {n: p.read_bytes() for n, p in edited.items()}
            env = cli_env(url)
            steps: dict[str, dict[str, object]] = {}
            for step in STEPS:
                if step == "change":
                    for path in edited.values():
                        path.write_bytes(path.read_bytes() + b"\n# reviewed again: a new content hash\n")
                if step == "revert":
                    for n, path in edited.items():
                        path.write_bytes(originals[n])
                force = ["--force"] if step.startswith("forced") else []
                before = _run_ids(url)
                load = os.getloadavg()[0]
                started = time.perf_counter()
                out = root / "run" / step
                out.parent.mkdir(parents=True, exist_ok=True)
                # --jobs 1: the specs one after the other in one process, so 1 - step time / wall is its overhead
                specs_args = [a for p in specs.values() for a in ("--spec", str(p))]
                process = cli(["run", *specs_args, "--jobs", "1", *force], env, out)
                code = process.wait()
                wall = time.perf_counter() - started
                worked = _step_seconds(url, _run_ids(url) - before)
                for n in names:  # the release as this step left it (the releases folder is shared by the steps)
                    if (root / "run" / "releases" / n).is_dir():
                        shutil.copytree(root / "run" / "releases" / n, root / "kept" / step / n, dirs_exist_ok=True)
                steps[step] = {
                    "exit": code,
                    "wall_s": round(wall, 1),
                    "step_s": round(worked, 1),
                    "overhead_share": round(1 - worked / wall, 3),
                    "load_1min": round(load, 2),
                    "up_to_date_lines": out.with_suffix(".stdout").read_text().count(" up to date"),
                }

            def same(a: str, b: str) -> list[str]:
                return release_differences(root / "kept" / a, root / "kept" / b)

            entries = [
                e
                for path in sorted((root / "kept" / "change").rglob("lineage.json"))
                for partitions in json.loads(path.read_text(encoding="utf-8"))["assets"].values()
                for e in partitions.values()
                if e
            ]
            result = {
                "bench": "rebuild",
                "specs": names,
                "edited": {n: f"anchors/{EDITED[n]}/anchors.yaml" for n in names},
                "steps": steps,
                "noop_ratio": round(steps["noop"]["wall_s"] / steps["forced"]["wall_s"], 3),  # type: ignore[operator]
                "change_ratio": round(
                    steps["change"]["wall_s"] / steps["forced_after_change"]["wall_s"],  # type: ignore[operator]
                    3,
                ),
                "differences": {
                    "first_vs_forced": same("first", "forced"),
                    "noop_vs_forced": same("noop", "forced"),
                    "change_vs_forced_after_change": same("change", "forced_after_change"),
                    "revert_vs_first": same("revert", "first"),
                },
                "change_lineage": {
                    "reused": sum(1 for e in entries if e.get("reused")),
                    "built": sum(1 for e in entries if not e.get("reused")),
                },
                "cpus": os.cpu_count(),
            }
        print(json.dumps(result, sort_keys=True))
    finally:
        databases.drop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
