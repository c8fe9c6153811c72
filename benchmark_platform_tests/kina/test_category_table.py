"""A spec's item-bank categories as a reviewable CSV table (`!include map.csv`): rows with a discipline map, rows
without one leave the category's items out on purpose (counted, and their answers are not answers to unknown items);
a category the table does not name is still an error."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from benchmark_platform.itembank.read import ItemBankError, read_item_bank
from benchmark_platform.spec import SpecError, load_spec

ROWS = [
    {"id": f"{n}", "question": f"Question {n}?", "options": ["a", "b", "c"], "answer": "B", "src": src}
    for n, src in enumerate(["ori_mmlu-philosophy", "ori_mmlu-miscellaneous", "ori_mmlu-philosophy", "stemez-Physics"])
]


def write_spec(folder: Path, table: str, rows: list[dict] = ROWS) -> Path:
    pl.DataFrame(rows).write_parquet(folder / "bank.parquet")
    (folder / "map.csv").write_text(table, encoding="utf-8")
    spec = {
        "name": "table_bank",
        "description": "a bank mapped through a table",
        "seed": 1,
        "taxonomy": [{"name": "Root", "children": [{"name": "Logic"}, {"name": "Mechanics"}]}],
        "item_bank": {
            "id": "table_bank",
            "path": "bank.parquet",
            "licence": "MIT",
            "attribution": "test rows",
            "columns": {"category": "src", "source": "src"},
        },
        "release": {"version": "v1.0", "licence": "MIT", "canary": "CANARY table_bank"},
    }
    text = json.dumps(spec).replace('"attribution"', '"categories": !include map.csv, "attribution"')
    path = folder / "spec.yaml"
    path.write_text(text, encoding="utf-8")
    return path


TABLE = (
    "category,discipline,rationale\n"
    'ori_mmlu-philosophy,logic,"argument analysis, mostly"\n'
    "ori_mmlu-miscellaneous,,trivia: no discipline\n"
    "stemez-Physics,mechanics,statics problems\n"
)


def test_a_table_maps_and_leaves_out_with_reasons(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, TABLE))
    assert spec.item_bank is not None
    assert spec.item_bank.categories == {"ori_mmlu-philosophy": "logic", "stemez-Physics": "mechanics"}
    assert spec.item_bank.excluded == {"ori_mmlu-miscellaneous": "trivia: no discipline"}
    bank = read_item_bank(spec.item_bank, spec.directory)
    assert [(i.item_id, i.discipline) for i in bank.items] == [
        ("table_bank-0", "logic"),
        ("table_bank-2", "logic"),
        ("table_bank-3", "mechanics"),
    ]
    assert dict(bank.excluded) == {"1": "ori_mmlu-miscellaneous"}
    assert bank.item_ids() == {"table_bank-0", "table_bank-1", "table_bank-2", "table_bank-3"}


def test_a_category_the_table_does_not_name_is_an_error(tmp_path: Path) -> None:
    spec = load_spec(write_spec(tmp_path, "\n".join(TABLE.splitlines()[:3]) + "\n"))
    assert spec.item_bank is not None
    with pytest.raises(ItemBankError, match="unknown category 'stemez-Physics'") as error:
        read_item_bank(spec.item_bank, spec.directory)
    assert error.value.row == 4


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (TABLE + "stemez-Physics,logic,again\n", "more than one row: \\['stemez-Physics'\\]"),
        (TABLE.replace("statics problems", ""), "rationale"),
        (TABLE.replace("mechanics,", "optics,"), "maps to unknown discipline 'optics'"),
    ],
)
def test_a_bad_table_names_its_fault(tmp_path: Path, table: str, message: str) -> None:
    with pytest.raises(SpecError, match=message):
        load_spec(write_spec(tmp_path, table))


def test_a_ragged_table_row_is_one_error_with_its_line(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match=r"map\.csv:3: the row's field count differs"):
        load_spec(write_spec(tmp_path, TABLE.replace("trivia: no discipline", "trivia,extra")))


def test_a_user_spec_still_cannot_include_a_bundled_specs_file(tmp_path: Path) -> None:
    spec = write_spec(tmp_path, TABLE)
    kina = Path(load_spec("kina").directory, "taxonomy.yaml")
    spec.write_text(spec.read_text().replace("!include map.csv", f"!include {kina}"), encoding="utf-8")
    with pytest.raises(SpecError, match="outside the spec's folder"):
        load_spec(spec)
