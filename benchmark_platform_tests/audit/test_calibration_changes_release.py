"""Issue 31: calibration changes what ships. Gold labels imported after an audit, under which an agent's kappa falls
below the threshold, make the next audit a new run (the calibration is part of its digest) whose policy turns that
agent's drops into advisory notes, and the release's audit actions change with it."""

from __future__ import annotations

import asyncio
import csv
import json
from pathlib import Path

from benchmark_platform.audit.calibration import read_gold_sheet
from benchmark_platform.audit.persist import store_gold_sheets
from benchmark_platform.audit.run import audit_discipline, calibrate_spec, pending_audit
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.release.persist import RELEASE_QUERIES, _read, query_params
from benchmark_platform_tests.audit.corpus import audit_spec, seed_corpus

EMBEDDER = StaticEmbedder()
A1 = "A1_lexical_hygiene"

# A rater who disagrees with A1 on every item: the stems A1 flags as vague are rated fine (1), the plain ones as
# vague (0), so A1's kappa on its rubric (no_vague_language) is -1.
GOLD = [
    ("g1", "Which famous grape is typically grown in many regions?", 1),
    ("g2", "Which famous wine region is generally the best?", 1),
    ("g3", "Which various styles are often made from Riesling?", 1),
    ("g4", "Which grape is the principal red grape of Barolo?", 0),
    ("g5", "In which year was the Napa Valley AVA established?", 0),
    ("g6", "Which county contains the Atlas Peak AVA?", 0),
]


def write_gold_sheet(path: Path) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["item_id", "question_text", "options", "correct_answer", "source_fact", "no_vague_language"])
        for ref, question, rating in GOLD:
            writer.writerow([ref, question, json.dumps(["a", "b", "c", "d"]), "A", "A fact.", rating])
    return path


def release_actions(db, spec) -> dict[str, list[str]]:
    frame = _read(db, RELEASE_QUERIES["audit_actions"].sql, query_params(spec))
    out: dict[str, list[str]] = {}
    for item, action in frame.select("item_id", "action").sort("item_id").iter_rows():
        out.setdefault(action, []).append(item)
    return out


def test_gold_labels_making_an_agent_advisory_turn_its_drops_into_notes(db, tmp_path: Path) -> None:
    sheet = write_gold_sheet(tmp_path / "issue31_a1_gold.csv")
    # B3 (ubiquity risk) also fails the Chardonnay item; not critical here, so that A1 alone drops it
    critical = [a for a in audit_spec("x").audit.critical if a != "B3_ubiquity_risk"]
    spec = audit_spec("audit_calibration_ships", gold_sheets=[sheet.stem], critical=critical)
    ids = seed_corpus(db, spec.name, ("regions",))["regions"]
    vague = ids[5]  # "Which famous region is known for Chardonnay in many styles?"

    first = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    dropped = {a.item_id: a for a in first.actions if a.action == "drop"}
    assert dropped[vague].detail["agents"] == [A1]
    before = release_actions(db, spec)
    assert vague in before["drop"] and "advise" not in before
    assert pending_audit(db, spec, "regions") is None  # nothing changed yet

    store_gold_sheets(db, [read_gold_sheet(sheet)])
    rows = asyncio.run(calibrate_spec(db, spec, EMBEDDER))
    [a1] = [r for r in rows if r.agent == A1 and r.is_primary]
    assert a1.kappa is not None and a1.kappa < spec.audit.kappa_advisory_below and a1.advisory

    pending = pending_audit(db, spec, "regions")  # the re-audit sensor sees the new calibration
    assert pending is not None and pending.trigger == "calibration" and pending.stale_items == []
    second = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert second.new_run and second.audit_run_id != first.audit_run_id
    assert second.outcome.rejudged_items == set()  # findings carried over; only the policy is re-applied
    after = release_actions(db, spec)
    assert vague not in after.get("drop", []) and vague in after["advise"]
    [note] = [a for a in second.actions if a.item_id == vague and a.action == "advise"]
    assert note.detail["advisory_failures"] == [A1]
    assert len(after.get("drop", [])) < len(before["drop"])
    # the same inputs again reuse the run: calibration alone, unchanged, requests nothing
    assert pending_audit(db, spec, "regions") is None
    third = asyncio.run(audit_discipline(db, spec, "regions", EMBEDDER))
    assert not third.new_run and third.audit_run_id == second.audit_run_id
