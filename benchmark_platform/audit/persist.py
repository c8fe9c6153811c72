"""Reads a discipline's items with their facts; records an audit run and its findings (append-only)."""

from __future__ import annotations

import hashlib
import json

from benchmark_platform.audit.agents import Agent, AuditItem, Finding
from benchmark_platform.store import Database, as_json, insert_rows


def load_audit_items(db: Database, spec_name: str, discipline: str, expected_options: int) -> list[AuditItem]:
    rows = db.query(
        """SELECT i.item_id, i.question, i.options, i.answer_index,
                  coalesce(array_agg(f.text ORDER BY f.fact_id) FILTER (WHERE f.fact_id IS NOT NULL), '{}') AS facts
           FROM items i LEFT JOIN item_facts l ON l.item_id = i.item_id LEFT JOIN facts f ON f.fact_id = l.fact_id
           WHERE i.spec = %s AND i.discipline = %s GROUP BY i.item_id ORDER BY i.item_id""", (spec_name, discipline))
    return [AuditItem(r["item_id"], r["question"], tuple(r["options"]), r["answer_index"], tuple(r["facts"]),
                      expected_options) for r in rows]


def inputs_hash(items: list[AuditItem], agents: tuple[Agent, ...]) -> str:
    payload = json.dumps([[(i.item_id, i.question, i.options, i.answer_index, i.fact_texts) for i in items],
                          [(a.name, a.version) for a in agents]], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def store_audit(db: Database, spec_name: str, discipline: str, digest: str, findings: list[Finding],
                dagster_run_id: str | None) -> tuple[int, bool]:
    """(audit run id, whether it is new). The same inputs audited again reuse their run: no duplicate rows."""
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("""INSERT INTO audit_runs (spec, discipline, inputs_hash, dagster_run_id) VALUES (%s, %s, %s, %s)
                       ON CONFLICT (spec, discipline, inputs_hash) DO NOTHING RETURNING audit_run_id""",
                    (spec_name, discipline, digest, dagster_run_id))
        row = cur.fetchone()
        if row is None:
            cur.execute("SELECT audit_run_id FROM audit_runs WHERE spec = %s AND discipline = %s AND inputs_hash = %s",
                        (spec_name, discipline, digest))
            return cur.fetchone()[0], False
        run_id = row[0]
        insert_rows(conn, "audit_findings", ("audit_run_id", "item_id", "agent", "agent_version", "severity", "payload"),
                    [(run_id, f.item_id, f.agent, f.agent_version, f.severity, as_json(f.payload)) for f in findings],
                    on_conflict="ON CONFLICT DO NOTHING")
        return run_id, True
