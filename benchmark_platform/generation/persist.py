"""Reads a discipline's selected and pooled facts (with entity links and source URLs) and earlier rounds' audit pass
rates; replaces the discipline's items, fact links, generation metadata, option explanations and reserve pool in one
transaction."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from benchmark_platform.generation.model import Entity, Fact, Item
from benchmark_platform.store import Database, as_json, insert_rows

_FACTS = """
SELECT f.fact_id, f.text, d.url AS source, f.attributes->>'subject' AS subject, f.attributes->>'field' AS field,
       f.attributes->>'value' AS value, f.attributes->>'entity_type' AS entity_type,
       coalesce((f.attributes->'salience'->>'question_material')::boolean, true) AS question_material,
       coalesce((SELECT json_agg(json_build_array(e.entity_id, e.entity_type, e.surface)
                                 ORDER BY e.entity_id, e.surface)
                 FROM fact_entities e WHERE e.fact_id = f.fact_id), '[]') AS entities
FROM facts f JOIN documents d ON d.document_id = f.document_id {join}
WHERE f.spec = %s AND f.discipline = %s ORDER BY {order}"""


def _fact(row: dict[str, Any]) -> Fact:
    entities = tuple(Entity(*e) for e in row.pop("entities"))
    return Fact(**row, entities=entities)


def load_selected(db: Database, spec_name: str, discipline: str) -> list[Fact]:
    rows = db.query(
        _FACTS.format(
            join="JOIN selected_facts s ON s.fact_id = f.fact_id AND s.spec = f.spec AND s.discipline = f.discipline",
            order="s.rank, f.fact_id",
        ),
        (spec_name, discipline),
    )
    return [_fact(r) for r in rows]


def load_pool(db: Database, spec_name: str, discipline: str) -> list[Fact]:
    return [_fact(r) for r in db.query(_FACTS.format(join="", order="f.fact_id"), (spec_name, discipline))]


def audit_pass_rates(db: Database, spec_name: str) -> dict[str, tuple[int, int]]:
    """(passed, audited) per generator: an item passes when its discipline's current audit run did not drop it
    (the audit policy's verdict; advisory agents' failures and relabel/disclose actions do not count against it)."""
    rows = db.query(
        """
        WITH latest AS (SELECT audit_run_id, discipline FROM current_audit_runs WHERE spec = %(spec)s)
        SELECT g.generator,
               count(*) FILTER (WHERE NOT EXISTS (
                   SELECT 1 FROM audit_policy p WHERE p.audit_run_id = l.audit_run_id AND p.item_id = i.item_id
                   AND p.action = 'drop'))::int AS passed,
               count(*)::int AS audited
        FROM items i JOIN latest l ON l.discipline = i.discipline JOIN generation_metadata g USING (item_id)
        WHERE i.spec = %(spec)s AND EXISTS (SELECT 1 FROM audit_findings f WHERE f.audit_run_id = l.audit_run_id
                                            AND f.item_id = i.item_id)
        GROUP BY g.generator""",
        {"spec": spec_name},
    )
    return {r["generator"]: (r["passed"], r["audited"]) for r in rows}


def _parameters(item: Item) -> dict[str, Any]:
    return {
        **item.parameters,
        "format": item.format,
        "difficulty": item.difficulty,
        "cognitive": item.cognitive,
        "answer_index": item.answer_index,
    }


def store_items(
    db: Database, spec_name: str, discipline: str, items: list[Item], reserve: Sequence[Item] = ()
) -> dict[str, int]:
    ids = [i.item_id for i in items]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "DELETE FROM items WHERE spec = %s AND discipline = %s AND NOT (item_id = ANY(%s))",
            (spec_name, discipline, ids),
        )
        removed = cur.rowcount
        insert_rows(
            conn,
            "items",
            (
                "item_id",
                "spec",
                "discipline",
                "format",
                "question",
                "options",
                "answer_index",
                "explanation",
                "difficulty",
            ),
            [
                (
                    i.item_id,
                    spec_name,
                    discipline,
                    i.format,
                    i.question,
                    as_json(list(i.options)),
                    i.answer_index,
                    i.explanation,
                    i.difficulty,
                )
                for i in items
            ],
            on_conflict="""ON CONFLICT (item_id) DO UPDATE SET format = EXCLUDED.format,
                        question = EXCLUDED.question, options = EXCLUDED.options,
                        answer_index = EXCLUDED.answer_index, explanation = EXCLUDED.explanation,
                        difficulty = EXCLUDED.difficulty""",
        )
        for table in ("item_facts", "generation_metadata", "item_option_explanations", "item_option_facts"):
            cur.execute(f"DELETE FROM {table} WHERE item_id = ANY(%s)", (ids,))
        insert_rows(
            conn,
            "item_facts",
            ("item_id", "fact_id", "role"),
            [(i.item_id, fact_id, role) for i in items for fact_id, role in i.facts.items()],
        )
        insert_rows(
            conn,
            "generation_metadata",
            ("item_id", "strategy", "generator", "prompt_version", "parameters", "gate_result"),
            [
                (i.item_id, i.strategy, i.generator, i.prompt_version, as_json(_parameters(i)), i.gate_result)
                for i in items
            ],
        )
        insert_rows(
            conn,
            "item_option_explanations",
            ("item_id", "position", "explanation", "sources"),
            [
                (i.item_id, p, e.text, as_json(list(e.sources)))
                for i in items
                for p, e in enumerate(i.option_explanations)
            ],
        )
        insert_rows(
            conn,
            "item_option_facts",
            ("item_id", "position", "fact_id"),
            [(i.item_id, p, f) for i in items for p, proof in enumerate(i.option_facts) for f in proof],
        )
        cur.execute("DELETE FROM generation_reserve WHERE spec = %s AND discipline = %s", (spec_name, discipline))
        insert_rows(
            conn,
            "generation_reserve",
            ("item_id", "spec", "discipline", "strategy", "generator", "gate_result", "item"),
            [
                (
                    i.item_id,
                    spec_name,
                    discipline,
                    i.strategy,
                    i.generator,
                    i.gate_result,
                    as_json(dataclasses.asdict(i)),
                )
                for i in reserve
            ],
        )
    return {"items": len(items), "removed": removed, "reserve": len(reserve)}
