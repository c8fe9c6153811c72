"""Write a selection and its certificate (sql/0005 selections) with its members, replacing the partition."""

from __future__ import annotations

from benchmark_platform.selection.problem import SelectionResult
from benchmark_platform.store import Database, as_json, insert_rows

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
) -> None:
    """Replace the partition's selection of `target` ('facts' or 'items'); `result` None records a manual review."""
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
                   certified_ratio, gain_evaluations, repairs, stratum_counts)
               VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)""",
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
