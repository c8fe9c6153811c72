"""A real multi-partition job on two celery workers over the machine's Redis, with a PostgreSQL Dagster instance."""

import random

import dagster as dg
import pytest
import redis

from benchmark_platform.automation.workers import celery_workers, write_dagster_home
from benchmark_platform.bench import backfill
from benchmark_platform.bench.backfill import clear_findings, run_ranges, seed_items
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV

BROKER_HOST = "redis://127.0.0.1:6379"


@pytest.fixture
def broker() -> str:
    url = f"{BROKER_HOST}/{random.randint(1, 15)}"  # a database of its own: no other run's messages
    client = redis.Redis.from_url(url)
    try:
        client.ping()
    except redis.ConnectionError:
        pytest.skip("no Redis at 127.0.0.1:6379 (.ci/run starts one)")
    client.flushdb()
    yield url
    client.flushdb()


def celery_hosts(instance: dg.DagsterInstance, run_ids: list[str]) -> set[str]:
    """The celery workers that executed steps of these runs (dagster-celery's engine events name them)."""
    return {
        str(event.dagster_event.engine_event_data.metadata["Celery worker"].value)
        for run_id in run_ids
        for event in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT)
        if "Celery worker" in event.dagster_event.engine_event_data.metadata
    }


@pytest.mark.slow
def test_partition_ranges_run_on_two_celery_workers(
    fresh_database, migrated_database, broker, tmp_path, monkeypatch
) -> None:
    spec = load_spec("kina")
    db = Database(migrated_database("bp_celery"))
    dagster_url = fresh_database("bp_celery_dagster").replace("postgresql://", "postgresql+psycopg2://", 1)
    disciplines = spec.discipline_keys[:4]
    assert seed_items(db, spec, disciplines) > 0
    home = write_dagster_home(tmp_path / "dagster_home", dagster_url)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    monkeypatch.setenv(DATABASE_URL_ENV, db.url)
    with (
        dg.DagsterInstance.get() as instance,
        celery_workers(2, broker, home, {DATABASE_URL_ENV: db.url}, tmp_path, preload=(backfill.__name__,)) as workers,
    ):
        _, local_ids = run_ranges({"in_process": {}}, disciplines, runs=2)  # the same job, another executor
        local = db.query("SELECT discipline, inputs_hash FROM audit_runs WHERE spec = 'kina' ORDER BY 1")
        clear_findings(db, spec)
        workers.wait_ready()  # both consume the queue, so each takes one of the two runs' steps
        _, run_ids = run_ranges({"celery": {"broker": broker, "backend": broker}}, disciplines, runs=2)
        hosts, local_hosts = celery_hosts(instance, run_ids), celery_hosts(instance, local_ids)
        materialized = {
            record.partition_key
            for record in instance.fetch_materializations(dg.AssetKey(["kina", "bench_audit"]), limit=100).records
        }
    assert hosts == set(workers.names)  # each worker executed a step
    assert materialized == set(disciplines)
    audited = db.query("SELECT discipline, inputs_hash, dagster_run_id FROM audit_runs WHERE spec = 'kina' ORDER BY 1")
    assert [row["discipline"] for row in audited] == sorted(disciplines)
    assert {row["dagster_run_id"] for row in audited} == set(run_ids)
    assert [(r["discipline"], r["inputs_hash"]) for r in audited] == [
        (r["discipline"], r["inputs_hash"]) for r in local
    ]
    assert local_hosts == set()  # in-process steps never went to a worker
