"""The after-audit item selection (selected_items) on the real PostgreSQL, over the wine graph built up to the audit."""

from __future__ import annotations

import json
import shutil

import dagster as dg
import pytest

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.anchors import build_defs as anchors_defs
from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm import LLMGatewayResource
from benchmark_platform.defs.selection import build_defs as selection_defs
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.double import Script, scripted_servers
from benchmark_platform.selection.config import SelectionConfig
from benchmark_platform.selection.response import NO_RESPONSE_DATA
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database

pytestmark = pytest.mark.slow  # ingests, audits and selects real wine sources

SOURCES = ("ttb_ava_geojson", "wikipedia_grape_list", "inao_cahiers")  # K_d needs the rulebooks
DISCIPLINES = ("regions", "grape_varieties")
UPSTREAM = ("facts", "anchors", "support_centrality", "selected_facts", "items", "audit_findings")


def _assets(spec):
    defs = build_definitions(spec)
    graph = {a.key.path[-1]: a for a in defs.assets if isinstance(a, dg.AssetsDefinition)}
    return defs, graph


def _resources(defs, db):
    database = DatabaseResource(url=db.url)
    return {**(defs.resources or {}), "database": database, "llm": LLMGatewayResource(database=database)}


def import_anchors(spec, db, discipline):
    """Materialise the anchors asset for one partition: the selection reads what it stored, never the files."""
    (asset,) = anchors_defs(spec).assets
    assert dg.materialize([asset], partition_key=discipline, resources=_resources(dg.Definitions(), db)).success


def select_items(spec, db, discipline):
    """Materialise selected_items for one partition; returns its materialisation event."""
    (asset,) = [a for a in selection_defs(spec).assets if a.key.path[-1] == "selected_items"]
    result = dg.materialize([asset], partition_key=discipline, resources=_resources(dg.Definitions(), db))
    return result.asset_materializations_for_node(asset.node_def.name)[0]


@pytest.fixture(scope="module")
def audited(migrated_database):
    """The wine snapshot's AVA, grape-list and rulebook sources ingested, then facts to audit (regions, grape_varieties)."""
    db = Database(migrated_database("bp_item_selection"))
    spec = load_spec("wine")
    defs, graph = _assets(spec)
    resources = _resources(defs, db)
    with dg.instance_for_test() as instance:
        for source in SOURCES:
            dg.materialize(
                [graph["source_documents"], graph["fact_candidates"]],
                partition_key=source,
                resources=resources,
                instance=instance,
            )
        for discipline in DISCIPLINES:
            dg.materialize(
                [graph[name] for name in UPSTREAM], partition_key=discipline, resources=resources, instance=instance
            )
    return db, spec


def _survivors(db, discipline):
    """Items of the latest audit run that its policy did not drop."""
    return {
        r["item_id"]
        for r in db.query(
            """WITH run AS (SELECT max(audit_run_id) AS id FROM audit_runs WHERE spec = 'wine' AND discipline = %s)
           SELECT DISTINCT f.item_id FROM audit_findings f, run WHERE f.audit_run_id = run.id AND NOT EXISTS (
               SELECT 1 FROM audit_policy p WHERE p.audit_run_id = run.id AND p.item_id = f.item_id
               AND p.action = 'drop')""",
            (discipline,),
        )
    }


def _selected(db, discipline):
    return [
        r["item_id"]
        for r in db.query(
            "SELECT item_id FROM selected_items WHERE spec = 'wine' AND discipline = %s ORDER BY rank", (discipline,)
        )
    ]


@pytest.mark.parametrize("discipline", DISCIPLINES)
def test_items_are_selected_after_audit_with_a_certified_ratio(audited, discipline):
    db, spec = audited
    event = select_items(spec, db, discipline)
    row = db.query(
        "SELECT * FROM selections WHERE spec = 'wine' AND discipline = %s AND target = 'items'", (discipline,)
    )
    assert len(row) == 1 and row[0]["manual_review"] is None, row
    row = row[0]
    assert 0 < row["certified_ratio"] <= 1 and row["objective"] <= row["upper_bound"] + 1e-12
    chosen = _selected(db, discipline)
    survivors = _survivors(db, discipline)
    assert chosen and set(chosen) <= survivors and len(chosen) == len(set(chosen)) == row["k_total"]
    metadata = event.metadata
    # K = the anchors' K_d capped by what the surviving shortlist allows
    assert row["k_total"] == metadata["k"].value <= min(metadata["k_total"].value, metadata["shortlisted"].value)
    assert metadata["scored_candidates"].value == len(survivors)
    assert metadata["certified_ratio"].value == pytest.approx(row["certified_ratio"])
    assert metadata["fallback_signatures_used"].value  # no signature model in the wine spec
    # the wine spec imports no answers: coverage-only selection, and both the row and the metadata say so
    assert row["response"]["response_term"] == metadata["response_term"].value == "absent"
    assert row["response"]["holdout_validation"] == metadata["holdout_validation"].value == NO_RESPONSE_DATA
    # the facts' selection and centrality run are untouched by the item selection
    assert (
        db.scalar(
            "SELECT count(*) FROM selections WHERE spec = 'wine' AND discipline = %s AND target = 'facts'",
            (discipline,),
        )
        == 1
    )
    # a rerun replaces the partition's selection with the same one
    select_items(spec, db, discipline)
    assert _selected(db, discipline) == chosen


def test_an_item_the_audit_policy_drops_is_never_selected(audited):
    db, spec = audited
    discipline = "regions"
    select_items(spec, db, discipline)
    victim = _selected(db, discipline)[0]
    run = db.scalar("SELECT max(audit_run_id) FROM audit_runs WHERE spec = 'wine' AND discipline = %s", (discipline,))
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "INSERT INTO audit_policy (audit_run_id, item_id, action, reason) VALUES (%s, %s, 'drop', 'test')",
            (run, victim),
        )
    try:
        event = select_items(spec, db, discipline)
        assert victim not in _selected(db, discipline)
        assert victim not in _survivors(db, discipline)
        assert event.metadata["scored_candidates"].value == len(_survivors(db, discipline))
    finally:
        with db.transaction() as conn, conn.cursor() as cur:
            cur.execute(
                "DELETE FROM audit_policy WHERE audit_run_id = %s AND item_id = %s AND reason = 'test'", (run, victim)
            )


def test_missing_anchor_files_send_the_item_selection_to_manual_review(audited, tmp_path):
    db, spec = audited
    copy = tmp_path / "wine"
    shutil.copytree(spec.anchors_dir, copy / "anchors")
    shutil.rmtree(copy / "anchors" / "grape_varieties")
    bare = spec.model_copy(update={"directory": copy})
    try:
        import_anchors(bare, db, "grape_varieties")  # the files are gone: no anchor import stays current
        select_items(bare, db, "grape_varieties")
        row = db.query(
            "SELECT method, manual_review FROM selections WHERE spec = 'wine' "
            "AND discipline = 'grape_varieties' AND target = 'items'"
        )
        assert row == [{"method": "manual_review", "manual_review": "no anchor files"}]
        assert _selected(db, "grape_varieties") == []
    finally:
        import_anchors(spec, db, "grape_varieties")  # leave the partition as the other tests expect it
        select_items(spec, db, "grape_varieties")


def test_item_signatures_come_from_the_signature_model_when_the_spec_names_one(audited):
    db, spec = audited
    reply = json.dumps(
        {
            "method_family": "appellation lookup",
            "core_principle": "delimited areas",
            "answer_type": "entity",
            "constraints": [],
            "alignment": 0.9,
        }
    )
    with scripted_servers() as start:
        server = start(Script(default_reply=reply))
        model = ModelConfig(name="signer", family="scripted", base_url=server.base_url, model="item-signatures")
        llm_spec = spec.model_copy(update={"models": [model], "selection": SelectionConfig(signature_model="signer")})
        try:
            metadata = select_items(llm_spec, db, "regions").metadata
        finally:
            select_items(spec, db, "regions")  # back to the deterministic selection the other tests expect
    assert metadata["fallback_signatures_used"].value is False
    assert metadata["signature_source"].value == "llm signer"
    # every audited survivor, anchor item and labelled item got one call
    assert metadata["llm_calls"].value == metadata["llm_ok"].value == server.server.calls
    assert metadata["llm_calls"].value >= metadata["scored_candidates"].value + metadata["scored_anchors"].value
