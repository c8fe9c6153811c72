"""What the faults bench and the crash tests share: a trimmed copy of the wine spec on disk, a real
`benchmark-platform run` subprocess, waiting (from outside, through the Dagster tables) until it is inside a step,
and the system of record's row counts to compare with a clean run."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import psycopg2
import yaml

from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, DATABASE_URL_ENV

DISCIPLINES = ("regions",)
SOURCES = ("ttb_ava_geojson",)
# Tables a run writes (spec-scoped ones filtered by spec), compared row for row with a clean run.
ROW_TABLES = (
    "documents",
    "facts",
    "selected_facts",
    "items",
    "item_facts",
    "audit_findings",
    "evaluation_answers",
    "releases",
)


def trimmed_spec(
    disciplines: Iterable[str] = DISCIPLINES, sources: Iterable[str] = SOURCES, **release: object
) -> BenchmarkSpec:
    """The bundled wine spec cut down to some sources and disciplines (same code path, a fraction of the time):
    every entry naming a dropped discipline or source is dropped, whichever section it is in."""
    keep_d, keep_s = set(disciplines), set(sources)
    spec = load_spec("wine")
    data = json.loads(spec.model_dump_json())
    data["taxonomy"][0]["children"] = [c for c in data["taxonomy"][0]["children"] if c["key"] in keep_d]
    data["sources"] = [s for s in data["sources"] if s["id"] in keep_s]
    dropped = (set(spec.discipline_keys) - keep_d) | ({s.id for s in spec.sources} - keep_s)

    def prune(node: object) -> object:
        if isinstance(node, dict):
            if dropped & {node.get("discipline"), node.get("source")}:
                return None
            kept = {k: prune(v) for k, v in node.items() if k not in dropped}
            return {k: v for k, v in kept.items() if v is not None or node[k] is None}
        if isinstance(node, list):
            return [x for x in map(prune, node) if x is not None]
        return None if isinstance(node, str) and node in dropped else node

    data = {k: v if k in {"taxonomy", "sources"} else prune(v) for k, v in data.items()}
    if data["facts"].get("rulebook") and not data["facts"]["rulebook"]["sources"]:
        data["facts"]["rulebook"] = None  # a rulebook section with none of its sources left says nothing
    data["release"].update(release)
    return BenchmarkSpec.model_validate({**data, "directory": spec.directory})


def write_spec(spec: BenchmarkSpec, folder: Path) -> Path:
    """The spec as a spec.yaml in `folder`, next to a copy of its bundled data (snapshot, anchors, gazetteers)."""
    root = str(spec.directory)

    def top_level_yaml(where: str, names: list[str]) -> set[str]:  # the spec and its includes: rewritten whole
        return {n for n in names if n.endswith(".yaml")} if where == root else set()

    shutil.copytree(spec.directory, folder, dirs_exist_ok=True, ignore=top_level_yaml)
    path = folder / "spec.yaml"
    path.write_text(yaml.safe_dump(json.loads(spec.model_dump_json()), sort_keys=False, allow_unicode=True))
    return path


def cli_env(db_url: str) -> dict[str, str]:
    env = dict(os.environ)
    env[DATABASE_URL_ENV] = db_url
    env.pop(DAGSTER_DATABASE_URL_ENV, None)  # Dagster's storage: the same database
    return env


def cli(args: list[str], env: dict[str, str], out: Path) -> subprocess.Popen[bytes]:
    """`benchmark-platform ARGS` as a subprocess, stdout and stderr to out.{stdout,stderr}.

    A `run` writes its release under out's folder (`releases/`), never into the project's releases/, which hold
    the user's own `make run`."""
    if args[:1] == ["run"]:
        args = [*args, "--releases-dir", str(out.parent / "releases")]
    return subprocess.Popen(
        [sys.executable, "-m", "benchmark_platform.cli.main", *args],
        env=env,
        stdout=out.with_suffix(".stdout").open("wb"),
        stderr=out.with_suffix(".stderr").open("wb"),
    )


def _poll(db_url: str, sql: str, params: tuple[object, ...]) -> list[tuple[Any, ...]]:
    try:
        with psycopg2.connect(db_url) as conn, conn.cursor() as cur:
            cur.execute(sql, params)
            return cur.fetchall()
    except psycopg2.errors.UndefinedTable:  # Dagster has not created its tables yet
        return []


def wait_inside_step(db_url: str, step_key: str, process: subprocess.Popen[bytes]) -> str | None:
    """Wait until a run has started `step_key` and not finished it; its run id (None if the process ended first)."""
    sql = """SELECT s.run_id FROM event_logs s WHERE s.dagster_event_type = 'STEP_START' AND s.step_key = %s
             AND NOT EXISTS (SELECT 1 FROM event_logs e WHERE e.run_id = s.run_id AND e.step_key = s.step_key
                             AND e.dagster_event_type IN ('STEP_SUCCESS', 'STEP_FAILURE'))"""
    while process.poll() is None:
        rows = _poll(db_url, sql, (step_key,))
        if rows:
            return str(rows[0][0])
        time.sleep(0.05)
    return None


def run_status(db_url: str, run_id: str) -> str | None:
    rows = _poll(db_url, "SELECT status FROM runs WHERE run_id = %s", (run_id,))
    return str(rows[0][0]) if rows else None


def slots_held(db_url: str, run_id: str) -> int:
    rows = _poll(db_url, "SELECT count(*) FROM concurrency_slots WHERE run_id = %s", (run_id,))
    return int(rows[0][0]) if rows else 0


def row_counts(db: Database, spec_name: str) -> dict[str, int]:
    counts = {}
    for table in ROW_TABLES:
        scoped = table in {"facts", "selected_facts", "items", "releases"}
        where = " WHERE spec = %s" if scoped else ""
        counts[table] = int(db.scalar(f"SELECT count(*) FROM {table}{where}", (spec_name,) if scoped else None))
    return counts
