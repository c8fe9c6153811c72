"""The bundled `wine` snapshot: replayed with zero network connections into PostgreSQL, provenance enforced."""

from __future__ import annotations

import socket
from datetime import UTC, datetime

import dagster as dg
import psycopg2
import pytest

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.ingest import build_defs
from benchmark_platform.defs.ingest.resources import SourceFetcher
from benchmark_platform.ingest import IngestResult, persist, replay_source
from benchmark_platform.ingest.bundle import build
from benchmark_platform.ingest.persist import store_ingest
from benchmark_platform.ingest.records import Document, ProvenanceError, Trace
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform.ingest.source_checks import check_source, source_rows
from benchmark_platform.store import Database


@pytest.fixture(scope="module")
def ingest_db(migrated_database) -> Database:
    database = Database(migrated_database("bp_ingest"))
    return database


@pytest.fixture(scope="module")
def replayed(wine_spec) -> tuple[list[IngestResult], list[object]]:
    """Every source of the wine spec replayed from the bundled store, recording any socket connection attempt."""
    attempts: list[object] = []
    original = socket.socket.connect

    def spy(sock: socket.socket, address: object) -> None:
        attempts.append(address)
        return original(sock, address)

    socket.socket.connect = spy  # type: ignore[method-assign]
    try:
        store = SnapshotStore(wine_spec.snapshot_dir)
        results = [replay_source(source, store) for source in wine_spec.sources]
    finally:
        socket.socket.connect = original  # type: ignore[method-assign]
    return results, attempts


def test_replay_makes_zero_network_connections(replayed):
    _, attempts = replayed
    assert attempts == []


def test_wine_snapshot_has_150_documents_from_5_source_types_all_with_provenance(replayed, wine_spec):
    results, _ = replayed
    documents = [d for r in results for d in r.documents]
    assert len(documents) >= 150
    assert len({r.source.adapter for r in results if r.documents}) >= 5
    tiers = {s.id: s.tier for s in wine_spec.sources}
    licences = {s.id: s.licence for s in wine_spec.sources}
    assert all(
        d.url.startswith("https://")
        and tiers[d.source_id] in (1, 2, 3)
        and licences[d.source_id]
        and len(d.content_hash) == 64
        and d.retrieved_at.tzinfo is not None
        for d in documents
    )
    rejected = {r.source.id: len(r.rejections) for r in results if r.rejections}
    assert rejected == {"franceagrimer_grape_areas": 25, "wikipedia_grape_list": 1}  # malformed 2014 rows; a repeat


def test_bundled_store_is_rebuilt_from_the_real_files(shared_data, wine_spec, tmp_path):
    rebuilt = build(shared_data, tmp_path)
    bundled = SnapshotStore(wine_spec.snapshot_dir)
    assert [e.model_dump() for e in rebuilt.exchanges()] == [e.model_dump() for e in bundled.exchanges()]
    assert all(e.capture.kind == "import" for e in bundled.exchanges())
    assert not any("oenobench" in e.capture.origin for e in bundled.exchanges())
    size = sum(p.stat().st_size for p in bundled.root.rglob("*") if p.is_file())
    assert size < 5_000_000


def test_stored_sources_pass_their_checks_and_licence_table(replayed, ingest_db, wine_spec):
    results, _ = replayed
    store = SnapshotStore(wine_spec.snapshot_dir)
    for result in results:
        store_ingest(ingest_db, wine_spec.name, result, store)
        outcomes = check_source(source_rows(ingest_db, result.source.id))
        assert all(o.passed for o in outcomes), (result.source.id, [o for o in outcomes if not o.passed])
    assert ingest_db.scalar("SELECT count(*) FROM untraced_documents") == 0
    assert ingest_db.scalar("SELECT count(*) FROM ingest_rejections") == 26
    table = ingest_db.query("SELECT source_id, licence, redistribution, documents FROM source_licence_table")
    assert len(table) == len(wine_spec.sources) and all(row["documents"] > 0 for row in table)
    permittee = ingest_db.query(
        "SELECT d.text, t.locator FROM documents d JOIN document_traces t USING (document_id) "
        "WHERE d.source_id = 'ttb_wine_permittees' AND d.title = 'ALASKA MEADS LLC'"
    )
    assert permittee == [
        {
            "text": "Permit_Number: AK-W-15001\nOwner_Name: ALASKA MEADS LLC\nOperating_Name: RING OF "
            "FIRE MEADERY\nStreet: 178 E BUNNELL AVE\nCity: HOMER\nPrem_Zip: 99603\nPrem_County: "
            "KENAI PENINSULA\nNew_Permit_Flag: 0",
            "locator": "row=2",
        }
    ]


def test_a_document_without_a_recorded_source_is_rejected_at_insertion(replayed, ingest_db, wine_spec):
    results, _ = replayed
    wikibooks = next(r for r in results if r.source.id == "wikibooks_wine")
    genuine = wikibooks.documents[0]
    forged = genuine.model_copy(
        update={
            "raw": b"Bordeaux is in Burgundy.",
            "text": "Bordeaux is in Burgundy.",
            "url": "https://en.wikibooks.org/wiki/Forged",
        }
    )
    store = SnapshotStore(wine_spec.snapshot_dir)
    before = ingest_db.query("SELECT document_id, content_hash FROM documents WHERE source_id = 'wikibooks_wine'")
    with pytest.raises(ProvenanceError, match="not the span"):
        store_ingest(ingest_db, wine_spec.name, IngestResult(wikibooks.source, [genuine, forged]), store)
    invented = Document(
        source_id="wikibooks_wine",
        url="https://example.org/fact",
        title="x",
        media_type="text/plain",
        retrieved_at=datetime(2026, 1, 1, tzinfo=UTC),
        raw=b"made up",
        text="made up",
        trace=Trace(
            exchange_id="0" * 64, response_url="https://example.org/fact", body_sha256="0" * 64, start=0, end=7
        ),
    )
    with pytest.raises(ProvenanceError, match="no recorded exchange"):
        store_ingest(ingest_db, wine_spec.name, IngestResult(wikibooks.source, [invented]), store)
    after = ingest_db.query("SELECT document_id, content_hash FROM documents WHERE source_id = 'wikibooks_wine'")
    assert after == before


def test_the_database_refuses_a_trace_that_does_not_match_the_recorded_bytes(replayed, ingest_db):
    document_id = ingest_db.scalar("SELECT document_id FROM document_traces WHERE locator = 'row=2' LIMIT 1")
    with (
        pytest.raises(psycopg2.errors.RaiseException, match="do not match"),
        ingest_db.transaction() as conn,
        conn.cursor() as cur,
    ):
        cur.execute("UPDATE document_traces SET span_start = span_start + 1 WHERE document_id = %s", (document_id,))
    with (
        pytest.raises(psycopg2.errors.RaiseException, match="do not match"),
        ingest_db.transaction() as conn,
        conn.cursor() as cur,
    ):
        cur.execute(
            "UPDATE documents SET raw = 'forged', content_hash = encode(sha256('forged'), 'hex') "
            "WHERE document_id = %s",
            (document_id,),
        )
        cur.execute("UPDATE document_traces SET locator = locator WHERE document_id = %s", (document_id,))


def test_a_failure_while_storing_leaves_the_previous_partition_intact(replayed, ingest_db, wine_spec, monkeypatch):
    results, _ = replayed
    reports = next(r for r in results if r.source.id == "ttb_ava_reports")
    store = SnapshotStore(wine_spec.snapshot_dir)
    store_ingest(ingest_db, wine_spec.name, reports, store)
    before = ingest_db.query(
        "SELECT document_id, content_hash, text FROM documents WHERE source_id = 'ttb_ava_reports' ORDER BY 1"
    )
    original = persist.insert_rows

    def failing(conn, table, *args, **kwargs):
        if table == "ingest_rejections":
            raise RuntimeError("disk full")
        return original(conn, table, *args, **kwargs)

    monkeypatch.setattr(persist, "insert_rows", failing)
    halved = IngestResult(reports.source, reports.documents[:100], reports.rejections)
    with pytest.raises(RuntimeError, match="disk full"):
        store_ingest(ingest_db, wine_spec.name, halved, store)
    after = ingest_db.query(
        "SELECT document_id, content_hash, text FROM documents WHERE source_id = 'ttb_ava_reports' ORDER BY 1"
    )
    assert after == before and len(after) == 239


def test_dagster_asset_materialises_a_source_partition_with_passing_checks(wine_spec, migrated_database):
    database = Database(migrated_database("bp_ingest_dg"))
    [asset] = build_defs(wine_spec).assets
    result = dg.materialize(
        [asset],
        partition_key="douane_harvest_2016",
        resources={"database": DatabaseResource(url=database.url), "fetcher": SourceFetcher()},
    )
    assert result.success
    evaluations = result.get_asset_check_evaluations()
    assert len(evaluations) == 4 and all(e.passed for e in evaluations)
    assert database.scalar("SELECT count(*) FROM documents WHERE source_id = 'douane_harvest_2016'") == 1
