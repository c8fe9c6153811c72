"""Stored audit runs: versioned append-only findings, carry-over of unchanged items, the policy the release reads,
and the re-audit sensor (Dagster's sensor test helpers) on new facts."""

from __future__ import annotations

import asyncio
import dataclasses

import dagster as dg

from benchmark_platform.audit import agents as agents_module
from benchmark_platform.audit import findings
from benchmark_platform.audit.run import audit_discipline, stale_items
from benchmark_platform.defs.audit import build_defs
from benchmark_platform.defs.audit.sensors import STALE_TAG
from benchmark_platform.defs.common import DatabaseResource, EmbedderResource
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.release.persist import RELEASE_QUERIES, query_params
from benchmark_platform_tests.audit.corpus import add_fact, audit_spec, seed_corpus

EMBEDDER = StaticEmbedder()


def _findings(db, run_id: int) -> list[dict]:
    return db.query(
        """SELECT item_id, agent, agent_version, severity, payload, input_hash, carried_from
                       FROM audit_findings WHERE audit_run_id = %s ORDER BY 1, 2, 3""",
        (run_id,),
    )


def test_new_agent_version_adds_findings_and_never_touches_old_ones(db) -> None:
    spec = audit_spec("audit_versions")
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    first = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    before = _findings(db, first.audit_run_id)
    assert {r["agent_version"] for r in before if r["agent"] == "A1_lexical_hygiene"} == {"1"}

    # the same inputs again: the same run, no new rows
    again = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert (again.audit_run_id, again.new_run) == (first.audit_run_id, False)

    # A1 version 2: a new run holds A1@2 findings for every item; A1@1 rows are untouched
    v2 = dataclasses.replace(agents_module.A1_LEXICAL_HYGIENE, version="2")
    agents = tuple(v2 if a.name == v2.name else a for a in findings.AGENTS)
    second = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER, agents=agents))
    assert second.new_run and second.audit_run_id != first.audit_run_id
    assert _findings(db, first.audit_run_id) == before
    rows = _findings(db, second.audit_run_id)
    assert {r["item_id"] for r in rows if (r["agent"], r["agent_version"]) == ("A1_lexical_hygiene", "2")} == set(ids)
    assert not [r for r in rows if r["agent"] == "A1_lexical_hygiene" and r["agent_version"] == "1"]
    # only A1 was re-judged; every other item-level finding was carried over from the first run
    assert {r["carried_from"] for r in rows if r["agent"] == "A3_fact_echo"} == {first.audit_run_id}
    assert {r["carried_from"] for r in rows if r["agent"] == "A1_lexical_hygiene"} == {None}
    assert db.scalar(
        "SELECT count(*) FROM audit_findings WHERE item_id = ANY(%s) AND agent = 'A1_lexical_hygiene'", (ids,)
    ) == 2 * len(ids)


def test_policy_actions_are_what_the_release_reads(db) -> None:
    spec = audit_spec("audit_policy_release")
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    done = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    dropped = {a.item_id for a in done.actions if a.action == "drop"}
    # item 5 has vague language ("famous", "many") and is a grape x region question: A1 and B3 drop it
    assert f"{spec.name}-regions-5" in dropped
    reasons = {
        r["item_id"]: r["reason"]
        for r in db.query(
            "SELECT item_id, reason FROM audit_policy WHERE audit_run_id = %s AND action = 'drop'", (done.audit_run_id,)
        )
    }
    assert "A1_lexical_hygiene" in reasons[f"{spec.name}-regions-5"]
    params = query_params(spec)
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute(RELEASE_QUERIES["items"].sql, params)
        assert not cur.fetchall()  # the release is the selection: nothing is selected yet, nothing ships
    # were every item selected (a dropped one too), the release would still hold only the audit's survivors
    with db.transaction() as conn, conn.cursor() as cur:
        for rank, item_id in enumerate(sorted(ids)):
            cur.execute(
                "INSERT INTO selected_items (spec, discipline, item_id, rank, gain) VALUES (%s, 'regions', %s, %s, 0)",
                (spec.name, item_id, rank),
            )
    with db.connect() as conn, conn.cursor() as cur:
        cur.execute(RELEASE_QUERIES["items"].sql, params)
        released = {row[0] for row in cur.fetchall()}
    assert released == set(ids) - dropped
    skipped = {
        r["agent"]: r["reason"]
        for r in db.query("SELECT agent, reason FROM audit_skips WHERE audit_run_id = %s", (done.audit_run_id,))
    }
    assert skipped["B1_tri_judge_answer"] == "no judge models configured (audit.judges)"  # skipped, not passed
    assert not db.query(
        "SELECT 1 FROM audit_findings WHERE audit_run_id = %s AND agent LIKE 'B1%%'", (done.audit_run_id,)
    )


def test_new_facts_trigger_a_reaudit_of_exactly_the_affected_items(db) -> None:
    spec = audit_spec("audit_sensor")
    ids = seed_corpus(db, spec.name, ("regions", "producers"))
    for discipline in ("regions", "producers"):
        asyncio.run(audit_discipline(db, spec, discipline, EMBEDDER))
    resources = {"database": DatabaseResource(url=db.url), "embedder": EmbedderResource()}
    audit_defs = build_defs(spec)
    definitions = dg.Definitions.merge(audit_defs, dg.Definitions(resources=resources))
    (sensor,) = audit_defs.sensors

    def context(instance: dg.DagsterInstance) -> dg.SensorEvaluationContext:
        return dg.build_sensor_context(instance=instance, resources=resources, definitions=definitions)

    with dg.instance_for_test() as instance:
        quiet = sensor.evaluate_tick(context(instance))
        assert not quiet.run_requests and quiet.skip_message == "nothing to re-audit"

        affected = ids["regions"][1:3]
        add_fact(db, spec.name, "regions", "The Napa Valley AVA is in California's North Coast.", affected)
        assert stale_items(db, spec, "regions") == affected
        assert stale_items(db, spec, "producers") == []
        tick = sensor.evaluate_tick(context(instance))
        assert [(r.partition_key, r.tags[STALE_TAG]) for r in tick.run_requests] == [("regions", "2")]
        assert tick.run_requests[0].asset_selection == [dg.AssetKey([spec.name, "audit_findings"])]

    # the requested run re-judges exactly the affected items; every other finding is carried over
    done = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert done.new_run and done.outcome.rejudged_items == set(affected)
    assert stale_items(db, spec, "regions") == []
