"""Backfill benchmark on the `kina` spec (261 subfield partitions): what Dagster's orchestration costs per partition.

The stage is the real audit (benchmark_platform.audit.run.audit_discipline: load a discipline's items, run every
agent, apply the policy, store findings and actions; the shipped static embedder, no LLM judge) over real ten-option
items: MMLU-Pro's 12,032 items from ../shared/data, dealt to KINA's 261 subfields in proportion to KINA Table 8's
item counts. Side by side in one run, each on a clean slate of findings:
  compute          the stage function called directly for all 261 partitions (no Dagster);
  single_run       one run over all 261 keys (BackfillPolicy.single_run, asset loops over context.partition_keys);
  per_run          one run per partition (in-process `materialize`), on a sample of `--per-run-sample` keys;
  multiprocess / celery  the 261 keys as `--runs` range runs, two in flight, on the multiprocess executor and on
                   the celery executor with two workers over Redis (the executor chosen by run config only).
Keys: partitions, overhead_s_per_partition_single_run, overhead_s_per_partition_per_run, single_run_over_compute,
celery_over_multiprocess (wall time ratio), and the raw seconds.
"""

import argparse
import asyncio
import json
import multiprocessing
import os
import tempfile
import time
import uuid
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import dagster as dg
import psycopg2

from benchmark_platform.audit.run import audit_discipline
from benchmark_platform.automation.workers import celery_workers, write_dagster_home
from benchmark_platform.defs.automation.executors import benchmark_executor
from benchmark_platform.defs.automation.requests import RANGE_END, RANGE_START
from benchmark_platform.defs.common import (
    DatabaseResource,
    EmbedderResource,
    counts_metadata,
    discipline_partitions,
    key,
)
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database, insert_rows, migrate
from benchmark_platform.store.settings import DATABASE_URL_ENV, database_url

SPEC = "kina"
JOB = "bench_audit_job"
MMLU_PRO = PROJECT_ROOT.parent / "shared" / "data" / "mmlu_pro_outputs" / "items_by_category"


def seed_items(db: Database, spec: BenchmarkSpec, disciplines: list[str] | None = None) -> int:
    """MMLU-Pro items dealt to the spec's leaves by their Table 8 weights (a leaf of weight w gets w shares)."""
    wanted = set(disciplines or spec.discipline_keys)
    weights = dict(_leaf_weights(spec))
    cycle = [leaf for leaf in spec.discipline_keys for _ in range(weights[leaf])]
    rows = []
    for n, record in enumerate(_mmlu_pro_items()):
        discipline = cycle[n % len(cycle)]
        if discipline in wanted:
            rows.append(
                (
                    f"mmlupro-{record['question_id']}",
                    spec.name,
                    discipline,
                    "pseudo_mcq10",
                    record["question"],
                    json.dumps(record["options"]),
                    record["answer_index"],
                    "",
                    record["category"],
                )
            )
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM items WHERE spec = %s AND discipline = ANY(%s)", (spec.name, sorted(wanted)))
        insert_rows(
            conn,
            "items",
            (
                "item_id",
                "spec",
                "discipline",
                "format",
                "question",
                "options",
                "answer_index",
                "explanation",
                "difficulty",
            ),
            rows,
        )
    return len(rows)


def _leaf_weights(spec: BenchmarkSpec) -> list[tuple[str, int]]:
    def walk(nodes):
        for node in nodes:
            if node.children:
                yield from walk(node.children)
            else:
                yield node.leaf_key, node.items or 1

    return list(walk(spec.taxonomy))


def _mmlu_pro_items() -> list[dict]:
    records = []
    for path in sorted(MMLU_PRO.glob("*.jsonl")):
        records += [json.loads(line) for line in path.read_text(encoding="utf-8").split("\n") if line.strip()]
    return sorted(records, key=lambda r: r["question_id"])


def audit_partition(db: Database, spec: BenchmarkSpec, discipline: str, run_id: str | None) -> Counter:
    """The audit stage's work for one partition (defs/audit's, with the default embedder and no LLM panel)."""
    done = asyncio.run(audit_discipline(db, spec, discipline, EmbedderResource().embedder, None, run_id))
    return Counter(items=done.items, findings=len(done.outcome.findings))


def stage_definitions(spec: BenchmarkSpec) -> dg.Definitions:
    """The stage as a single-run-backfill asset: any run covers one partition or a range of them."""

    @dg.asset(
        key=key(spec, "bench_audit"),
        partitions_def=discipline_partitions(spec),
        group_name="bench",
        backfill_policy=dg.BackfillPolicy.single_run(),
    )
    def bench_audit(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        totals: Counter[str] = Counter()
        for discipline in context.partition_keys:
            totals += audit_partition(database.db, spec, discipline, context.run_id)
        return dg.MaterializeResult(metadata=counts_metadata(partitions=len(context.partition_keys), **totals))

    return dg.Definitions(
        assets=[bench_audit],
        executor=benchmark_executor,
        jobs=[dg.define_asset_job(JOB, selection=[bench_audit])],
        resources={"database": DatabaseResource(url=dg.EnvVar(DATABASE_URL_ENV))},
    )


def stage_job() -> dg.JobDefinition:
    """Module-level job factory: what `dg.reconstructable` hands to celery workers and subprocesses."""
    return stage_definitions(load_spec(SPEC)).resolve_job_def(JOB)


def range_tags(keys: list[str]) -> dict[str, str]:
    return {RANGE_START: keys[0], RANGE_END: keys[-1]}


def run_ranges(execution: dict, keys: list[str], runs: int, in_flight: int = 2) -> tuple[float, list[str]]:
    """The keys as `runs` contiguous range runs of the stage job, `in_flight` at a time, each run launched from its
    own (forked) process on the DAGSTER_HOME instance (Dagster's run execution is not thread-safe): (wall s, run ids)."""
    size = -(-len(keys) // runs)
    chunks = [keys[i : i + size] for i in range(0, len(keys), size)]
    started = time.perf_counter()
    with ProcessPoolExecutor(in_flight, mp_context=multiprocessing.get_context("fork")) as pool:
        run_ids = list(pool.map(_execute_range, [execution] * len(chunks), chunks))
    return time.perf_counter() - started, run_ids


def _execute_range(execution: dict, chunk: list[str]) -> str:
    with (
        dg.DagsterInstance.get() as instance,
        dg.execute_job(
            dg.reconstructable(stage_job),
            instance=instance,
            run_config={"execution": {"config": execution}},
            tags=range_tags(chunk),
        ) as result,
    ):
        if not result.success:
            raise RuntimeError(f"run over {chunk[0]}..{chunk[-1]} failed ({execution})")
        return result.run_id


def clear_findings(db: Database, spec: BenchmarkSpec) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM audit_runs WHERE spec = %s", (spec.name,))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--per-run-sample", type=int, default=24)
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--broker", default="redis://127.0.0.1:6379/14")
    args = parser.parse_args()
    spec = load_spec(SPEC)
    keys = spec.discipline_keys
    server = database_url(start_embedded=True)
    name = f"bp_bench_backfill_{uuid.uuid4().hex[:8]}"
    for database in (name, name + "_dagster"):
        _admin(server, f'CREATE DATABASE "{database}"')
    db_url = _with_database(server, name)
    dagster_url = db_url.replace("postgresql://", "postgresql+psycopg2://", 1) + "_dagster"
    db = Database(db_url)
    migrate(db)
    os.environ[DATABASE_URL_ENV] = db_url
    try:
        figures = _measure(db, spec, keys, dagster_url, args)
    finally:
        for database in (name, name + "_dagster"):
            _admin(server, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
    print(json.dumps(figures))
    return 0


def _with_database(url: str, name: str) -> str:
    return urlunsplit(urlsplit(url)._replace(path=f"/{name}"))


def _admin(server: str, statement: str) -> None:
    """CREATE/DROP DATABASE (outside a transaction) on the server's maintenance database."""
    conn = psycopg2.connect(_with_database(server, "postgres"))
    conn.autocommit = True
    try:
        with conn.cursor() as cur:
            cur.execute(statement)
    finally:
        conn.close()


def _measure(db: Database, spec: BenchmarkSpec, keys: list[str], dagster_url: str, args: argparse.Namespace) -> dict:
    n_items = seed_items(db, spec)
    with tempfile.TemporaryDirectory() as tmp:
        home = write_dagster_home(Path(tmp) / "dagster_home", dagster_url)
        os.environ["DAGSTER_HOME"] = str(home)
        instance = dg.DagsterInstance.get()
        defs = stage_definitions(spec)
        asset = defs.get_assets_def(key(spec, "bench_audit"))
        resources = {"database": DatabaseResource(url=db.url)}

        clear_findings(db, spec)
        per_partition, started = {}, time.perf_counter()
        for discipline in keys:
            t0 = time.perf_counter()
            audit_partition(db, spec, discipline, None)
            per_partition[discipline] = time.perf_counter() - t0
        compute_s = time.perf_counter() - started

        clear_findings(db, spec)
        started = time.perf_counter()
        dg.materialize([asset], instance=instance, resources=resources, tags=range_tags(keys), raise_on_error=True)
        single_run_s = time.perf_counter() - started

        clear_findings(db, spec)
        sample = keys[: args.per_run_sample]
        started = time.perf_counter()
        for discipline in sample:
            dg.materialize(
                [asset], instance=instance, resources=resources, partition_key=discipline, raise_on_error=True
            )
        per_run_s = time.perf_counter() - started
        sample_compute_s = sum(per_partition[d] for d in sample)

        clear_findings(db, spec)
        multiprocess_s, _ = run_ranges({"multiprocess": {}}, keys, args.runs)
        clear_findings(db, spec)
        with celery_workers(
            2, args.broker, home, {DATABASE_URL_ENV: db.url}, Path(tmp), preload=(__name__,)
        ) as workers:
            workers.wait_ready()
            celery_s, _ = run_ranges({"celery": {"broker": args.broker, "backend": args.broker}}, keys, args.runs)
        instance.dispose()

    n = len(keys)
    return {
        "bench": "backfill",
        "spec": SPEC,
        "partitions": n,
        "items": n_items,
        "compute_s": round(compute_s, 3),
        "single_run_s": round(single_run_s, 3),
        "overhead_s_per_partition_single_run": round((single_run_s - compute_s) / n, 4),
        "single_run_over_compute": round(single_run_s / compute_s, 3),
        "per_run_sample": len(sample),
        "per_run_s": round(per_run_s, 3),
        "overhead_s_per_partition_per_run": round((per_run_s - sample_compute_s) / len(sample), 4),
        "range_runs": args.runs,
        "multiprocess_s": round(multiprocess_s, 3),
        "celery_s": round(celery_s, 3),
        "celery_over_multiprocess": round(celery_s / multiprocess_s, 3),
        "partitions_per_s_multiprocess": round(n / multiprocess_s, 2),
        "partitions_per_s_celery": round(n / celery_s, 2),
        "load_average_1m": round(os.getloadavg()[0], 2),
    }
