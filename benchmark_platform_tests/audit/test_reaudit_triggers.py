"""What makes the re-audit sensor fire beyond an item's own links: a new fact on the same entity and attribute as a
linked fact (supports or contradicts the item), and answers landing (K3/D1 re-run, item-level findings carried)."""

from __future__ import annotations

import asyncio

import dagster as dg
import pytest

from benchmark_platform.audit.config import KinaScreening
from benchmark_platform.audit.run import audit_discipline, pending_audit, stale_items
from benchmark_platform.defs.audit import build_defs
from benchmark_platform.defs.audit.sensors import ANSWERED_TAG, STALE_TAG, TRIGGER_TAG
from benchmark_platform.defs.common import DatabaseResource, EmbedderResource
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.store import Database, as_json, insert_rows
from benchmark_platform_tests.audit.corpus import audit_spec, fact_id, seed_corpus

EMBEDDER = StaticEmbedder()


def structured_fact(db: Database, spec: str, discipline: str, text: str, entity: str, field: str, span: int) -> str:
    fid = fact_id(spec, discipline + text)
    with db.transaction() as conn:
        insert_rows(
            conn,
            "facts",
            (
                "fact_id",
                "spec",
                "discipline",
                "document_id",
                "span_start",
                "span_end",
                "text",
                "text_hash",
                "method",
                "attributes",
            ),
            [
                (
                    fid,
                    spec,
                    discipline,
                    f"{spec}_doc",
                    span,
                    span + 10,
                    text,
                    fid,
                    f"template:{field}",
                    as_json({"entity_id": entity, "field": field}),
                )
            ],
        )
    return fid


def sensor_tick(db: Database, spec) -> dg.SensorResult:
    resources = {"database": DatabaseResource(url=db.url), "embedder": EmbedderResource()}
    audit_defs = build_defs(spec)
    definitions = dg.Definitions.merge(audit_defs, dg.Definitions(resources=resources))
    (sensor,) = audit_defs.sensors
    with dg.instance_for_test() as instance:
        return sensor.evaluate_tick(
            dg.build_sensor_context(instance=instance, resources=resources, definitions=definitions)
        )


def test_a_new_fact_on_the_same_entity_and_attribute_reaudits_exactly_the_items_it_concerns(db) -> None:
    spec = audit_spec("audit_related")
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    linked = structured_fact(db, spec.name, "regions", "Atlas Peak AVA is in Napa County.", "ava:atlas", "county", 6000)
    with db.transaction() as conn:
        insert_rows(conn, "item_facts", ("item_id", "fact_id", "role"), [(ids[0], linked, "support")])
    asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert stale_items(db, spec, "regions") == [] and pending_audit(db, spec, "regions") is None

    # another attribute of the same entity concerns no item; the same attribute concerns the linked item only
    structured_fact(db, spec.name, "regions", "Atlas Peak AVA was created in 1992.", "ava:atlas", "year", 6100)
    assert stale_items(db, spec, "regions") == []
    structured_fact(db, spec.name, "regions", "Atlas Peak AVA is in Sonoma County.", "ava:atlas", "county", 6200)
    assert stale_items(db, spec, "regions") == [ids[0]]
    [request] = sensor_tick(db, spec).run_requests
    assert (request.partition_key, request.tags[TRIGGER_TAG], request.tags[STALE_TAG]) == (
        "regions",
        "stale_items",
        "1",
    )

    before = db.scalar("SELECT count(*) FROM audit_runs WHERE spec = %s", (spec.name,))
    done = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert done.new_run and done.outcome.rejudged_items == {ids[0]}  # a new audit version, the old one kept
    assert db.scalar("SELECT count(*) FROM audit_runs WHERE spec = %s", (spec.name,)) == before + 1
    assert pending_audit(db, spec, "regions") is None


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_answers_landing_rerun_k3_for_exactly_the_answered_items(db) -> None:
    spec = audit_spec("audit_answers", kina=KinaScreening(flagships=["flag_a", "flag_b"], min_flagships_answered=1))
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    first = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert pending_audit(db, spec, "regions") is None
    assert sensor_tick(db, spec).run_requests == []

    answered = ids[:2]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO evaluation_runs (spec, discipline, model, kind) VALUES (%s, 'regions', 'flag_a', 'model')
               RETURNING evaluation_run_id""",
            (spec.name,),
        )
        (run_id,) = cur.fetchone()
        insert_rows(
            conn,
            "evaluation_answers",
            ("evaluation_run_id", "item_id", "correct"),
            [(run_id, i, False) for i in answered],
        )
    pending = pending_audit(db, spec, "regions")
    assert pending is not None and pending.stale_items == [] and pending.answered_items == answered
    [request] = sensor_tick(db, spec).run_requests
    assert (request.tags[TRIGGER_TAG], request.tags[ANSWERED_TAG], request.tags[STALE_TAG]) == ("answers", "2", "0")

    done = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert done.new_run and done.audit_run_id != first.audit_run_id
    assert done.outcome.rejudged_items == set()  # every item-level finding carried over
    k3 = db.query(
        """SELECT item_id, payload FROM audit_findings WHERE audit_run_id = %s AND agent = 'K3_flagship_difficulty'
           ORDER BY item_id""",
        (done.audit_run_id,),
    )
    assert sorted(r["item_id"] for r in k3 if r["payload"]["flagships_answered"] == 1) == sorted(answered)
    assert pending_audit(db, spec, "regions") is None
