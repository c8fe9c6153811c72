"""The item pool selection reads after audit, and a selection with its certificate (sql/0005 selections) and members,
written replacing the partition."""

from __future__ import annotations

from collections.abc import Mapping

from benchmark_platform.centrality import Candidate
from benchmark_platform.selection.problem import SelectionResult
from benchmark_platform.store import Database, as_json, insert_rows


def audited_item_candidates(db: Database, spec: str, discipline: str) -> tuple[list[Candidate], int | None]:
    """The items the discipline's current audit run judged and its policy did not drop, as candidates, and that run.

    An item's text is its question with the keyed answer (the pair is what an anchor statement corresponds to);
    stratum key and src are those of its answer fact (else its first linked fact), so the anchor files' stratum map
    h applies to items as it does to facts; an item-bank item's are its bank row's stratum key and source. An item
    the current run did not judge (generated after it) is left out.
    """
    run = db.scalar(
        "SELECT audit_run_id FROM current_audit_runs WHERE spec = %s AND discipline = %s", (spec, discipline)
    )
    if run is None:
        return [], None
    rows = db.query(
        """SELECT i.item_id, i.question, i.options ->> i.answer_index::int AS answer,
                  coalesce(fa.method, b.stratum_key) AS method, coalesce(fa.source_id, b.source) AS source_id
           FROM items i
           LEFT JOIN LATERAL (SELECT f.method, d.source_id FROM item_facts l JOIN facts f USING (fact_id)
                              JOIN documents d USING (document_id) WHERE l.item_id = i.item_id
                              ORDER BY l.role <> 'answer', l.fact_id LIMIT 1) fa ON true
           LEFT JOIN item_bank_rows b ON b.item_id = i.item_id
           WHERE (fa.method IS NOT NULL OR b.item_id IS NOT NULL) AND i.spec = %(spec)s
             AND i.discipline = %(discipline)s
             AND EXISTS (SELECT 1 FROM audit_findings a WHERE a.audit_run_id = %(run)s AND a.item_id = i.item_id)
             AND NOT EXISTS (SELECT 1 FROM audit_policy p WHERE p.audit_run_id = %(run)s AND p.item_id = i.item_id
                             AND p.action = 'drop')
           ORDER BY i.item_id""",
        {"spec": spec, "discipline": discipline, "run": run},
    )
    return [
        Candidate(
            id=r["item_id"],
            text=f"{r['question']} {r['answer'] or ''}".strip(),
            src=r["source_id"],
            stratum_key=r["method"],
        )
        for r in rows
    ], run


MEMBER_TABLES = {"facts": ("selected_facts", "fact_id"), "items": ("selected_items", "item_id")}


def write_selection(
    db: Database,
    spec: str,
    discipline: str,
    target: str,
    k_total: int,
    import_id: int | None,
    result: SelectionResult | None,
    manual_review: str | None = None,
    response: Mapping[str, object] | None = None,
) -> None:
    """Replace the partition's selection of `target` ('facts' or 'items'); `result` None records a manual review.
    `response`: what the response-pattern term did and its held-out validation (items only)."""
    table, id_column = MEMBER_TABLES[target]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(f"DELETE FROM {table} WHERE spec = %s AND discipline = %s", (spec, discipline))
        cur.execute(
            "DELETE FROM selections WHERE spec = %s AND discipline = %s AND target = %s", (spec, discipline, target)
        )
        if result is None:
            cur.execute(
                """INSERT INTO selections (spec, discipline, target, import_id, method, k_total, manual_review)
                   VALUES (%s, %s, %s, %s, 'manual_review', %s, %s)""",
                (spec, discipline, target, import_id, k_total, manual_review),
            )
            return
        cur.execute(
            """INSERT INTO selections (spec, discipline, target, import_id, method, k_total, objective, upper_bound,
                   certified_ratio, gain_evaluations, repairs, stratum_counts, response)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
            (
                spec,
                discipline,
                target,
                import_id,
                result.method,
                k_total,
                result.objective,
                result.upper_bound,
                result.certified_ratio,
                result.gain_evaluations,
                result.repairs,
                as_json(result.stratum_counts),
                None if response is None else as_json(dict(response)),
            ),
        )
        gains = result.gains or (0.0,) * len(result.selected_ids)
        insert_rows(
            conn,
            table,
            ("spec", "discipline", id_column, "rank", "gain"),
            [
                (spec, discipline, member, rank, gain)
                for rank, (member, gain) in enumerate(zip(result.selected_ids, gains, strict=True))
            ],
        )
