"""The facts stage in Dagster on the real PostgreSQL, from the wine snapshot's ingested documents."""

from __future__ import annotations

import dagster as dg
import pytest

from benchmark_platform.defs.common import DatabaseResource, EmbedderResource
from benchmark_platform.defs.facts.assets import build_defs as facts_defs
from benchmark_platform.defs.ingest.assets import build_defs as ingest_defs
from benchmark_platform.defs.ingest.resources import SourceFetcher
from benchmark_platform.defs.llm.resources import LLMGatewayResource
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.double import Rule, Script, ServerThread
from benchmark_platform.store import Database

pytestmark = pytest.mark.slow  # extracts facts from every wine source

SOURCES = ["wikibooks_wine", "ttb_ava_geojson", "wikipedia_grape_list"]


@pytest.fixture(scope="module")
def built(migrated_database, wine_spec):
    db = Database(migrated_database("bp_facts"))
    [documents] = ingest_defs(wine_spec).assets
    candidates, facts = facts_defs(wine_spec).assets
    database = DatabaseResource(url=db.url)
    resources = {"database": database, "embedder": EmbedderResource(), "llm": LLMGatewayResource(database=database)}
    for source in SOURCES:
        assert dg.materialize(
            [documents], partition_key=source, resources={"database": database, "fetcher": SourceFetcher()}
        ).success
        assert dg.materialize([candidates], partition_key=source, resources={"database": database}).success
    results = {d: dg.materialize([facts], partition_key=d, resources=resources) for d in wine_spec.discipline_keys}
    assert all(r.success for r in results.values())
    return db, wine_spec, facts, resources, results


def test_every_fact_is_anchored_at_a_span_of_its_document(built):
    db, spec, *_ = built
    assert db.scalar("SELECT count(*) FROM facts WHERE spec = %s", (spec.name,)) > 1000
    # prose facts: the span is the evidence sentence; templated facts: the span is the stated value
    assert (
        db.scalar(
            """SELECT count(*) FROM facts f JOIN documents d USING (document_id)
                        JOIN fact_candidates c ON c.spec = f.spec AND c.document_id = f.document_id
                             AND c.span_start = f.span_start AND c.span_end = f.span_end
                        WHERE f.spec = %s AND substring(d.text FROM f.span_start + 1 FOR f.span_end - f.span_start)
                              <> c.source_text""",
            (spec.name,),
        )
        == 0
    )
    # (UC Davis splits one AVA's name with '|', "Upper Mississippi|River Valley": the fact joins it, issue 34)
    unanchored = db.query(
        """SELECT f.method, f.attributes->>'value' AS value, substring(d.text FROM f.span_start + 1
                  FOR f.span_end - f.span_start) AS span
           FROM facts f JOIN documents d USING (document_id) WHERE f.spec = %s
                AND f.method LIKE 'template:%%' AND replace(substring(d.text FROM f.span_start + 1
                FOR f.span_end - f.span_start), '|', ' ') <> f.attributes->>'value'""",
        (spec.name,),
    )
    assert unanchored == [], unanchored
    prose = db.query(
        "SELECT f.discipline, f.text FROM facts f JOIN documents d USING (document_id) "
        "WHERE f.spec = %s AND d.source_id = 'wikibooks_wine'",
        (spec.name,),
    )
    assert len(prose) >= 20 and {r["discipline"] for r in prose} >= {"winemaking", "grape_varieties", "regions"}


def test_rejections_are_stored_with_stage_and_reason(built):
    db, spec, *_ = built
    rows = db.query(
        "SELECT stage, reason, rejected FROM fact_rejection_counts WHERE spec = %s AND source_id = 'wikibooks_wine'",
        (spec.name,),
    )
    stages = {r["stage"] for r in rows}
    assert {"resolve", "classify", "validate"} <= stages
    assert sum(r["rejected"] for r in rows) > 100


def test_entities_are_linked_with_canonical_ids(built):
    db, spec, *_ = built
    ids = {
        r["entity_id"]
        for r in db.query(
            "SELECT DISTINCT entity_id FROM fact_entities e JOIN facts f USING (fact_id) WHERE f.spec = %s",
            (spec.name,),
        )
    }
    assert {"ava:atlas_peak", "ava:napa_valley", "grape_variety:merlot"} <= ids
    assert (
        db.scalar(
            """SELECT count(*) FROM facts f WHERE f.spec = %s AND f.method LIKE 'template:%%'
                        AND NOT EXISTS (SELECT 1 FROM fact_entities e WHERE e.fact_id = f.fact_id)""",
            (spec.name,),
        )
        == 0
    )


def test_quality_report_per_discipline_and_source(built):
    db, spec, *_, results = built
    rows = db.query("SELECT * FROM fact_quality WHERE spec = %s", (spec.name,))
    by_key = {(r["discipline"], r["source_id"]): r for r in rows}
    regions = by_key[("regions", "ttb_ava_geojson")]
    assert regions["facts"] > 500 and regions["tier"] == 1 and regions["with_entities"] == regions["facts"]
    assert all(r["text_mode"] == "validated sentence" for r in rows)
    assert sum(r["facts"] for r in rows) == db.scalar("SELECT count(*) FROM facts WHERE spec = %s", (spec.name,))
    metadata = results["regions"].asset_materializations_for_node("wine__facts")[0].metadata
    assert metadata["text mode"].value == "validated sentence"


def test_rematerialising_a_discipline_changes_nothing(built):
    db, spec, facts, resources, _ = built

    def rows() -> tuple[list, list, list]:
        where = (spec.name,)
        return (
            db.query("SELECT fact_id, text FROM facts WHERE spec = %s AND discipline = 'regions' ORDER BY 1", where),
            db.query("SELECT * FROM fact_quality WHERE spec = %s AND discipline = 'regions' ORDER BY source_id", where),
            db.query("SELECT text, kept_fact_id FROM fact_duplicates WHERE spec = %s ORDER BY 1, 2", where),
        )

    before = rows()
    assert dg.materialize([facts], partition_key="regions", resources=resources).success
    assert rows() == before


def test_paraphrase_through_the_gateway_keeps_only_valid_outputs(built):
    """A scripted OpenAI-compatible model on loopback: one valid paraphrase, and 'A' (invalid) for every other
    fact. The valid one replaces its fact's text; nothing of the invalid ones is stored."""
    db, spec, _, resources, _ = built
    script = Script(
        rules=[Rule(match="Fact: The wine must be kept cool.", reply="Wine has to be stored somewhere cool.")],
        default_reply="A",
    )
    with ServerThread(script) as server:
        model = ModelConfig(name="scripted", family="test", base_url=server.base_url, model="scripted-1")
        paraphrasing = spec.model_copy(
            update={"models": [model], "facts": spec.facts.model_copy(update={"paraphrase_model": "scripted"})}
        )
        _, facts = facts_defs(paraphrasing).assets
        result = dg.materialize([facts], partition_key="winemaking", resources=resources)
        assert result.success and server.server.calls > 1
    texts = {
        r["text"]: r["attributes"]
        for r in db.query(
            "SELECT text, attributes FROM facts WHERE spec = %s AND discipline = 'winemaking'", (spec.name,)
        )
    }
    assert texts["Wine has to be stored somewhere cool."]["paraphrase_of"] == "The wine must be kept cool."
    assert "A" not in texts and sum("paraphrase_of" in a for a in texts.values()) == 1
    report = db.query(
        "SELECT paraphrased, text_mode FROM fact_quality WHERE spec = %s AND discipline = 'winemaking'", (spec.name,)
    )
    assert [(r["paraphrased"], r["text_mode"]) for r in report] == [(1, "paraphrase: scripted")]
    metadata = result.asset_materializations_for_node("wine__facts")[0].metadata
    assert metadata["paraphrase outcome"].value["accepted"] == 1
