"""Checks of a release's inputs, read from the system of record. Each returns the offending rows (empty = pass).

- `unlinked_items`: generated items without a fact that traces to a stored document of a registered source
  (item-bank items carry their provenance in item_bank_rows instead);
- `duplicate_options`: audit survivors (what may ship) with two options equal after case folding and whitespace
  normalisation;
- `unaudited_items`: items that lack a verdict of some policy agent in their discipline's current audit run (the
  drop/relabel policy cannot have been applied to them);
- `uncalibrated_agents`: LLM-judged agents in the current audit runs without a row in `audit_calibrations` (the
  audit stage's Cohen's kappa against the gold labels, which also decides whether the agent is advisory);
- `unevaluated_items`: (item, configuration) pairs of a discipline's evaluation runs with no answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmark_platform.store import Database

CHECK_SAMPLE = 20

_LATEST = """latest AS (SELECT audit_run_id, discipline FROM current_audit_runs WHERE spec = %(spec)s)"""


def unlinked_items(db: Database, spec: str) -> list[dict[str, Any]]:
    return db.query(
        """
        SELECT i.item_id, i.discipline FROM items i WHERE i.spec = %(spec)s
        AND NOT EXISTS (SELECT 1 FROM item_bank_rows b WHERE b.item_id = i.item_id) AND NOT EXISTS (
            SELECT 1 FROM item_facts l JOIN facts f ON f.fact_id = l.fact_id
                 JOIN documents d ON d.document_id = f.document_id JOIN sources s ON s.source_id = d.source_id
            WHERE l.item_id = i.item_id)
        ORDER BY i.item_id""",
        {"spec": spec},
    )


def duplicate_options(db: Database, spec: str) -> list[dict[str, Any]]:
    return db.query(
        """
        SELECT i.item_id, i.discipline, lower(regexp_replace(btrim(o.text), '\\s+', ' ', 'g')) AS option,
               count(*) AS copies
        FROM items i CROSS JOIN LATERAL jsonb_array_elements_text(i.options) AS o(text)
        WHERE i.spec = %(spec)s AND EXISTS (SELECT 1 FROM release_candidates c WHERE c.item_id = i.item_id)
        GROUP BY i.item_id, i.discipline, 3 HAVING count(*) > 1 ORDER BY i.item_id""",
        {"spec": spec},
    )


def unaudited_items(db: Database, spec: str, policy_agents: Sequence[str]) -> list[dict[str, Any]]:
    return db.query(
        f"""
        WITH {_LATEST}
        SELECT i.item_id, i.discipline, a.audit_run_id,
               array(SELECT unnest(%(agents)s::text[]) EXCEPT
                     SELECT f.agent FROM audit_findings f
                     WHERE f.audit_run_id = a.audit_run_id AND f.item_id = i.item_id) AS missing_agents
        FROM items i LEFT JOIN latest a ON a.discipline = i.discipline
        WHERE i.spec = %(spec)s AND (a.audit_run_id IS NULL OR cardinality(array(
              SELECT unnest(%(agents)s::text[]) EXCEPT SELECT f.agent FROM audit_findings f
              WHERE f.audit_run_id = a.audit_run_id AND f.item_id = i.item_id)) > 0)
        ORDER BY i.item_id""",
        {"spec": spec, "agents": list(policy_agents)},
    )


def uncalibrated_agents(db: Database, spec: str, deterministic_agents: Sequence[str]) -> list[dict[str, Any]]:
    """LLM-judged agents of the current runs with no row in audit_calibrations (kappa against the gold labels)."""
    return db.query(
        f"""
        WITH {_LATEST}
        SELECT DISTINCT f.agent, f.agent_version FROM audit_findings f JOIN latest USING (audit_run_id)
        WHERE NOT f.agent = ANY(%(deterministic)s) AND NOT EXISTS (
            SELECT 1 FROM audit_calibrations c
            WHERE c.spec = %(spec)s AND c.agent = f.agent AND c.agent_version = f.agent_version)
        ORDER BY 1, 2""",
        {"spec": spec, "deterministic": list(deterministic_agents)},
    )


def unevaluated_items(db: Database, spec: str) -> list[dict[str, Any]]:
    return db.query(
        """
        SELECT i.item_id, i.discipline, r.model FROM evaluation_runs r JOIN items i
            ON i.spec = r.spec AND i.discipline = r.discipline
        WHERE r.spec = %(spec)s AND EXISTS (SELECT 1 FROM release_candidates c WHERE c.item_id = i.item_id
            AND c.selected) AND NOT EXISTS (
            SELECT 1 FROM evaluation_answers e WHERE e.evaluation_run_id = r.evaluation_run_id AND e.item_id = i.item_id)
        ORDER BY i.item_id, r.model""",
        {"spec": spec},
    )
