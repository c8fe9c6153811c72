"""Gold sheets (cp1252 / UTF-8), Cohen's kappa with a bootstrap CI, automatic advisory status, and the kappa report
of the agents that need no frontier model on the shared OenoBench gold sheets."""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score

from benchmark_platform.audit.calibration import bootstrap_ci, cohen_kappa, read_gold_sheet, report_markdown
from benchmark_platform.audit.persist import store_gold_sheet
from benchmark_platform.audit.run import audit_discipline, calibrate_spec, sheet_kappa_report
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.store import Database
from benchmark_platform_tests.audit.corpus import add_fact, audit_spec, seed_corpus

HEADER = "uuid,question_text,options,correct_answer,source_fact,no_vague_language,not_ambiguous\n"


def test_gold_sheet_encodings_and_errors(tmp_path: Path, shared_data: Path) -> None:
    row = "u1,Which côte makes Rosé?,\"['Côte de Beaune', 'Médoc']\",A,Rosé from the Côte.,1,0\n"
    for encoding in ("utf-8", "cp1252"):
        path = tmp_path / f"sheet_{encoding}.csv"
        path.write_bytes((HEADER + row).encode(encoding))
        sheet = read_gold_sheet(path)
        assert sheet.encoding == encoding and sheet.items[0].options == ("Côte de Beaune", "Médoc")
        assert {(r.rubric, r.rating) for r in sheet.ratings} == {("no_vague_language", 1.0), ("not_ambiguous", 0.0)}
    real = read_gold_sheet(shared_data / "oenobench" / "gold_sheets_scored" / "gold_sheet_scored.csv")
    assert real.encoding == "cp1252" and len(real.items) == 60
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "u2,Q?,\"['a', 'b']\",C,f,1,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.csv:2: correct_answer 'C'"):
        read_gold_sheet(bad)


def test_kappa_matches_sklearn_and_bootstrap_brackets_it() -> None:
    rng = np.random.default_rng(3)
    human = rng.random(200) < 0.3
    agent = np.where(rng.random(200) < 0.8, human, ~human)
    kappa = cohen_kappa(agent, human)
    assert kappa == pytest.approx(cohen_kappa_score(agent, human))
    lo, hi = bootstrap_ci(agent, human, 1000, seed=1)
    assert lo < kappa < hi
    assert cohen_kappa(np.zeros(5, bool), np.zeros(5, bool)) is None  # both raters constant: undefined


@pytest.fixture
def own_db(migrated_database) -> Database:
    """A database of its own: gold sheets are global by name, so another module's `review_round` sheet in the shared
    session database would change this calibration."""
    return Database(migrated_database("bp_calibration"))


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_calibration_makes_low_kappa_agents_advisory_and_the_policy_follows(own_db, tmp_path: Path) -> None:
    db = own_db
    spec = audit_spec("audit_calibrated")
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    first = asyncio.run(audit_discipline(db, spec, "regions", StaticEmbedder()))
    assert any("A1_lexical_hygiene" in a.reason for a in first.actions if a.action == "drop")
    # humans rate the stored items: A1 flags item 5 for vague language, humans find item 0 vague instead
    sheet = tmp_path / "review_round.csv"
    sheet.write_text(
        "item_id,question_text,options,correct_answer,no_vague_language,reviewer\n"
        + "".join(
            f"{i},q,\"['a','b']\",A,{0 if n == 0 else 1},{who}\n" for n, i in enumerate(ids) for who in ("r1", "r2")
        )
    )
    gold = read_gold_sheet(sheet)
    store_gold_sheet(db, gold)
    rows = asyncio.run(calibrate_spec(db, spec, StaticEmbedder()))
    a1 = next(r for r in rows if r.agent == "A1_lexical_hygiene")
    assert (a1.rubric, a1.n, a1.advisory) == ("no_vague_language", len(ids), True) and a1.kappa < 0.6
    assert (
        db.scalar(
            "SELECT advisory FROM audit_calibrations WHERE spec = %s AND agent = 'A1_lexical_hygiene'", (spec.name,)
        )
        is True
    )
    add_fact(db, spec.name, "regions", "Burgundy lies in eastern France.", [ids[5]])  # a new run of the policy
    second = asyncio.run(audit_discipline(db, spec, "regions", StaticEmbedder()))
    drop = next(a for a in second.actions if a.item_id == ids[5] and a.action == "drop")
    assert drop.detail["agents"] == ["B3_ubiquity_risk"] and drop.detail["advisory_failures"] == ["A1_lexical_hygiene"]


def test_kappa_report_on_the_shared_gold_sheets(shared_data: Path, wine_spec) -> None:
    """The real-data check: every agent that needs no frontier model on the 128 rated OenoBench questions."""
    oeno = shared_data / "oenobench"
    paths = sorted((oeno / "gold_sheets_scored").glob("*.csv"))
    rows, advisory = asyncio.run(
        sheet_kappa_report(paths, wine_spec, StaticEmbedder(), oeno / "reference" / "human_reference_v1.jsonl")
    )
    print("\n" + report_markdown(rows, wine_spec.audit.kappa_advisory_below))
    by = {(r.agent, r.rubric): r for r in rows}
    assert by[("A1_lexical_hygiene", "no_vague_language")].n == 128
    assert by[("A3_fact_echo", "source_faithful")].n == 128
    assert by[("B3_ubiquity_risk", "not_ambiguous")].human_defects == 22
    # verbatim_copy and wine_category_leak are blank in every sheet: no kappa can be computed against them
    assert ("A3_fact_echo", "verbatim_copy") not in by and ("C2_category_leak", "wine_category_leak") not in by
    # agreement with the human rubric is poor for every lexical agent: all of them end up advisory
    assert {"A1_lexical_hygiene", "A3_fact_echo", "B3_ubiquity_risk"} <= advisory
