"""Store one source's ingest result: provenance verified first, then the source's rows replaced in one transaction.

What is written: the source row and its licence row, every recorded exchange a document came from (with its body),
the documents, their traces (which the database re-verifies byte for byte, sql/0002), and the rejected records.
Documents that vanished from the source are deleted (with their facts); the others are updated in place, keeping
their content-derived ids, so facts on an unchanged document survive a rerun. Any failure rolls everything back.
"""

from __future__ import annotations

from benchmark_platform.ingest.read import IngestResult
from benchmark_platform.ingest.records import verify_provenance
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform.store import Database, as_json, insert_rows

DOCUMENT_COLUMNS = (
    "document_id",
    "source_id",
    "url",
    "retrieved_at",
    "content_date",
    "media_type",
    "content_hash",
    "raw",
    "text",
    "title",
    "metadata",
)
_UPDATE_DOCUMENT = ", ".join(f"{c} = EXCLUDED.{c}" for c in DOCUMENT_COLUMNS[2:])


def store_ingest(db: Database, spec_name: str, result: IngestResult, store: SnapshotStore) -> dict[str, int]:
    source = result.source
    bodies: dict[str, bytes] = {}
    for document in result.documents:  # the insertion gate: no document without a verified source trace
        verify_provenance(document, source.tier, source.licence, store, bodies)
    exchanges = [e for i in result.exchange_ids if (e := store.by_id(i))]  # verify_provenance found each one
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            """INSERT INTO sources (source_id, spec, adapter, title, publisher, base_url, tier, licence, attribution)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (source_id) DO UPDATE SET spec = EXCLUDED.spec, adapter = EXCLUDED.adapter,
                 title = EXCLUDED.title, publisher = EXCLUDED.publisher, base_url = EXCLUDED.base_url,
                 tier = EXCLUDED.tier, licence = EXCLUDED.licence, attribution = EXCLUDED.attribution,
                 updated_at = now()""",
            (
                source.id,
                spec_name,
                source.adapter,
                source.title,
                source.publisher,
                source.homepage,
                source.tier,
                source.licence,
                source.attribution,
            ),
        )
        cur.execute(
            """INSERT INTO source_licences (source_id, licence, licence_url, attribution, redistribution, basis, homepage)
               VALUES (%s, %s, %s, %s, %s, %s, %s)
               ON CONFLICT (source_id) DO UPDATE SET licence = EXCLUDED.licence, licence_url = EXCLUDED.licence_url,
                 attribution = EXCLUDED.attribution, redistribution = EXCLUDED.redistribution,
                 basis = EXCLUDED.basis, homepage = EXCLUDED.homepage""",
            (
                source.id,
                source.licence,
                source.licence_url,
                source.attribution,
                source.redistribution,
                source.basis,
                source.homepage,
            ),
        )
        insert_rows(
            conn,
            "http_exchanges",
            (
                "exchange_id",
                "method",
                "url",
                "request_headers",
                "status",
                "response_headers",
                "body_sha256",
                "body",
                "recorded_at",
                "elapsed_ms",
                "capture",
            ),
            [
                (
                    e.exchange_id,
                    e.method,
                    e.url,
                    as_json(e.request_headers),
                    e.status,
                    as_json(e.response_headers),
                    e.body_sha256,
                    bodies.get(e.body_sha256) or store.body(e),
                    e.recorded_at,
                    e.elapsed_ms,
                    as_json(e.capture.model_dump()),
                )
                for e in exchanges
            ],
            on_conflict="ON CONFLICT (exchange_id) DO NOTHING",
            page_size=20,
        )
        ids = [d.document_id for d in result.documents]
        cur.execute("DELETE FROM documents WHERE source_id = %s AND NOT (document_id = ANY(%s))", (source.id, ids))
        removed = cur.rowcount
        insert_rows(
            conn,
            "documents",
            DOCUMENT_COLUMNS,
            [
                (
                    d.document_id,
                    d.source_id,
                    d.url,
                    d.retrieved_at,
                    d.content_date,
                    d.media_type,
                    d.content_hash,
                    d.raw,
                    d.text,
                    d.title,
                    as_json(d.metadata),
                )
                for d in result.documents
            ],
            on_conflict=f"ON CONFLICT (document_id) DO UPDATE SET {_UPDATE_DOCUMENT}",
            page_size=500,
        )
        cur.execute("DELETE FROM document_traces WHERE document_id = ANY(%s)", (ids,))
        insert_rows(
            conn,
            "document_traces",
            ("document_id", "exchange_id", "span_start", "span_end", "locator"),
            [
                (d.document_id, d.trace.exchange_id, d.trace.start, d.trace.end, d.trace.locator)
                for d in result.documents
            ],
            page_size=1000,
        )
        cur.execute("DELETE FROM ingest_rejections WHERE source_id = %s", (source.id,))
        insert_rows(
            conn,
            "ingest_rejections",
            ("source_id", "locator", "reason", "excerpt"),
            [(r.source_id, r.locator, r.reason, r.excerpt) for r in result.rejections],
            on_conflict="ON CONFLICT DO NOTHING",
        )
    return {
        "documents": len(result.documents),
        "rejected": len(result.rejections),
        "removed": removed,
        "exchanges": len(exchanges),
    }
