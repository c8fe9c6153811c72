"""Reads selected and pooled facts; replaces a discipline's items with their fact links and generation metadata."""

from __future__ import annotations

from benchmark_platform.generation.templates import GENERATOR, PROMPT_VERSION, Item, StructuredFact
from benchmark_platform.store import Database, as_json, insert_rows

_STRUCTURED = """SELECT f.fact_id, f.attributes->>'subject' AS subject, f.attributes->>'field' AS field,
                        f.attributes->>'value' AS value, f.attributes->>'entity_type' AS entity_type
                 FROM facts f {join} WHERE f.spec = %s AND f.discipline = %s AND f.attributes ? 'field'
                 ORDER BY {order}"""


def load_selected_structured(db: Database, spec_name: str, discipline: str) -> list[StructuredFact]:
    rows = db.query(_STRUCTURED.format(
        join="JOIN selected_facts s ON s.fact_id = f.fact_id AND s.spec = f.spec AND s.discipline = f.discipline",
        order="s.rank"), (spec_name, discipline))
    return [StructuredFact(**row) for row in rows]


def load_structured_pool(db: Database, spec_name: str, discipline: str) -> list[StructuredFact]:
    rows = db.query(_STRUCTURED.format(join="", order="f.fact_id"), (spec_name, discipline))
    return [StructuredFact(**row) for row in rows]


def store_items(db: Database, spec_name: str, discipline: str, items: list[Item], fmt: str = "mcq4") -> dict[str, int]:
    ids = [item.item_id for item in items]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("DELETE FROM items WHERE spec = %s AND discipline = %s AND NOT (item_id = ANY(%s))",
                    (spec_name, discipline, ids))
        removed = cur.rowcount
        insert_rows(conn, "items", ("item_id", "spec", "discipline", "format", "question", "options", "answer_index",
                                    "explanation", "difficulty"),
                    [(i.item_id, spec_name, discipline, fmt, i.question, as_json(list(i.options)), i.answer_index,
                      i.explanation, i.difficulty) for i in items],
                    on_conflict="""ON CONFLICT (item_id) DO UPDATE SET question = EXCLUDED.question,
                        options = EXCLUDED.options, answer_index = EXCLUDED.answer_index,
                        explanation = EXCLUDED.explanation, difficulty = EXCLUDED.difficulty""")
        cur.execute("DELETE FROM item_facts WHERE item_id = ANY(%s)", (ids,))
        insert_rows(conn, "item_facts", ("item_id", "fact_id", "role"), [(i.item_id, i.fact_id, "answer") for i in items])
        cur.execute("DELETE FROM generation_metadata WHERE item_id = ANY(%s)", (ids,))
        insert_rows(conn, "generation_metadata", ("item_id", "strategy", "generator", "prompt_version", "parameters"),
                    [(i.item_id, i.strategy, GENERATOR, PROMPT_VERSION, as_json({})) for i in items])
    return {"items": len(items), "removed": removed}
