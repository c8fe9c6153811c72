"""Issue 31: `audit gold-sheet` writes a stratified, seeded sheet of a spec's audited items with the rubric columns
its calibration reads; a rater fills it in and `audit import-gold` reads it back (and recalibrates the spec)."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

import pytest

from benchmark_platform.audit.goldsheet import allocate, sheet_rubrics
from benchmark_platform.audit.run import audit_discipline
from benchmark_platform.cli.main import main
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.spec import load_spec
from benchmark_platform.store import Database, migrate
from benchmark_platform.store.settings import DATABASE_URL_ENV
from benchmark_platform_tests.audit.corpus import QUESTIONS, seed_corpus


def test_allocation_is_proportional_in_integers() -> None:
    sizes = {("a", "", ""): 10, ("b", "", ""): 5, ("c", "", ""): 1}
    assert allocate(sizes, 8) == {("a", "", ""): 5, ("b", "", ""): 3, ("c", "", ""): 0}
    assert allocate(sizes, 16) == sizes and allocate(sizes, 100) == sizes
    assert sum(allocate(sizes, 7).values()) == 7


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def test_gold_sheet_is_stratified_seeded_and_round_trips_through_import_gold(
    fresh_database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    db = Database(fresh_database())
    migrate(db)
    spec = load_spec("wine")
    ids = seed_corpus(db, spec.name, ("regions", "grapes"))
    for discipline in ids:
        asyncio.run(audit_discipline(db, spec, discipline, StaticEmbedder()))
    monkeypatch.setenv(DATABASE_URL_ENV, db.url)

    out = tmp_path / "issue31_sheet.csv"
    assert main(["audit", "gold-sheet", "--spec", "wine", "--n", "4", "--out", str(out), "--seed", "1"]) == 0
    rows = _rows(out)
    rubrics = sheet_rubrics(spec.audit)
    assert list(rows[0]) == [
        "item_id",
        "discipline",
        "strategy",
        "difficulty",
        "generator",
        "question_text",
        "options",
        "correct_answer",
        "source_facts",
        "reviewer",
        *rubrics,
    ]
    assert {"answer_correct", "no_vague_language", "needs_source"} <= set(rubrics)
    # 2 disciplines x 2 strategies x one difficulty, 3 items each: one item per stratum
    assert sorted((r["discipline"], r["strategy"], r["difficulty"]) for r in rows) == [
        (d, s, "L2") for d in ("grapes", "regions") for s in ("fact_to_question", "template")
    ]
    again = tmp_path / "again.csv"
    assert main(["audit", "gold-sheet", "--spec", "wine", "--n", "4", "--out", str(again), "--seed", "1"]) == 0
    assert again.read_bytes() == out.read_bytes()
    other = tmp_path / "other.csv"
    assert main(["audit", "gold-sheet", "--spec", "wine", "--n", "4", "--out", str(other), "--seed", "7"]) == 0
    assert other.read_bytes() != out.read_bytes()
    by_question = {q: (options, answer) for q, options, answer, _ in QUESTIONS}
    for r in rows:
        options, answer = by_question[r["question_text"]]
        assert json.loads(r["options"]) == options and r["correct_answer"] == "ABCD"[answer]

    # a rater fills in every rubric (1 = fine; the first item's wording is vague)
    for n, r in enumerate(rows):
        r.update({rubric: "1" for rubric in rubrics}, reviewer="rater_a")
        r["no_vague_language"] = "0" if n == 0 else "1"
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    capsys.readouterr()
    assert main(["audit", "import-gold", str(out), "--spec", "wine"]) == 0
    printed = capsys.readouterr().out
    assert f"4 items, {4 * len(rubrics)} ratings (utf-8) as sheet 'issue31_sheet'" in printed
    assert "recalibrated wine" in printed
    stored = db.query("SELECT item_ref, question, options, answer_index FROM gold_items WHERE sheet = 'issue31_sheet'")
    assert sorted(r["item_ref"] for r in stored) == sorted(r["item_id"] for r in rows)
    for s in stored:
        assert (s["options"], s["answer_index"]) == by_question[s["question"]][:2]
    labels = db.query(
        "SELECT item_ref, reviewer, rubric, rating FROM gold_labels WHERE sheet = 'issue31_sheet' AND rubric = %s",
        ("no_vague_language",),
    )
    assert {r["reviewer"] for r in labels} == {"rater_a"}
    assert sorted(r["rating"] for r in labels) == [0.0, 1.0, 1.0, 1.0]
    # the stored items' findings met the ratings: the spec's calibration is stored for the next audit
    assert db.scalar("SELECT count(*) FROM audit_calibrations WHERE spec = 'wine'") > 0
