"""Gold-sheet imports are validated in full before writing and atomic per command (issue 22, failures 2-6), and the
bad-input corpus of the faults bench gets one clear `error:` line per case with nothing stored changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from benchmark_platform.bench._badinputs import GOOD_ROW, HEADER, corpus, gold_row, run_case
from benchmark_platform.bench._faultkit import trimmed_spec
from benchmark_platform.cli.main import main
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV


@pytest.fixture
def gold_db(db: Database, monkeypatch) -> Database:
    monkeypatch.setenv(DATABASE_URL_ENV, db.url)
    return db


def sheet(path: Path, text: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode() if isinstance(text, str) else text)
    return path


def stored(db: Database, name: str) -> tuple[int, int]:
    return (
        db.scalar("SELECT count(*) FROM gold_items WHERE sheet = %s", (name,)),
        db.scalar("SELECT count(*) FROM gold_labels WHERE sheet = %s", (name,)),
    )


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_an_empty_sheet_never_deletes_an_earlier_import(gold_db, tmp_path, capsys):
    name = f"good_{tmp_path.name}"
    assert main(["audit", "import-gold", str(sheet(tmp_path / f"{name}.csv", HEADER + GOOD_ROW))]) == 0
    assert stored(gold_db, name) == (1, 2)
    capsys.readouterr()
    empty = sheet(tmp_path / "again" / f"{name}.csv", b"")
    assert main(["audit", "import-gold", str(empty)]) == 2
    assert "empty file; nothing was imported" in one_error(capsys)
    assert stored(gold_db, name) == (1, 2), "the earlier import is intact"
    header_only = sheet(tmp_path / "header" / f"{name}.csv", HEADER)
    assert main(["audit", "import-gold", str(header_only)]) == 2
    assert stored(gold_db, name) == (1, 2)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "7", "-3", "1e400"])
def test_ratings_outside_the_scale_are_refused(gold_db, tmp_path, capsys, value):
    name = f"rated_{value.replace('-', 'minus_')}_{tmp_path.name}"
    path = sheet(tmp_path / f"{name}.csv", HEADER + gold_row(rating=value))
    assert main(["audit", "import-gold", str(path)]) == 2
    assert f"{path}:2: column 'answer_correct': '{value}' is not a rating between 0 and 5" in one_error(capsys)
    assert stored(gold_db, name) == (0, 0)


def test_a_multi_sheet_import_stores_all_sheets_or_none(gold_db, tmp_path, capsys):
    good, bad = f"good2_{tmp_path.name}", f"bad_{tmp_path.name}"
    args = [str(sheet(tmp_path / f"{good}.csv", HEADER + GOOD_ROW)), str(sheet(tmp_path / f"{bad}.csv", HEADER))]
    assert main(["audit", "import-gold", *args]) == 2
    one_error(capsys)
    assert stored(gold_db, good) == (0, 0), "the good sheet of a failed command is not committed"
    bad_path = sheet(tmp_path / f"{bad}.csv", HEADER + GOOD_ROW)
    assert main(["audit", "import-gold", args[0], str(bad_path)]) == 0
    assert stored(gold_db, good) == (1, 2) and stored(gold_db, bad) == (1, 2)


def test_size_row_and_nesting_limits_are_clear_errors_that_a_flag_raises(gold_db, tmp_path, capsys):
    deep = sheet(tmp_path / "deep.csv", HEADER + gold_row(options="[" * 50_000 + "]" * 50_000))
    assert main(["audit", "import-gold", str(deep)]) == 2
    assert "nested 50,000 levels deep" in one_error(capsys)  # not a RecursionError

    name = f"big_{tmp_path.name}"
    rows = "".join(gold_row(ref=f"q{i}") for i in range(300))
    big = sheet(tmp_path / f"{name}.csv", HEADER + rows)
    assert main(["audit", "import-gold", str(big), "--max-bytes", "1000"]) == 2
    assert "over the limit of 1,000; raise it with --max-bytes" in one_error(capsys)
    assert main(["audit", "import-gold", str(big), "--max-rows", "100"]) == 2
    assert "more than 100 rows" in one_error(capsys)
    assert stored(gold_db, name) == (0, 0)
    assert main(["audit", "import-gold", str(big), "--max-bytes", "100000", "--max-rows", "300"]) == 0
    assert stored(gold_db, name) == (300, 600)


def test_the_bad_input_corpus_gets_one_clear_error_each_and_changes_nothing(gold_db, tmp_path):
    keep = f"kept_{tmp_path.name}"
    assert main(["audit", "import-gold", str(sheet(tmp_path / f"{keep}.csv", HEADER + GOOD_ROW))]) == 0
    before = gold_db.query("SELECT sheet, count(*) AS n FROM gold_labels GROUP BY sheet ORDER BY sheet")
    spec_text = yaml.safe_dump(json.loads(trimmed_spec().model_dump_json()), sort_keys=False)
    cases = corpus(tmp_path / "corpus", spec_text)
    assert len(cases) >= 60
    outcomes = [run_case(case, main) for case in cases]
    unclear = [(o.case, o.code, o.stderr[-500:]) for o in outcomes if not o.clear]
    assert unclear == []
    assert gold_db.query("SELECT sheet, count(*) AS n FROM gold_labels GROUP BY sheet ORDER BY sheet") == before
