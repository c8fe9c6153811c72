"""The release's tables, read from the system of record. Stages add their table with one entry in RELEASE_QUERIES.

Released items are the latest audit run's survivors of each discipline: no failure from a critical agent.
"""

from __future__ import annotations

import json

import polars as pl

from benchmark_platform.audit.agents import DETERMINISTIC_AGENTS
from benchmark_platform.release.bundle import ReleaseTable
from benchmark_platform.store import Database

_LATEST_AUDIT = """latest_audit AS (
    SELECT DISTINCT ON (discipline) audit_run_id, discipline FROM audit_runs WHERE spec = %(spec)s
    ORDER BY discipline, audit_run_id DESC)"""
_RELEASED = f"""WITH {_LATEST_AUDIT},
released AS (
    SELECT i.* FROM items i JOIN latest_audit a ON a.discipline = i.discipline
    WHERE i.spec = %(spec)s AND NOT EXISTS (
        SELECT 1 FROM audit_findings f WHERE f.audit_run_id = a.audit_run_id AND f.item_id = i.item_id
        AND f.severity = 'fail' AND f.agent = ANY(%(critical)s)))"""

# name -> (query, sort columns)
RELEASE_QUERIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "items": (f"""{_RELEASED} SELECT r.item_id, r.discipline, r.format, r.question, r.answer_index, r.explanation,
                  r.difficulty, g.strategy, g.generator, g.prompt_version
                  FROM released r LEFT JOIN generation_metadata g USING (item_id)""", ("item_id",)),
    "options": (f"""{_RELEASED} SELECT r.item_id, o.ordinality::int - 1 AS position, o.value #>> '{{}}' AS text,
                    (o.ordinality - 1 = r.answer_index) AS is_correct
                    FROM released r, jsonb_array_elements(r.options) WITH ORDINALITY o""", ("item_id", "position")),
    "item_facts": (f"""{_RELEASED} SELECT l.item_id, l.fact_id, l.role FROM released r JOIN item_facts l USING (item_id)""",
                   ("item_id", "fact_id")),
    "facts": (f"""{_RELEASED} SELECT DISTINCT f.fact_id, f.discipline, f.text, f.method, f.confidence, d.source_id,
                  d.url AS document_url, d.content_hash AS document_sha256, f.span_start, f.span_end
                  FROM released r JOIN item_facts l USING (item_id) JOIN facts f ON f.fact_id = l.fact_id
                  JOIN documents d ON d.document_id = f.document_id""", ("fact_id",)),
    "sources": ("""SELECT s.source_id, s.title, s.publisher, s.base_url, s.tier, s.licence, s.attribution,
                   count(d.document_id)::int AS documents
                   FROM sources s LEFT JOIN documents d USING (source_id) WHERE s.spec = %(spec)s
                   GROUP BY s.source_id""", ("source_id",)),
    "audit_findings": (f"""WITH {_LATEST_AUDIT} SELECT f.item_id, f.agent, f.agent_version, f.severity,
                          f.payload::text AS payload FROM audit_findings f JOIN latest_audit a USING (audit_run_id)""",
                       ("item_id", "agent", "agent_version")),
}


def read_release_tables(db: Database, spec_name: str) -> list[ReleaseTable]:
    params = {"spec": spec_name, "critical": [a.name for a in DETERMINISTIC_AGENTS if a.critical]}
    tables = []
    for name, (sql, sort_by) in RELEASE_QUERIES.items():
        rows = db.query(sql, params)
        frame = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
        tables.append(ReleaseTable(name, frame, sort_by))
    return tables


def spec_fingerprint(spec_json: str) -> str:
    import hashlib

    return hashlib.sha256(json.dumps(json.loads(spec_json), sort_keys=True).encode()).hexdigest()
