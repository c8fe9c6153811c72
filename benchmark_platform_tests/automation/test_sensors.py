"""Sensors and schedules, evaluated with Dagster's test helpers against stand-in assets of the real keys."""

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from benchmark_platform.defs.automation.schedules import build_schedules
from benchmark_platform.defs.automation.sensors import (
    MODEL_TAG,
    new_model_evaluation,
    taxonomy_partitions,
    taxonomy_sensor,
)
from benchmark_platform.defs.common import DatabaseResource, discipline_partitions, key, source_partitions
from benchmark_platform.evaluation.config import SlateEntry
from benchmark_platform.paths import SPECS_DIR
from benchmark_platform.spec import BenchmarkSpec, load_spec

RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def stand_in(
    spec: BenchmarkSpec, name: str, partitions: dg.PartitionsDefinition, policy: dg.BackfillPolicy | None = None
) -> dg.AssetsDefinition:
    @dg.asset(key=key(spec, name), partitions_def=partitions, backfill_policy=policy)
    def asset() -> None: ...

    return asset


@pytest.fixture
def instance():
    with dg.instance_for_test() as instance:
        yield instance


def with_slate(spec: BenchmarkSpec, *models: str) -> BenchmarkSpec:
    return spec.model_copy(
        update={"evaluation": spec.evaluation.model_copy(update={"slate": [SlateEntry(model=m) for m in models]})}
    )


def test_a_new_model_in_the_slate_is_evaluated_alone_once(wine_spec, instance) -> None:
    partitions = discipline_partitions(wine_spec)

    def tick(spec: BenchmarkSpec, cursor: str | None, policy: dg.BackfillPolicy | None = None):
        sensor = new_model_evaluation(spec)
        defs = dg.Definitions(assets=[stand_in(spec, "evaluation_answers", partitions, policy)], sensors=[sensor])
        return sensor.evaluate_tick(dg.build_sensor_context(instance=instance, definitions=defs, cursor=cursor))

    before, after = with_slate(wine_spec, "alpha"), with_slate(wine_spec, "alpha", "beta")
    deployed = tick(before, None)
    assert deployed.run_requests == [] and json.loads(deployed.cursor) == ["alpha"]
    reloaded = tick(after, deployed.cursor)  # the code location reloaded with a longer slate
    assert {r.tags[MODEL_TAG] for r in reloaded.run_requests} == {"beta"}
    assert sorted(r.partition_key for r in reloaded.run_requests) == sorted(wine_spec.discipline_keys)
    assert all(r.run_key.startswith("model:beta:") for r in reloaded.run_requests)
    assert tick(after, reloaded.cursor).run_requests == []

    [ranged] = tick(after, deployed.cursor, dg.BackfillPolicy.single_run()).run_requests  # one run, every discipline
    assert (ranged.tags[RANGE_START], ranged.tags[RANGE_END]) == (
        wine_spec.discipline_keys[0],
        wine_spec.discipline_keys[-1],
    )
    assert ranged.tags[MODEL_TAG] == "beta" and ranged.partition_key is None


def test_new_anchors_rescore_only_their_discipline(wine_spec, instance) -> None:
    """support_centrality is eager: an updated anchors (or facts) partition requests that partition, once."""
    from benchmark_platform.defs.centrality import build_defs as centrality_defs

    partitions = discipline_partitions(wine_spec)
    defs = dg.Definitions.merge(
        centrality_defs(wine_spec),
        dg.Definitions(
            assets=[stand_in(wine_spec, "facts", partitions), stand_in(wine_spec, "anchors", partitions)],
            resources={"database": DatabaseResource(url="postgresql://unused/never")},
        ),
    )  # evaluated, never executed
    centrality = key(wine_spec, "support_centrality")
    d1, d2 = wine_spec.discipline_keys[:2]
    start = dg.evaluate_automation_conditions(defs=defs, instance=instance)  # deps missing: nothing to score
    assert start.total_requested == 0
    for asset, discipline in (("facts", d1), ("facts", d2), ("anchors", d1), ("anchors", d2)):
        instance.report_runless_asset_event(dg.AssetMaterialization(key(wine_spec, asset), partition=discipline))
    first = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=start.cursor)
    assert first.get_requested_partitions(centrality) == {d1, d2}

    for discipline in (d1, d2):  # the requested runs happened
        instance.report_runless_asset_event(dg.AssetMaterialization(centrality, partition=discipline))
    settled = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
    assert settled.total_requested == 0
    instance.report_runless_asset_event(dg.AssetMaterialization(key(wine_spec, "anchors"), partition=d2))  # new file
    second = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=settled.cursor)
    assert second.get_requested_partitions(centrality) == {d2}


@pytest.fixture
def kina_copy(tmp_path: Path) -> Path:
    for name in ("spec.yaml", "taxonomy.yaml"):
        shutil.copy(SPECS_DIR / "kina" / name, tmp_path / name)
    return tmp_path / "spec.yaml"


def test_taxonomy_change_adds_and_removes_partitions_and_registers_leaves_without_a_run(
    kina_copy, instance, db
) -> None:
    spec = load_spec(kina_copy)
    sensor = taxonomy_sensor(spec)
    defs = dg.Definitions(sensors=[sensor], resources={"database": DatabaseResource(url=db.url)})

    def context(cursor: str | None = None) -> dg.SensorEvaluationContext:
        # with an instance ref, as the daemon gives: run requests for new dynamic partitions are then resolvable
        return dg.build_sensor_context(
            instance=instance,
            instance_ref=instance.get_ref(),
            definitions=defs,
            cursor=cursor,
            resources={"database": DatabaseResource(url=db.url)},
        )

    first = sensor.evaluate_tick(context())
    [added] = first.dynamic_partitions_requests
    assert added.partition_keys == spec.discipline_keys and len(added.partition_keys) == 261
    assert first.run_requests == []  # registering 261 leaves launches no run (it once queued 261)
    registered = db.scalar("SELECT count(*) FROM disciplines WHERE spec = 'kina'")
    assert registered == 261
    instance.add_dynamic_partitions(taxonomy_partitions(spec).name, added.partition_keys)  # what the daemon does

    unchanged = sensor.evaluate_tick(context(first.cursor))
    assert unchanged.run_requests == [] and unchanged.skip_message == "taxonomy unchanged"

    taxonomy = kina_copy.with_name("taxonomy.yaml")
    text = taxonomy.read_text(encoding="utf-8")
    edited = text.replace(
        '        - {name: "Aquaculture", items: 3}',
        '        - {name: "Aquaculture", items: 3}\n        - {name: "Mariculture", items: 2}',
    )
    edited = edited.replace(
        '        - {name: "Crop Science", items: 7}\n', '        - {name: "Agroecology", items: 1}\n'
    )
    assert edited.count("Mariculture") == 1 and 'Crop Science", items' not in edited
    taxonomy.write_text(edited, encoding="utf-8")
    tick = sensor.evaluate_tick(context(first.cursor))
    requests = {type(r).__name__: r.partition_keys for r in tick.dynamic_partitions_requests}
    assert requests == {
        "AddDynamicPartitionsRequest": ["mariculture", "agroecology"],
        "DeleteDynamicPartitionsRequest": ["crop_science"],
    }
    assert tick.run_requests == []
    row = db.query("SELECT path FROM disciplines WHERE spec = 'kina' AND discipline = 'mariculture'")
    assert row == [{"path": ["Agronomy", "Aquaculture", "Mariculture"]}]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM disciplines WHERE spec = 'kina'")


def test_schedules_request_every_partition_in_as_few_runs_as_the_policy_allows(wine_spec, instance) -> None:
    schedules = {s.name: s for s in build_schedules(wine_spec)}
    defs = dg.Definitions(
        assets=[
            stand_in(wine_spec, "source_documents", source_partitions(wine_spec)),
            stand_in(wine_spec, "evaluation_answers", discipline_partitions(wine_spec), dg.BackfillPolicy.single_run()),
        ],
        schedules=list(schedules.values()),
    )
    repository = defs.get_repository_def()
    when = datetime(2026, 11, 30, 3, tzinfo=UTC)
    context = dg.build_schedule_context(instance=instance, scheduled_execution_time=when, repository_def=repository)
    reingest = schedules["wine_reingest"].evaluate_tick(context).run_requests
    assert sorted(r.partition_key for r in reingest) == sorted(s.id for s in wine_spec.sources)
    [evaluation] = schedules["wine_reevaluate"].evaluate_tick(context).run_requests
    assert (evaluation.tags[RANGE_START], evaluation.tags[RANGE_END]) == (
        wine_spec.discipline_keys[0],
        wine_spec.discipline_keys[-1],
    )
    assert when.isoformat() in evaluation.run_key  # one run per tick, however often the tick is retried


def test_a_scheduled_backfill_submits_one_backfill_of_every_discipline_per_cron_tick(wine_spec, instance) -> None:
    from benchmark_platform.automation.config import BackfillSchedule
    from benchmark_platform.defs.automation.backfills import SCHEDULE_TAG, backfill_sensor, due_tick

    entry = BackfillSchedule(name="rescore", assets=["support_centrality", "selected_facts"], cron="0 5 * * 0")
    spec = wine_spec.model_copy(update={"automation": wine_spec.automation.model_copy(update={"backfills": [entry]})})
    sensor = backfill_sensor(spec, entry)
    assert sensor.default_status == dg.DefaultSensorStatus.STOPPED  # off unless the spec says running
    partitions = discipline_partitions(spec)
    defs = dg.Definitions(
        assets=[stand_in(spec, "support_centrality", partitions), stand_in(spec, "selected_facts", partitions)],
        sensors=[sensor],
    )

    def tick(cursor: str | None):
        return sensor.evaluate_tick(dg.build_sensor_context(instance=instance, definitions=defs, cursor=cursor))

    first = tick(None)  # turned on: waits for the next tick
    assert first.run_requests == [] and first.cursor is not None
    assert tick(first.cursor).run_requests == []
    week_ago = datetime(2026, 11, 21, tzinfo=UTC).timestamp()  # a Saturday: Sunday 05:00 passed since
    [request] = tick(str(week_ago)).run_requests
    subset = request.asset_graph_subset
    assert subset is not None and request.tags[SCHEDULE_TAG] == "rescore"
    assert subset.asset_keys == {key(spec, "support_centrality"), key(spec, "selected_facts")}
    assert subset.num_partitions_and_non_partitioned_assets == 2 * len(spec.discipline_keys)
    # a restarted daemon resumes from the stored tick: the same tick is not submitted twice
    resumed = tick(str(week_ago))
    assert resumed.cursor == str(datetime(2026, 11, 29, 5, tzinfo=UTC).timestamp())
    assert due_tick(entry.cron, "UTC", float(resumed.cursor), float(resumed.cursor) + 3600) is None
