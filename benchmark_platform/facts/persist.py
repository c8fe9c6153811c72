"""Reads a spec's stored documents and replaces a discipline's facts in one transaction.

Fact ids are content-derived, so unchanged facts keep their id (and the items built on them); only facts that are
no longer produced are deleted.
"""

from __future__ import annotations

from benchmark_platform.facts.extract import Fact, SourceText
from benchmark_platform.store import Database, as_json, insert_rows


def load_source_texts(db: Database, source_ids: list[str]) -> list[SourceText]:
    rows = db.query("SELECT document_id, source_id, media_type, text FROM documents WHERE source_id = ANY(%s) "
                    "ORDER BY document_id", (source_ids,))
    return [SourceText(**row) for row in rows]


def store_facts(db: Database, spec_name: str, discipline: str, facts: list[Fact]) -> dict[str, int]:
    ids = [f.fact_id for f in facts]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM facts WHERE spec = %s AND discipline = %s AND NOT (fact_id = ANY(%s))",
                    (spec_name, discipline, ids))
        removed = cur.rowcount
        insert_rows(conn, "facts", ("fact_id", "spec", "discipline", "document_id", "span_start", "span_end", "text",
                                    "text_hash", "confidence", "method", "attributes"),
                    [(f.fact_id, spec_name, discipline, f.document_id, f.span_start, f.span_end, f.text, f.text_hash,
                      f.confidence, f.method, as_json(f.attributes)) for f in facts],
                    on_conflict="ON CONFLICT (fact_id) DO NOTHING")
        cur.execute("DELETE FROM fact_entities WHERE fact_id = ANY(%s)", (ids,))
        insert_rows(conn, "fact_entities", ("fact_id", "entity_id", "entity_type", "surface"),
                    [(f.fact_id, *entity) for f in facts for entity in f.entities],
                    on_conflict="ON CONFLICT DO NOTHING")
    return {"facts": len(facts), "removed": removed}
