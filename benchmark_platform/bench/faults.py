"""Faults bench (issue 22): kill-and-rerun at five points of the pipeline, the bad-input corpus, a killed LLM batch.

- Kill-and-rerun: a trimmed wine spec (one source, one discipline: the whole graph in ~40 s) is built once cleanly
  (the reference), then five times into fresh databases, each time a real `benchmark-platform run` subprocess is
  killed with SIGKILL inside one asset's step (ingest, facts, items, audit, release: what the Dagster event log says
  it is executing), and `benchmark-platform run` is started again. `faults_injected` counts kills that landed inside
  their step; `runs_completed_after_fault` counts reruns that exit 0 (a rerun waiting on a dead run's pool slot
  counts as not completed); `rows_lost` / `rows_duplicated` compare the rerun's rows per table with the reference;
  `releases_identical` counts reruns whose manifest.json is byte-identical to the reference's.
- Bad inputs: the corpus of bench/_badinputs.py through the CLI's entry point: `clear_errors` counts cases with a
  non-zero exit, one `error:` line and no traceback; `tracebacks` counts Python tracebacks and Dagster stack traces
  in every corpus case and every rerun; a gold sheet imported first must be unchanged (else its rows count as lost).
  Three more bad inputs are met inside a run: a corrupted snapshot body, anchors nested 100,000 deep or cut short.
- LLM batch: a gateway batch of 120 calls at concurrency 8 against a scripted server (1 s per call), killed mid-batch,
  then resumed: `calls_in_flight_at_kill` (sent, no answer journalled), `calls_repaid_in_flight` (asked again by the
  resume: unavoidable, their answers never arrived), `calls_repaid_completed` (answered and journalled before the kill
  yet asked again: must be 0). Counted by the server's request log, the gateway's own figures alongside.

- Frozen database (issue 40): a PostgreSQL server of the bench's own, stopped with SIGSTOP, and `db status` and
  `run` against it with a URL timeout of FROZEN_TIMEOUT_S: `frozen_clear_errors` counts commands that stop with one
  `error:` line and exit 2, `frozen_max_seconds` the longest they took.
- Concurrent runs: two `run` of the trimmed spec started together on one database: `concurrent_releases` (runs
  that wrote a release), `concurrent_refused_clearly` (the other stopped with one line saying which run holds the
  spec), tracebacks counted with the others.
- Revert: build, change a fact source (ten AVA pages fewer), build, change it back, build:
  `revert_release_identical` is 1 when the third release's manifest equals the first's (a rebuild that reuses an
  earlier stage run must make that run current again: issue 40 item 2, fixed on branch i41).

Usage: python -m benchmark_platform.bench faults [--points source_documents,facts,...] [--skip-gateway]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg2
import yaml

from benchmark_platform.bench._badinputs import GOOD_ROW, HEADER, corpus, run_case
from benchmark_platform.bench._faultkit import (
    cli,
    cli_env,
    row_counts,
    run_status,
    slots_held,
    trimmed_spec,
    wait_inside_step,
    write_spec,
)
from benchmark_platform.store import Database, migrate
from benchmark_platform.store.settings import DATABASE_URL_ENV, database_url

POINTS = ("source_documents", "facts", "items", "audit_findings", "release")
BLOCKED = b"blocked by limit for pool"
TRACES = (b"Traceback (most recent call last)", b"Stack Trace:")


class Databases:
    """Fresh databases on the platform's server, dropped at the end."""

    def __init__(self) -> None:
        self.server = database_url(start_embedded=True)
        self.admin = self.server.rsplit("/", 1)[0] + "/postgres"
        self.names: list[str] = []

    def _sql(self, statement: str) -> None:
        conn = psycopg2.connect(self.admin)
        conn.autocommit = True
        with conn.cursor() as cur:
            cur.execute(statement)
        conn.close()

    def new(self) -> str:
        name = f"bp_bench_faults_{uuid.uuid4().hex[:8]}"
        self._sql(f'CREATE DATABASE "{name}"')
        self.names.append(name)
        return self.server.rsplit("/", 1)[0] + f"/{name}"

    def drop(self) -> None:
        for name in self.names:
            self._sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def finish(process: subprocess.Popen[bytes], out: Path) -> int:
    """Exit code of a run; -1 (and the run stopped) when it waits on a pool slot held by a dead run."""
    while process.poll() is None:
        if BLOCKED in out.with_suffix(".stderr").read_bytes():
            process.kill()
            process.wait()
            return -1
        time.sleep(0.2)
    return process.returncode


def _release_dir(out: Path) -> Path | None:
    for line in out.with_suffix(".stdout").read_text().splitlines():
        if line.strip().startswith("release: "):  # the CLI's summary indents it
            return Path(line.strip().removeprefix("release: "))
    return None


def _keep_release(out: Path, where: Path) -> dict[str, object] | None:
    """A copy of the release a run wrote (every run writes the same folder) and its manifest."""
    import shutil

    from benchmark_platform.release.bundle import read_manifest

    directory = _release_dir(out)
    if directory is None or not (directory / "manifest.json").is_file():
        return None
    shutil.copytree(directory, where)
    return read_manifest(where)


def _traces(*paths: Path) -> int:
    return sum(p.read_bytes().count(t) for p in paths if p.exists() for t in TRACES)


def kill_and_rerun(dbs: Databases, spec_file: Path, work: Path, points: list[str], log) -> dict[str, Any]:
    ref_url = dbs.new()
    ref_out = work / "reference"
    code = finish(cli(["run", "--spec", str(spec_file)], cli_env(ref_url), ref_out), ref_out)
    if code != 0:
        raise RuntimeError(f"the clean reference run failed: {ref_out.with_suffix('.stderr')}")
    reference = row_counts(Database(ref_url), "wine")
    ref_manifest = _keep_release(ref_out, work / "release_reference")
    log(f"reference: {reference}")
    figures = {"faults_injected": 0, "runs_completed_after_fault": 0, "rows_lost": 0, "rows_duplicated": 0}
    figures |= {"kills_missed": 0, "dead_runs_holding_slots": 0, "releases_identical": 0, "tracebacks": 0}
    for point in points:
        url = dbs.new()
        killed_out, rerun_out = work / f"killed_{point}", work / f"rerun_{point}"
        process = cli(["run", "--spec", str(spec_file)], cli_env(url), killed_out)
        run_id = wait_inside_step(url, f"wine__{point}", process)
        if run_id is None:
            figures["kills_missed"] += 1
            log(f"{point}: the run ended before the step started; no fault injected")
            continue
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        figures["faults_injected"] += 1
        figures["dead_runs_holding_slots"] += int(run_status(url, run_id) == "STARTED" and slots_held(url, run_id) > 0)
        started = time.perf_counter()
        code = finish(cli(["run", "--spec", str(spec_file)], cli_env(url), rerun_out), rerun_out)
        counts = row_counts(Database(url), "wine")
        lost = sum(max(0, reference[t] - counts[t]) for t in reference)
        duplicated = sum(max(0, counts[t] - reference[t]) for t in reference)
        manifest = _keep_release(rerun_out, work / f"release_{point}") if code == 0 else None
        identical = manifest is not None and manifest == ref_manifest
        if manifest is not None and ref_manifest is not None and not identical:
            from benchmark_platform.release.bundle import compare_files

            log(f"{point}: release differs from the reference: {compare_files(ref_manifest, manifest)[:8]}")
        figures["runs_completed_after_fault"] += int(code == 0)
        figures["rows_lost"] += lost
        figures["rows_duplicated"] += duplicated
        figures["releases_identical"] += int(identical)
        figures["tracebacks"] += _traces(rerun_out.with_suffix(".stderr"))
        log(
            f"{point}: killed run {run_id[:8]} ({run_status(url, run_id)} after recovery), rerun exit {code} in "
            f"{time.perf_counter() - started:.0f} s, lost {lost}, duplicated {duplicated}, release identical {identical}"
        )
    return figures


def bad_inputs(dbs: Databases, work: Path) -> dict[str, int]:
    from benchmark_platform.cli.main import main

    url = dbs.new()
    db = Database(url)
    migrate(db)
    os.environ[DATABASE_URL_ENV] = url
    kept = work / "gold" / "kept.csv"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text(HEADER + GOOD_ROW)
    assert main(["audit", "import-gold", str(kept)]) == 0
    before = db.query("SELECT sheet, item_ref, reviewer, rubric, rating FROM gold_labels ORDER BY 1, 2, 3, 4")
    spec_text = yaml.safe_dump(json.loads(trimmed_spec().model_dump_json()), sort_keys=False)
    outcomes = [run_case(case, main) for case in corpus(work / "corpus", spec_text)]
    after = db.query("SELECT sheet, item_ref, reviewer, rubric, rating FROM gold_labels ORDER BY 1, 2, 3, 4")
    for o in outcomes:
        if not o.clear:
            print(f"unclear: {o.case} exit {o.code}: {o.stderr[-400:]!r}")
    return {
        "bad_inputs": len(outcomes),
        "clear_errors": sum(o.clear for o in outcomes),
        "corpus_tracebacks": sum(o.traceback for o in outcomes),
        "corpus_rows_changed": sum(1 for row in before if row not in after) + sum(1 for r in after if r not in before),
    }


def pipeline_inputs(dbs: Databases, spec_file: Path, work: Path) -> dict[str, int]:
    """Bad inputs met inside a run (`benchmark-platform run` subprocesses on copies of the trimmed spec): a corrupted
    snapshot body (ingest), an anchors file nested 100,000 brackets deep and an anchors file cut mid-way (anchors)."""
    import shutil

    cases: dict[str, Callable[[Path], object]] = {
        "snapshot_body_corrupted": lambda d: [
            b.write_bytes(b"\x1f\x8b corrupted") for b in d.glob("snapshot/bodies/*")
        ],
        "anchors_100k_brackets": lambda d: (d / "anchors/regions/anchors.yaml").write_text(
            "discipline: regions\nk_total: " + "[" * 50_000 + "]" * 50_000 + "\n"
        ),
        "anchors_truncated": lambda d: (d / "anchors/regions/anchors.yaml").write_bytes(
            (d / "anchors/regions/anchors.yaml").read_bytes()[:200]
        ),
    }
    clear = traces = 0
    for name, damage in cases.items():
        folder = work / f"bad_{name}"
        shutil.copytree(spec_file.parent, folder)
        damage(folder)
        out = work / f"bad_{name}"
        code = finish(cli(["run", "--spec", str(folder / "spec.yaml")], cli_env(dbs.new()), out), out)
        err = out.with_suffix(".stderr").read_text()
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        traced = _traces(out.with_suffix(".stderr")) > 0
        clear += int(code not in (0, -1) and len(errors) == 1 and not traced)
        traces += int(traced)
        print(f"{name}: exit {code}: {errors[-1] if errors else err[-300:]!r}")
    return {"bad_inputs": len(cases), "clear_errors": clear, "tracebacks": traces}


FROZEN_TIMEOUT_S = 10


def frozen_database(work: Path, spec_file: Path) -> dict[str, Any]:
    """`db status` and `run` against a SIGSTOPped server of our own (never the shared one)."""
    from benchmark_platform.bench._scratchpg import ScratchServer

    server = ScratchServer()
    clear, longest = 0, 0.0
    try:
        url = f"{server.url()}?connect_timeout={FROZEN_TIMEOUT_S}"
        commands = {"db_status": ["db", "status"], "run": ["run", "--spec", str(spec_file)]}
        with server.frozen():
            for name, args in commands.items():
                out = work / f"frozen_{name}"
                started = time.perf_counter()
                code = finish(cli(args, cli_env(url), out), out)
                seconds = time.perf_counter() - started
                err = out.with_suffix(".stderr").read_text()
                errors = [line for line in err.splitlines() if line.startswith("error:")]
                clear += int(code == 2 and len(errors) == 1 and len(err.strip().splitlines()) == 1)
                longest = max(longest, seconds)
                print(f"frozen database, {name}: exit {code} in {seconds:.1f} s: {err.strip()[-300:]!r}")
    finally:
        server.close()
    return {
        "frozen_commands": 2,
        "frozen_clear_errors": clear,
        "frozen_timeout_s": FROZEN_TIMEOUT_S,
        "frozen_max_seconds": round(longest, 1),
    }


def concurrent_runs(dbs: Databases, spec_file: Path, work: Path) -> dict[str, int]:
    url = dbs.new()
    outs = [work / "concurrent_a", work / "concurrent_b"]
    processes = [cli(["run", "--spec", str(spec_file)], cli_env(url), out) for out in outs]
    codes = [finish(p, out) for p, out in zip(processes, outs, strict=True)]
    releases = refused = 0
    for code, out in zip(codes, outs, strict=True):
        err = out.with_suffix(".stderr").read_text()
        errors = [line for line in err.splitlines() if line.startswith("error:")]
        releases += int(code == 0 and _release_dir(out) is not None)
        refused += int(code == 2 and len(errors) == 1 and "in progress since" in errors[0])
        print(f"concurrent run {out.name}: exit {code}{': ' + errors[-1] if errors else ''}")
    return {
        "concurrent_runs": 2,
        "concurrent_releases": releases,
        "concurrent_refused_clearly": refused,
        "concurrent_tracebacks": _traces(*(out.with_suffix(".stderr") for out in outs)),
    }


def revert(dbs: Databases, work: Path) -> dict[str, Any]:
    url = dbs.new()
    original = trimmed_spec()
    data = json.loads(original.model_dump_json())
    data["sources"][0]["keys"] = data["sources"][0]["keys"][10:]
    changed = original.model_validate({**data, "directory": original.directory})
    folder = work / "revert_spec"
    manifests = []
    for step, spec in enumerate((original, changed, original)):
        spec_file = write_spec(spec, folder)
        out = work / f"revert_{step}"
        code = finish(cli(["run", "--spec", str(spec_file)], cli_env(url), out), out)
        manifests.append(_keep_release(out, work / f"revert_release_{step}") if code == 0 else None)
        print(f"revert, build {step} ({'changed' if step == 1 else 'original'} source): exit {code}")
    identical = manifests[0] is not None and manifests[0] == manifests[2]
    if manifests[0] is not None and manifests[2] is not None and not identical:
        from benchmark_platform.release.bundle import compare_files

        print(f"revert: the release differs from the first build's: {compare_files(manifests[0], manifests[2])[:8]}")
    return {
        "revert_builds_completed": sum(m is not None for m in manifests),
        "revert_release_identical": int(identical),
        "revert_tracebacks": _traces(*(work / f"revert_{step}.stderr" for step in range(3))),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--points", default=",".join(POINTS), help="steps to kill in, comma-separated")
    parser.add_argument("--skip-gateway", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench_faults_"))
    dbs = Databases()
    started = time.perf_counter()
    try:
        spec_file = write_spec(trimmed_spec(), work / "spec")
        figures: dict[str, Any] = {"bench": "faults"}
        figures |= kill_and_rerun(dbs, spec_file, work, args.points.split(","), print)
        corpus_figures = bad_inputs(dbs, work)
        figures["tracebacks"] = int(figures["tracebacks"]) + corpus_figures.pop("corpus_tracebacks")
        figures["rows_lost"] = int(figures["rows_lost"]) + corpus_figures.pop("corpus_rows_changed")
        figures |= corpus_figures
        for key, value in pipeline_inputs(dbs, spec_file, work).items():
            figures[key] = int(figures[key]) + value
        figures |= frozen_database(work, spec_file)
        figures |= concurrent_runs(dbs, spec_file, work)
        figures |= revert(dbs, work)
        for key in ("concurrent_tracebacks", "revert_tracebacks"):
            figures["tracebacks"] = int(figures["tracebacks"]) + figures.pop(key)
        if not args.skip_gateway:
            from benchmark_platform.bench._gateway_kill import kill_mid_batch

            figures |= kill_mid_batch(Database(dbs.new()), work / "journal")
        figures["seconds"] = round(time.perf_counter() - started, 1)
    finally:
        dbs.drop()
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
