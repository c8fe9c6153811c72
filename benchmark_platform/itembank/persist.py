"""The item bank in the system of record: replace one discipline's imported items and their provenance rows."""

from __future__ import annotations

from collections.abc import Sequence

from benchmark_platform.itembank.config import ItemBankConfig
from benchmark_platform.itembank.read import BankFile, BankItem, ItemBankError
from benchmark_platform.store import Database, as_json, insert_rows

BANK_FORMAT = "mcq"  # any number of options (items.format)

_ITEM_COLUMNS = (
    "item_id",
    "spec",
    "discipline",
    "format",
    "question",
    "options",
    "answer_index",
    "explanation",
    "difficulty",
)
_ROW_COLUMNS = (
    "item_id",
    "spec",
    "discipline",
    "bank_id",
    "file_name",
    "file_sha256",
    "row_number",
    "upstream_id",
    "category",
    "source",
    "licence",
    "attribution",
    "stratum_key",
    "metadata",
)


def store_bank_items(
    db: Database, spec_name: str, discipline: str, config: ItemBankConfig, bank: BankFile, items: Sequence[BankItem]
) -> dict[str, int]:
    """Replace the discipline's bank items (items of other origins, e.g. generated, are untouched) in one
    transaction. Unchanged items keep their rows (and so their audit findings); changed ones are updated; an item
    whose category moved it here from another discipline follows (its provenance row moves with it)."""
    ids = [item.item_id for item in items]
    with db.transaction() as conn, conn.cursor() as cur:
        cur.execute("SELECT item_id, spec FROM items WHERE item_id = ANY(%s) AND spec <> %s LIMIT 1", (ids, spec_name))
        taken = cur.fetchone()
        if taken is not None:  # ids are per spec (bank_item_prefix): only a generated item could collide
            raise ItemBankError(
                bank.path, 0, config.columns.id, f"item id {taken[0]!r} is an item of spec {taken[1]!r}"
            )
        cur.execute(
            """DELETE FROM items i USING item_bank_rows b WHERE b.item_id = i.item_id AND b.spec = %s
               AND b.discipline = %s AND NOT (i.item_id = ANY(%s))""",
            (spec_name, discipline, ids),
        )
        removed = cur.rowcount
        insert_rows(
            conn,
            "items",
            _ITEM_COLUMNS,
            [
                (
                    i.item_id,
                    spec_name,
                    discipline,
                    BANK_FORMAT,
                    i.question,
                    as_json(list(i.options)),
                    i.answer_index,
                    i.explanation,
                    i.difficulty,
                )
                for i in items
            ],
            on_conflict="""ON CONFLICT (item_id) DO UPDATE SET spec = EXCLUDED.spec, discipline = EXCLUDED.discipline,
                format = EXCLUDED.format, question = EXCLUDED.question, options = EXCLUDED.options,
                answer_index = EXCLUDED.answer_index, explanation = EXCLUDED.explanation,
                difficulty = EXCLUDED.difficulty""",
        )
        cur.execute(
            "DELETE FROM item_bank_rows WHERE spec = %s AND (discipline = %s OR item_id = ANY(%s))",
            (spec_name, discipline, ids),
        )
        insert_rows(
            conn,
            "item_bank_rows",
            _ROW_COLUMNS,
            [
                (
                    i.item_id,
                    spec_name,
                    discipline,
                    config.id,
                    bank.path.name,
                    bank.sha256,
                    i.row,
                    i.upstream_id,
                    i.category,
                    i.source,
                    i.licence,
                    config.attribution,
                    i.stratum_key,
                    as_json(dict(i.metadata)),
                )
                for i in items
            ],
        )
    return {"items": len(items), "removed": removed}
