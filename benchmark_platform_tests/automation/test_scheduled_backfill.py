"""Scheduled partition backfills are one run (issue 21): every discipline stage has a single-run backfill policy and
loops over the run's partition keys, recording one materialisation per discipline with that discipline's metadata.
On the project's Dagster instance (dagster.yaml: Postgres, queued runs) in a fresh database of the test server."""

from __future__ import annotations

from collections.abc import Iterator

import dagster as dg
import pytest

from benchmark_platform.bench._backfillkit import ASSETS, scheduled_backfill_runs
from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.automation.requests import RANGE_END, RANGE_START
from benchmark_platform.defs.common import DatabaseResource, key
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DAGSTER_DATABASE_URL_ENV, DATABASE_URL_ENV, dagster_database_url

pytestmark = pytest.mark.slow  # backfills every discipline of wine and KINA


@pytest.fixture
def database(migrated_database, monkeypatch) -> Database:
    db = Database(migrated_database())
    monkeypatch.setenv(DATABASE_URL_ENV, db.url)
    # Dagster's storage in this database too, whatever an earlier test of this process left in the environment
    monkeypatch.delenv(DAGSTER_DATABASE_URL_ENV, raising=False)
    monkeypatch.setenv(DAGSTER_DATABASE_URL_ENV, dagster_database_url())
    return db


@pytest.fixture
def instance(database) -> Iterator[dg.DagsterInstance]:
    with dg.DagsterInstance.from_config(str(PROJECT_ROOT)) as instance:
        yield instance


@pytest.mark.parametrize("spec_name", ["wine", "kina"])
def test_a_scheduled_backfill_of_every_discipline_is_one_run(spec_name, instance, tmp_path) -> None:
    """The spec's backfill sensor at a cron tick, submitted as the sensor daemon does, one iteration of Dagster's
    backfill daemon: one run for every discipline and both stages (before this: one run per discipline, 6 / 261)."""
    partitions, runs = scheduled_backfill_runs(instance, spec_name, tmp_path)
    keys = load_spec(spec_name).discipline_keys
    assert partitions == len(keys) and partitions in (6, 261)
    [run] = runs
    assert (run.tags[RANGE_START], run.tags[RANGE_END]) == (keys[0], keys[-1])
    assert run.asset_selection == {key(load_spec(spec_name), name) for name in ASSETS}
    assert run.status == dg.DagsterRunStatus.QUEUED  # it waits for the run queue (and the stages' pools)


def test_a_range_run_records_each_discipline_with_its_own_metadata(database, instance) -> None:
    """mmlu_pro's bank_items over every discipline in one run: one materialisation per discipline whose counts are
    that discipline's stored rows, plus the run's totals; a one-partition run reads as before (no run totals)."""
    spec = load_spec("mmlu_pro")
    defs = build_definitions(spec)
    bank_items = key(spec, "bank_items")
    assets = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition) and bank_items in a.keys]
    keys = spec.discipline_keys
    resources = {"database": DatabaseResource(url=database.url)}
    ranged = dg.materialize(
        assets, instance=instance, resources=resources, tags={RANGE_START: keys[0], RANGE_END: keys[-1]}
    )
    assert ranged.success
    events = {
        e.step_materialization_data.materialization.partition: e.step_materialization_data.materialization
        for e in ranged.get_asset_materialization_events()
    }
    assert sorted(events) == sorted(keys)
    stored = {
        r["discipline"]: r["n"]
        for r in database.query("SELECT discipline, count(*) AS n FROM items WHERE spec = %s GROUP BY 1", (spec.name,))
    }
    for discipline, event in events.items():
        assert event.metadata["items"].value == stored.get(discipline, 0), discipline
        assert event.metadata["run_partitions"].value == len(keys)
        assert event.metadata["run_totals"].value["items"] == sum(stored.values())
        assert "run_totals" in event.metadata and event.tags.get("dagster/data_version")  # the bank file's hash
    assert len({e.tags["dagster/data_version"] for e in events.values()}) == 1

    single = dg.materialize(assets, instance=instance, resources=resources, partition_key=keys[0])
    [event] = [e.step_materialization_data.materialization for e in single.get_asset_materialization_events()]
    assert event.metadata["items"].value == stored[keys[0]] and "run_totals" not in event.metadata


def test_the_reaudit_waits_for_runs_of_its_spec_and_inputs_only_ranges_included(instance, wine_spec) -> None:
    """A discipline is busy while a queued or running run of this spec's audit inputs names it, alone or inside a
    single-run range; another spec's run of a same-named partition, or a run of an asset downstream of the audit,
    does not hold it back."""
    from dagster._core.test_utils import create_run_for_test  # the runs as the run queue holds them

    from benchmark_platform.defs.audit.sensors import busy_disciplines

    keys = wine_spec.discipline_keys
    other = load_spec("kina").model_copy(update={"name": "other"})

    def running(spec_name: str, asset: str, **tags: str) -> None:
        create_run_for_test(
            instance,
            job_name="__ASSET_JOB",
            status=dg.DagsterRunStatus.STARTED,  # (a queued run needs a code location's origin)
            tags=tags,
            asset_selection=frozenset({dg.AssetKey([spec_name, asset])}),
        )

    running("other", "items", **{"dagster/partition": keys[0]})  # another spec, same partition name
    running("wine", "evaluation_answers", **{"dagster/partition": keys[1]})  # downstream of the audit
    assert busy_disciplines(instance, wine_spec) == set()
    running("wine", "support_centrality", **{RANGE_START: keys[2], RANGE_END: keys[4]})  # a single-run range
    assert busy_disciplines(instance, wine_spec) == set(keys[2:5])
    running("wine", "audit_findings", **{"dagster/partition": keys[0]})
    assert busy_disciplines(instance, wine_spec) == {keys[0], *keys[2:5]}
    assert busy_disciplines(instance, other) == set()  # kina's leaves are not wine's disciplines
