"""Item-bank import on the real PostgreSQL: real MMLU-Pro rows round-trip in JSONL, CSV and Parquet with their
provenance; malformed files stop with one error naming file, row and field, and write nothing."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import polars as pl
import pytest

from benchmark_platform.evaluation.importers import read_mmlu_pro_items
from benchmark_platform.itembank.config import BankColumns, ItemBankConfig, bank_item_prefix
from benchmark_platform.itembank.read import ItemBankError
from benchmark_platform.itembank.run import import_discipline
from benchmark_platform.store import Database

COLUMNS = BankColumns(id="question_id", source="src")
CATEGORIES = {"philosophy": "philosophy", "history": "history"}


@pytest.fixture(scope="module")
def real_rows(shared_data: Path) -> list[dict]:
    """40 real MMLU-Pro items: 20 of philosophy, 20 of history (ids, questions, 3-10 options, letters, src)."""
    items = read_mmlu_pro_items(shared_data / "mmlu_pro_outputs")
    rows = []
    for category in CATEGORIES:
        own = items.filter(pl.col("discipline") == category).head(20)
        rows += [
            {
                "question_id": r["item_id"],
                "question": r["question"],
                "options": r["options"],
                "answer": r["answer"],
                "category": category,
                "src": r["src"],
            }
            for r in own.iter_rows(named=True)
        ]
    return rows


def write_bank(rows: list[dict], path: Path) -> Path:
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    elif path.suffix == ".csv":
        with path.open("w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows({**r, "options": json.dumps(r["options"], ensure_ascii=False)} for r in rows)
    else:
        pl.DataFrame(rows).write_parquet(path)
    return path


def config(path: Path, bank_id: str) -> ItemBankConfig:
    return ItemBankConfig(
        id=bank_id,
        path=path,
        licence="MIT",
        attribution="MMLU-Pro (TIGER-AI-Lab)",
        columns=COLUMNS,
        categories=CATEGORIES,
    )


def stored(db: Database, spec: str) -> list[dict]:
    return db.query(
        """SELECT i.item_id, i.discipline, i.format, i.question, i.options, i.answer_index, b.file_name,
                  b.file_sha256, b.row_number, b.upstream_id, b.source, b.licence, b.stratum_key
           FROM items i JOIN item_bank_rows b USING (item_id) WHERE i.spec = %s ORDER BY b.row_number""",
        (spec,),
    )


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_real_rows_round_trip_with_provenance(db: Database, real_rows, tmp_path, suffix):
    spec = f"bank_roundtrip_{suffix[1:]}"
    path = write_bank(real_rows, tmp_path / f"bank{suffix}")
    bank = config(path, f"rt{suffix[1:]}")
    for discipline in CATEGORIES.values():
        done = import_discipline(db, spec, tmp_path, bank, discipline)
        assert done.items == 20 and done.file_items == 40
    rows = stored(db, spec)
    assert len(rows) == 40
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    first_line = 1
    for n, (row, original) in enumerate(zip(rows, real_rows, strict=True)):
        assert row["item_id"] == f"{bank_item_prefix(spec, bank.id)}{original['question_id']}"  # ids are per spec
        assert row["upstream_id"] == original["question_id"]
        assert row["question"] == original["question"]  # U+0085 and friends survive
        assert row["options"] == original["options"]
        assert "ABCDEFGHIJ"[row["answer_index"]] == original["answer"]
        assert row["discipline"] == CATEGORIES[original["category"]] and row["format"] == "mcq"
        assert (row["file_name"], row["file_sha256"], row["licence"]) == (path.name, sha, "MIT")
        assert row["source"] == original["src"] and row["stratum_key"] == original["src"].split("-")[0]
        expected = _csv_record_start(path, n + 2) if suffix == ".csv" else first_line + n
        assert row["row_number"] == expected
    # a second import of the same file changes nothing
    import_discipline(db, spec, tmp_path, bank, "history")
    assert stored(db, spec) == rows


def _bad_cases(rows: list[dict]) -> dict[str, tuple[str, bytes | list[dict], int, str | None, str]]:
    """name -> (suffix, rows or raw bytes, row, field, words of the message)."""
    missing = [dict(r) for r in rows]
    del missing[3]["question"]
    unknown = [dict(r) for r in rows]
    unknown[5]["category"] = "astrology"
    duplicate = [dict(r) for r in rows]
    duplicate[7]["question_id"] = duplicate[2]["question_id"]
    lines = [json.dumps(r, ensure_ascii=False).encode() for r in rows]
    lines[9] = lines[9].replace(b'"question": "', b'"question": "\xff\xfe', 1)
    return {
        "missing column": (".jsonl", missing, 4, "question", "missing column"),
        "unknown category": (".parquet", unknown, 6, "category", "unknown category 'astrology'"),
        "duplicate id": (".csv", duplicate, 9, "question_id", "duplicate id"),
        "bad encoding": (".jsonl", b"\n".join(lines) + b"\n", 10, None, "not UTF-8"),
    }


def _csv_record_start(path: Path, record: int) -> int:
    """The line on which the `record`-th row (1 = header) of a CSV file starts."""
    reader = csv.reader(path.open(encoding="utf-8", newline=""))
    start = 1
    for n, _ in enumerate(reader, 1):
        if n == record:
            return start
        start = reader.line_num + 1
    raise AssertionError(f"{path} has fewer than {record} records")


@pytest.mark.parametrize("case", ["missing column", "unknown category", "duplicate id", "bad encoding"])
def test_malformed_file_names_file_row_and_field_and_writes_nothing(db: Database, real_rows, tmp_path, case):
    spec = f"bank_bad_{case.replace(' ', '_')}"
    good = config(write_bank(real_rows, tmp_path / "good.jsonl"), "bad" + case.replace(" ", ""))
    import_discipline(db, spec, tmp_path, good, "philosophy")
    before = stored(db, spec)
    assert len(before) == 20
    suffix, content, row, field, words = _bad_cases(real_rows)[case]
    path = tmp_path / f"bad{suffix}"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        write_bank(content, path)
    if suffix == ".csv":  # a CSV record's row is the line it starts on (quoted questions may span lines)
        row = _csv_record_start(path, row)
    bad = good.model_copy(update={"path": path})
    for discipline in CATEGORIES.values():  # every partition refuses the whole file
        with pytest.raises(ItemBankError) as caught:
            import_discipline(db, spec, tmp_path, bad, discipline)
        error = caught.value
        assert (error.path, error.row, error.field) == (path, row, field)
        message = str(error)
        assert message.startswith(f"{path}:{row}: ") and words in message and "\n" not in message
        if field:
            assert f"field {field!r}" in message
    assert stored(db, spec) == before  # nothing written, nothing lost


def test_bundled_mmlu_pro_spec_ships_its_bank_answers_and_derived_anchors():
    """The default run needs nothing from ../shared: the bank, the answers and the anchors are in the package."""
    from benchmark_platform.anchors import load_anchor_root
    from benchmark_platform.definitions_mmlu_pro import defs
    from benchmark_platform.evaluation.importers import read_results_import
    from benchmark_platform.itembank.run import load_bank
    from benchmark_platform.paths import PACKAGE_DIR
    from benchmark_platform.spec import load_spec

    spec = load_spec("mmlu_pro")
    assert spec.directory.resolve().is_relative_to(PACKAGE_DIR)
    bank = load_bank(spec.item_bank, spec.directory)
    assert len(bank.items) == 12_032 and {i.discipline for i in bank.items} == set(spec.discipline_keys)
    answers = read_results_import(spec.evaluation.imports[0], spec.directory)
    assert answers["model"].n_unique() == 29 and answers["item_id"].is_in([i.item_id for i in bank.items]).all()
    shipped = sum(p.stat().st_size for p in (spec.directory / "data").glob("*.parquet"))
    assert shipped < 5_000_000
    anchors = load_anchor_root(spec.anchors_dir)
    assert sorted(anchors) == sorted(spec.discipline_keys) and sum(a.k_total for a in anchors.values()) == 899
    assert all(a.is_example and a.note.startswith("DERIVED") for a in anchors.values())
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"mmlu_pro/bank_items", "mmlu_pro/selected_items", "mmlu_pro/release"} <= keys
