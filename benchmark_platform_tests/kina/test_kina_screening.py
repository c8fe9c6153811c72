"""KINA stage 1 (K1-K3) as the kina_mmlu_pro spec configures it: a flagship with no recorded answer counts as not
answering correctly, so K3 drops an item three of the five answer correctly whatever the gaps; the per-subfield
screening counts the audit asset reports."""

from __future__ import annotations

import asyncio

from benchmark_platform.audit.agents import AuditItem
from benchmark_platform.audit.config import AuditConfig, KinaScreening
from benchmark_platform.audit.findings import run_audit
from benchmark_platform.audit.pool import Answer, AuditContext, kina_screening_counts
from benchmark_platform.embed import StaticEmbedder

FLAGSHIPS = ["f1", "f2", "f3", "f4", "f5"]


def item(item_id: str, question: str, options: tuple[str, ...] = ("alpha", "beta", "gamma", "delta")) -> AuditItem:
    return AuditItem(item_id, question, options, 0, (), 4)


QUESTIONS = {
    "easy": "Which enzyme unwinds the DNA double helix at the replication fork?",
    "hard": "Under the Statute of Frauds, which contract must be evidenced in writing?",
    "gap_easy": "What is the Laplace transform of a unit step delayed by two seconds?",
    "gap_hard": "Which Roman emperor divided the empire into the tetrarchy?",
}

# (correct flagships, flagships with no answer) per item
PATTERNS = {
    "easy": (["f1", "f2", "f3"], []),  # 3 of 5 right: dropped
    "hard": (["f1", "f2"], []),  # 2 of 5 right: screened in
    "gap_easy": (["f1", "f2", "f3"], ["f4"]),  # 3 right, one silent: dropped either way
    "gap_hard": (["f1"], ["f4", "f5"]),  # 1 right, 2 wrong, 2 silent: 4 not correct
}


def answers() -> list[Answer]:
    out = []
    for item_id, (right, silent) in PATTERNS.items():
        out += [Answer(item_id, m, m, m in right) for m in FLAGSHIPS if m not in silent]
    return out


def k3(unanswered_counts_wrong: bool) -> dict[str, tuple[str, dict]]:
    config = AuditConfig(kina=KinaScreening(flagships=FLAGSHIPS, unanswered_counts_wrong=unanswered_counts_wrong))
    items = [item(i, QUESTIONS[i]) for i in PATTERNS]
    out = asyncio.run(run_audit(items, AuditContext(config, StaticEmbedder(), answers=answers())))
    return {f.item_id: (f.severity, f.payload) for f in out.findings if f.agent == "K3_flagship_difficulty"}


def test_k3_drops_what_three_of_five_flagships_answer_correctly() -> None:
    verdicts = k3(unanswered_counts_wrong=True)
    assert {i: s for i, (s, _) in verdicts.items()} == {
        "easy": "fail",
        "hard": "pass",
        "gap_easy": "fail",
        "gap_hard": "pass",
    }
    assert verdicts["gap_hard"][1] == {"flagships_answered": 3, "flagships_wrong": 4, "flagships_unanswered": 2}


def test_without_the_setting_a_gap_only_warns() -> None:
    verdicts = k3(unanswered_counts_wrong=False)
    assert verdicts["gap_easy"][0] == "warn" and verdicts["gap_hard"][0] == "warn"  # 4 and 3 of 5 answered
    assert verdicts["easy"][0] == "fail" and verdicts["hard"][0] == "pass"
    assert "flagships_unanswered" not in verdicts["hard"][1]


def test_screening_counts_per_subfield() -> None:
    config = AuditConfig(kina=KinaScreening(flagships=FLAGSHIPS, unanswered_counts_wrong=True))
    items = [item(i, QUESTIONS[i]) for i in PATTERNS]
    items.append(item("twin", QUESTIONS["hard"]))  # K1: a copy of 'hard' (the later one fails)
    items.append(item("opts", "How many moons does Mars have?", ("two", "two", "one", "none")))  # duplicate options
    out = asyncio.run(run_audit(items, AuditContext(config, StaticEmbedder(), answers=answers())))
    counts = kina_screening_counts(out.findings)
    k1 = {f.item_id for f in out.findings if f.agent == "K1_uniqueness" and f.severity == "fail"}
    assert k1 == {"twin", "opts"}
    # 'twin' and 'opts' have no flagship answers: all five count as not correct, so K3 lets them through
    assert counts == {"audited": 6, "dropped_k1": 2, "dropped_k2": 0, "dropped_k3": 2, "screened_in": 2}
