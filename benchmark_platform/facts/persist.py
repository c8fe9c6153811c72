"""The facts stage's reads and writes. Each write replaces one partition's rows in one transaction: a source's
candidates and rejections, or a discipline's facts, entities, removed duplicates and quality report.

Fact ids are content-derived, so unchanged facts keep their id (and the items built on them); only facts that are
no longer produced are deleted.
"""

from __future__ import annotations

from dataclasses import asdict

from benchmark_platform.facts.build import Extraction, FactSet, QualityRow
from benchmark_platform.facts.models import Candidate, Mention, Rejection, SourceDocument, text_hash
from benchmark_platform.store import Database, as_json, insert_rows

_CANDIDATE_COLUMNS = (
    "spec",
    "source_id",
    "document_id",
    "span_start",
    "span_end",
    "discipline",
    "text",
    "source_text",
    "confidence",
    "method",
    "attributes",
    "mentions",
)


def load_documents(db: Database, source_ids: list[str]) -> list[SourceDocument]:
    rows = db.query(
        "SELECT document_id, source_id, media_type, title, text, metadata FROM documents "
        "WHERE source_id = ANY(%s) ORDER BY source_id, document_id",
        (source_ids,),
    )
    return [SourceDocument(**row) for row in rows]


def store_extraction(db: Database, spec: str, source_id: str, extraction: Extraction) -> None:
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM fact_candidates WHERE spec = %s AND source_id = %s", (spec, source_id))
        cur.execute("DELETE FROM fact_rejections WHERE spec = %s AND source_id = %s", (spec, source_id))
        insert_rows(
            conn,
            "fact_candidates",
            _CANDIDATE_COLUMNS,
            [
                (
                    spec,
                    c.source_id,
                    c.document_id,
                    c.span_start,
                    c.span_end,
                    c.discipline,
                    c.text,
                    c.source_text,
                    c.confidence,
                    c.method,
                    as_json(c.attributes),
                    as_json([asdict(m) for m in c.mentions]),
                )
                for c in extraction.candidates
            ],
            on_conflict="ON CONFLICT DO NOTHING",
        )
        insert_rows(
            conn,
            "fact_rejections",
            (
                "spec",
                "source_id",
                "document_id",
                "span_start",
                "span_end",
                "stage",
                "reason",
                "detail",
                "discipline",
                "text",
            ),
            [
                (
                    spec,
                    r.source_id,
                    r.document_id,
                    r.span_start,
                    r.span_end,
                    r.stage,
                    r.reason,
                    r.detail,
                    r.discipline,
                    r.text,
                )
                for r in extraction.rejections
            ],
        )


def load_candidates(db: Database, spec: str, discipline: str) -> list[Candidate]:
    rows = db.query(
        f"SELECT {', '.join(_CANDIDATE_COLUMNS[1:])} FROM fact_candidates "
        "WHERE spec = %s AND discipline = %s ORDER BY source_id, document_id, span_start, span_end, method",
        (spec, discipline),
    )
    return [Candidate(**{**row, "mentions": tuple(Mention(**m) for m in row["mentions"])}) for row in rows]


def load_rejections(db: Database, spec: str, discipline: str) -> list[Rejection]:
    rows = db.query(
        "SELECT source_id, document_id, span_start, span_end, stage, reason, text, detail, discipline "
        "FROM fact_rejections WHERE spec = %s AND discipline = %s",
        (spec, discipline),
    )
    return [Rejection(**row) for row in rows]


def store_facts(
    db: Database, spec: str, discipline: str, fact_set: FactSet, report: list[QualityRow]
) -> dict[str, int]:
    ids = [f.fact_id for f in fact_set.facts]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM fact_duplicates WHERE spec = %s AND discipline = %s", (spec, discipline))
        cur.execute("DELETE FROM fact_quality WHERE spec = %s AND discipline = %s", (spec, discipline))
        cur.execute(
            "DELETE FROM facts WHERE spec = %s AND discipline = %s AND NOT (fact_id = ANY(%s))", (spec, discipline, ids)
        )
        removed = cur.rowcount
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
                "confidence",
                "method",
                "attributes",
            ),
            [
                (
                    f.fact_id,
                    spec,
                    discipline,
                    c.document_id,
                    c.span_start,
                    c.span_end,
                    c.text,
                    text_hash(c.text),
                    c.confidence,
                    c.method,
                    as_json(c.attributes),
                )
                for f in fact_set.facts
                if (c := f.candidate)
            ],
            on_conflict="ON CONFLICT (fact_id) DO UPDATE SET confidence = EXCLUDED.confidence, "
            "method = EXCLUDED.method, attributes = EXCLUDED.attributes",
        )
        cur.execute("DELETE FROM fact_entities WHERE fact_id = ANY(%s)", (ids,))
        insert_rows(
            conn,
            "fact_entities",
            ("fact_id", "entity_id", "entity_type", "surface", "ner_label"),
            [
                (f.fact_id, m.entity_id, m.entity_type, m.surface, m.ner_label)
                for f in fact_set.facts
                for m in f.candidate.mentions
            ],
            on_conflict="ON CONFLICT DO NOTHING",
        )
        insert_rows(
            conn,
            "fact_duplicates",
            ("spec", "discipline", "document_id", "span_start", "span_end", "text", "kept_fact_id", "cosine"),
            [
                (
                    spec,
                    discipline,
                    d.candidate.document_id,
                    d.candidate.span_start,
                    d.candidate.span_end,
                    d.candidate.text,
                    d.kept_fact_id,
                    d.cosine,
                )
                for d in fact_set.duplicates
            ],
        )
        insert_rows(
            conn,
            "fact_quality",
            ("spec", *QualityRow.__dataclass_fields__),
            [(spec, *(as_json(v) if isinstance(v, dict) else v for v in asdict(row).values())) for row in report],
        )
    return {"facts": len(ids), "removed": removed, "duplicates": len(fact_set.duplicates)}


def candidate_digests(db: Database, spec: str) -> dict[str, str]:
    """Per discipline, a digest of its fact candidates (key and text): what the discipline's facts are built from.
    A new or changed document changes the digest of exactly the disciplines its candidates fall in."""
    rows = db.query(
        """SELECT discipline,
                  md5(string_agg(concat_ws(':', document_id, span_start, span_end, method, md5(text)), ','
                                 ORDER BY document_id, span_start, span_end, method)) AS digest
           FROM fact_candidates WHERE spec = %s GROUP BY discipline""",
        (spec,),
    )
    return {r["discipline"]: r["digest"] for r in rows}
