"""Issue 34's measure: `python -m benchmark_platform.bench wine_content` classifies a release bundle's items by the kind
of their answer fact and prints the administration + statistics share per discipline (a bundle written here with
the release's own table layout: items, item_facts, facts, options, spec.json)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import polars as pl

from benchmark_platform.bench.wine_content import classify, kind, rulebooks_asked, table

RULEBOOKS = "https://example.org/{key}"


def _bundle(root: Path) -> Path:
    data = root / "data"
    data.mkdir(parents=True)
    items = [
        ("i1", "producers", "Before what date must producers of Condrieu file their claim declaration?"),
        ("i2", "grape_varieties", "Condrieu may be made from one grape variety only. Which?"),
        ("i3", "business", "Which of these départements declared the most red AOP wine in the 2016 harvest?"),
        ("i4", "winemaking", "Which of these AOCs covers sweet (liquoreux) wines?"),
        ("i5", "winemaking", "Which option lists exactly the true statements among the following?"),
    ]
    pl.DataFrame(items, schema=["item_id", "discipline", "question"], orient="row").write_parquet(
        data / "items.parquet"
    )
    links = [("i1", "f1", "answer"), ("i2", "f2", "answer"), ("i3", "f3", "answer"), ("i4", "f4", "answer")]
    links += [("i5", "f6", "answer"), ("i5", "f5", "answer")]  # a pseudo-MCQ: its first fact by id decides
    pl.DataFrame(links, schema=["item_id", "fact_id", "role"], orient="row").write_parquet(data / "item_facts.parquet")
    facts = [
        ("f1", "rulebook:claim_deadline", "Producers of Condrieu ...", "inao_cahiers", RULEBOOKS.format(key="a")),
        ("f2", "rulebook:sole_variety", "Only Viognier ...", "inao_cahiers", RULEBOOKS.format(key="a")),
        ("f3", "template:q_aop_rouge", "In the 2016 harvest ...", "douane_harvest_2016", "https://example.org/x"),
        ("f4", "rulebook:style", "The Bonnezeaux AOC covers sweet (liquoreux) wines.", "inao_cahiers", "u"),
        ("f5", "rulebook:elevage", "Champagne must spend ...", "inao_cahiers", RULEBOOKS.format(key="b")),
        ("f6", "rulebook:min_sugar", "Grapes for Champagne ...", "inao_cahiers", RULEBOOKS.format(key="b")),
    ]
    schema = ["fact_id", "method", "text", "source_id", "document_url"]
    pl.DataFrame(facts, schema=schema, orient="row").write_parquet(data / "facts.parquet")
    options = [(i, p, f"o{p}", p == 0) for i, _, _ in items for p in range(4)]
    pl.DataFrame(options, schema=["item_id", "position", "text", "is_correct"], orient="row").write_parquet(
        data / "options.parquet"
    )
    spec = {"sources": [{"id": "inao_cahiers", "url_template": RULEBOOKS, "keys": ["a", "b", "c"]}]}
    (root / "spec.json").write_text(json.dumps(spec), encoding="utf-8")
    return root


def test_items_are_classified_by_their_answer_fact_and_paperwork_is_counted(tmp_path):
    release = _bundle(tmp_path / "wine" / "v0.1")
    classified = classify(release)
    kinds = dict(zip(classified["item_id"], classified["kind"], strict=True))
    assert kinds == {
        "i1": "administration",
        "i2": "varieties",
        "i3": "statistics",
        "i4": "sweetness",  # a sweet style is a sweetness question
        "i5": "ageing and élevage",  # f5 before f6
    }
    printed = table(classified)
    assert "| ALL | 5 | 1 | 1 | 40.0% |" in printed
    assert "| producers | 1 | 1 | 0 | 100.0% |" in printed
    asked, total, missing = rulebooks_asked(release)
    assert (asked, total, missing) == (2, 3, [RULEBOOKS.format(key="c")])
    assert kind("template:City", "") == "registry" and kind("rulebook:unknown", "") == "other"


def test_the_command_prints_the_table_and_a_seeded_sample_and_rejects_a_folder_that_is_no_release(tmp_path):
    release = _bundle(tmp_path / "wine" / "v0.1")
    command = [sys.executable, "-m", "benchmark_platform.bench", "wine_content"]
    run = subprocess.run([*command, str(release), "--sample", "2", "--seed", "1"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "admin+stats share" in run.stdout and "rulebook appellations asked about: 2 of 3" in run.stdout
    again = subprocess.run([*command, str(release), "--sample", "2", "--seed", "1"], capture_output=True, text=True)
    assert again.stdout == run.stdout  # the sample is seeded
    bad = subprocess.run([*command, str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.startswith("error: ") and "Traceback" not in bad.stderr
