"""The anchors -> support_centrality -> selected_facts assets on the real PostgreSQL, and the anchor-file sensor."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import dagster as dg
import pytest

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.anchors.persist import record_import
from benchmark_platform.defs.anchors import build_defs as anchors_defs
from benchmark_platform.defs.centrality import build_defs as centrality_defs
from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.selection import build_defs as selection_defs
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database

# Real sentences of the bundled snapshot (INAO rulebook, en.wikibooks Wine) for the tiny business/viticulture pools.
pytestmark = pytest.mark.slow  # materialises the selection of real wine facts

FACTS = {
    "business": [
        "La production s'établit autour de 5 200 hectolitres.",
        "Les vins gris (rosés), représentent aujourd'hui un tiers de la production, et ont fait la réputation du vignoble.",
        "Elle est accompagnée d'une copie de la déclaration de récolte et, selon le cas, d'une copie de la déclaration de production.",
        "When one typically purchases large quantities of assorted wines, future consumption is the key.",
        "Les vins sont issus exclusivement des vignes situées dans l'aire parcellaire de production.",
    ],
    "viticulture": [
        "Les vignes présentent une densité minimale à la plantation de 6 000 pieds par hectare.",
        "La charge maximale moyenne à la parcelle est fixée à 8 500 kilogrammes par hectare.",
        "Disease poses a threat to grape vines.",
        "A floor of earth or sand is important, as this also helps to reduce the level of vibrations in the room.",
        "A cette époque, la vigne à Châteaumeillant est la plus riche culture de ce pays.",
    ],
}


def fact_id(sentence: str) -> str:
    return hashlib.sha256(sentence.encode()).hexdigest()[:20]


def seeded_database(migrated_database, name: str) -> Database:
    """A fresh migrated database holding FACTS for the wine spec."""
    db = Database(migrated_database(name))
    _seed_facts(db, "wine")
    return db


def _seed_facts(db: Database, spec: str) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO sources (source_id, spec, adapter, title, publisher, base_url, tier, licence, attribution)
               VALUES ('test_src', %s, 'test', 'Test', 'Test', 'https://example.org', 1, 'CC0', 'test')""",
            (spec,),
        )
        for discipline, sentences in FACTS.items():
            text = " ".join(sentences)
            doc = hashlib.sha256(discipline.encode()).hexdigest()[:20]
            cur.execute(
                """INSERT INTO documents (document_id, source_id, url, retrieved_at, media_type, content_hash, raw, text, title)
                   VALUES (%s, 'test_src', %s, now(), 'text/plain', %s, %s, %s, %s)""",
                (
                    doc,
                    f"https://example.org/{discipline}",
                    hashlib.sha256(text.encode()).hexdigest(),
                    text.encode(),
                    text,
                    discipline,
                ),
            )
            start = 0
            for sentence in sentences:
                cur.execute(
                    """INSERT INTO facts (fact_id, spec, discipline, document_id, span_start, span_end, text, text_hash, method)
                       VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'sentence')""",
                    (
                        fact_id(sentence),
                        spec,
                        discipline,
                        doc,
                        start,
                        start + len(sentence),
                        sentence,
                        hashlib.sha256(sentence.encode()).hexdigest(),
                    ),
                )
                start += len(sentence) + 1


# The bundled wine anchors are sized for the whole snapshot (K_d 90-120); these tests seed five sentences per
# discipline, so they use the small-pool example anchors kept beside them (K_d 1-5, French prose strata).
SMALL_POOL_ANCHORS = Path(__file__).parent / "fixtures" / "small_pool_anchors"


def small_pool_spec(tmp_path: Path):
    """The wine spec with its anchors copied to `tmp_path`, the small-pool ones in place of three disciplines'."""
    spec = load_spec("wine")
    copy = tmp_path / "wine"
    shutil.copytree(spec.anchors_dir, copy / "anchors")
    for folder in SMALL_POOL_ANCHORS.iterdir():
        shutil.copyfile(folder / "anchors.yaml", copy / "anchors" / folder.name / "anchors.yaml")
    return spec.model_copy(update={"directory": copy}), copy


@pytest.fixture(scope="module")
def wine_db(migrated_database):
    return seeded_database(migrated_database, "bp_selection")


def _materialize(spec, db, discipline):
    assets = [
        a
        for stage in (anchors_defs, centrality_defs, selection_defs)
        for a in stage(spec).assets
        if a.key.path[-1] != "selected_items"
    ]  # the item selection runs after the audit (test_item_selection)
    with dg.instance_for_test() as instance:
        return dg.materialize(
            assets, partition_key=discipline, instance=instance, resources={"database": DatabaseResource(url=db.url)}
        )


@pytest.mark.parametrize("discipline", ["business", "viticulture"])
def test_selection_records_a_certified_ratio_and_reruns_idempotently(wine_db, discipline, tmp_path):
    spec, _ = small_pool_spec(tmp_path)
    for _ in range(2):
        result = _materialize(spec, wine_db, discipline)
        assert result.success
    selection = wine_db.query("SELECT * FROM selections WHERE spec = 'wine' AND discipline = %s", (discipline,))
    assert len(selection) == 1 and selection[0]["manual_review"] is None
    assert 0 < selection[0]["certified_ratio"] <= 1 and selection[0]["objective"] <= selection[0]["upper_bound"] + 1e-12
    chosen = wine_db.scalar(
        "SELECT count(*) FROM selected_facts WHERE spec = 'wine' AND discipline = %s", (discipline,)
    )
    assert chosen == selection[0]["k_total"]
    assert (
        wine_db.scalar("SELECT count(*) FROM anchor_imports WHERE spec = 'wine' AND discipline = %s", (discipline,))
        == 1
    )
    assert (
        wine_db.scalar("SELECT count(*) FROM centrality_runs WHERE spec = 'wine' AND discipline = %s", (discipline,))
        == 1
    )
    run = wine_db.query(
        "SELECT fallback_used FROM centrality_runs WHERE spec = 'wine' AND discipline = %s", (discipline,)
    )
    assert run[0]["fallback_used"]  # no LLM configured: psi from deterministic features, and the run says so
    metadata = [
        m for m in result.get_asset_materialization_events() if m.asset_key == dg.AssetKey(["wine", "selected_facts"])
    ]
    assert metadata[0].materialization.metadata["certified_ratio"].value == pytest.approx(
        selection[0]["certified_ratio"]
    )


def test_missing_anchor_files_send_the_discipline_to_manual_review(wine_db, tmp_path):
    spec, copy = small_pool_spec(tmp_path)
    shutil.rmtree(copy / "anchors" / "viticulture")
    bare = spec.model_copy(update={"directory": copy})
    assert _materialize(bare, wine_db, "viticulture").success
    row = wine_db.query(
        "SELECT method, manual_review FROM selections WHERE spec = 'wine' AND discipline = 'viticulture'"
    )
    assert row == [{"method": "manual_review", "manual_review": "no anchor files"}]
    assert wine_db.scalar("SELECT count(*) FROM selected_facts WHERE spec = 'wine' AND discipline = 'viticulture'") == 0


def test_sensor_requests_runs_for_new_or_changed_anchor_files(tmp_path, migrated_database):
    spec = load_spec("wine")
    copy = tmp_path / "wine"
    shutil.copytree(spec.anchors_dir, copy / "anchors")
    moved = spec.model_copy(update={"directory": copy})
    stage = anchors_defs(moved)
    (sensor,) = stage.sensors
    database = Database(migrated_database())
    defs = dg.Definitions(
        assets=stage.assets, sensors=[sensor], resources={"database": DatabaseResource(url=database.url)}
    )

    def tick(cursor):
        return sensor.evaluate_tick(
            dg.build_sensor_context(
                cursor=cursor, definitions=defs, resources={"database": DatabaseResource(url=database.url)}
            )
        )

    first = tick(None)
    assert sorted(r.partition_key for r in first.run_requests) == sorted(spec.discipline_keys)
    unchanged = tick(first.cursor)
    assert unchanged.run_requests == []
    (copy / "anchors" / "business" / "anchors.yaml").write_text(
        (copy / "anchors" / "business" / "anchors.yaml").read_text() + "\n# edited\n"
    )
    changed = tick(first.cursor)
    assert [r.partition_key for r in changed.run_requests] == ["business"]
    assert json.loads(changed.cursor)["business"] != json.loads(first.cursor)["business"]

    # a daemon without a cursor over a database where the anchors are imported re-imports nothing
    for discipline in spec.discipline_keys:
        record_import(database, spec.name, load_anchor_set(copy / "anchors" / discipline))
    assert tick(None).run_requests == []


def test_a_bad_anchor_file_fails_the_import_naming_the_row_and_writes_nothing(wine_db, tmp_path):
    spec, copy = small_pool_spec(tmp_path)
    (copy / "anchors" / "winemaking" / "pair_labels.csv").write_text("q,u,y_T,y_U\nwm_a1,wm_p1,1,0\nwm_a1,nope,0,0\n")
    (copy / "anchors" / "winemaking" / "anchors.yaml").write_text(
        (copy / "anchors" / "winemaking" / "anchors.yaml").read_text().split("pair_labels:")[0]
        + "strata:"
        + (copy / "anchors" / "winemaking" / "anchors.yaml").read_text().split("strata:")[1]
    )
    bad = spec.model_copy(update={"directory": copy})
    before = wine_db.scalar("SELECT count(*) FROM anchor_imports")
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            anchors_defs(bad).assets,
            partition_key="winemaking",
            instance=instance,
            resources={"database": DatabaseResource(url=wine_db.url)},
            raise_on_error=False,
        )
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    cause = failure.event_specific_data.error.cause
    assert cause.cls_name == "AnchorFileError" and "pair_labels.csv:3" in cause.message and "'nope'" in cause.message
    assert wine_db.scalar("SELECT count(*) FROM anchor_imports") == before
