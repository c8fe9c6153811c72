"""Deterministic and pool-level agents on hand-made items and on real OenoBench questions."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from benchmark_platform.audit.agents import (
    A1_LEXICAL_HYGIENE,
    A3_FACT_ECHO,
    B3_UBIQUITY_RISK,
    C2_CATEGORY_LEAK,
    STRUCTURE,
    AuditItem,
    latex_problems,
    longest_common_substring_ratio,
)
from benchmark_platform.audit.calibration import read_gold_sheet
from benchmark_platform.audit.config import AuditConfig, KinaScreening
from benchmark_platform.audit.findings import run_audit
from benchmark_platform.audit.grounding import Grounding
from benchmark_platform.audit.pool import (
    A2_BIAS_STATS,
    A4_TEMPLATE_FINGERPRINT,
    D2_DEDUP_CALIBRATION,
    D3_SKEW_AUDIT,
    Answer,
    AuditContext,
    load_human_reference,
    nearest_earlier,
)
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.embed.exact import integer_rows, similarities

CONFIG = AuditConfig()


def item(question: str, options=("a", "b", "c", "d"), answer: int = 0, facts=(), **kw) -> AuditItem:
    return AuditItem(kw.pop("item_id", question[:20]), question, tuple(options), answer, tuple(facts), 4, **kw)


def test_fact_echo_fails_at_065_of_the_question_as_one_verbatim_run() -> None:
    fact = "The Napa Valley AVA was established in 1981 by the federal government."
    copied = item("The Napa Valley AVA was established in which year?", facts=[fact])
    ratio = longest_common_substring_ratio(copied.question, fact)
    assert ratio >= 0.65 and A3_FACT_ECHO.run(copied, CONFIG).severity == "fail"
    rephrased = item("In what year did Napa Valley receive its AVA status?", facts=[fact])
    assert A3_FACT_ECHO.run(rephrased, CONFIG).severity == "pass"


def test_item_agents() -> None:
    assert A1_LEXICAL_HYGIENE.run(item("Which famous grape is often used in Chablis?"), CONFIG).payload[
        "vague_terms"
    ] == ["famous", "often"]
    # a count or the option that fits best is a precise question; a vague word outside those phrases still fails
    assert A1_LEXICAL_HYGIENE.run(item("How many hectares does Chablis cover?"), CONFIG).severity == "pass"
    assert A1_LEXICAL_HYGIENE.run(item("Which option best describes Chablis?"), CONFIG).severity == "pass"
    assert A1_LEXICAL_HYGIENE.run(item("How many grapes are best in many wines?"), CONFIG).payload["vague_terms"] == [
        "best",
        "many",
    ]
    assert STRUCTURE.run(item("Q?", options=("x", "X ", "y", "z")), CONFIG).payload["problems"] == ["duplicate options"]
    assert B3_UBIQUITY_RISK.run(item("In which region is Chardonnay grown?"), CONFIG).severity == "fail"
    assert B3_UBIQUITY_RISK.run(item("In which region is Xinomavro grown?"), CONFIG).severity == "pass"
    leak = item("Which sparkling wine is made in Catalonia?", options=("Cava", "Rioja red wine", "Barolo", "Port"))
    assert C2_CATEGORY_LEAK.run(leak, CONFIG).payload["leaked_categories"] == ["sparkling"]
    fair = item("Which sparkling wine is made in Catalonia?", options=("Cava", "Prosecco", "Champagne", "Sekt"))
    assert C2_CATEGORY_LEAK.run(fair, CONFIG).severity == "pass"


def test_latex_checked_by_a_real_parser() -> None:
    assert latex_problems(r"Let $x^{2} + \alpha$ and $$\sum_{i=1}^{n} i$$ cost \$5.") == []
    assert latex_problems(r"Let $\frac{a}{b$.")[0].startswith("$\\frac{a}{b$")
    assert "Unknown symbol" in latex_problems(r"Let $\foo{x}$.")[0]
    assert latex_problems("costs $5 today") == []  # an amount, not a formula
    assert latex_problems(r"let $\alpha + 1 be") == ["unbalanced $"]


def test_bias_stats_detects_position_and_length_skew() -> None:
    skewed = [
        item(f"Q{n}?", options=("a much longer correct option", "b", "c", "d"), item_id=f"i{n}") for n in range(30)
    ]
    result = A2_BIAS_STATS.run(skewed, AuditContext(CONFIG))
    severity, payload = result.corpus
    assert severity == "warn" and payload["position_skew"] and payload["length_skew"]
    assert {f.severity for f in result.findings} == {"warn"}
    rng = np.random.default_rng(0)
    balanced = [
        item(f"Q{n}?", options=("aa", "bb", "cc", "dd"), answer=int(rng.integers(4)), item_id=f"i{n}")
        for n in range(200)
    ]
    assert A2_BIAS_STATS.run(balanced, AuditContext(CONFIG)).corpus[0] == "pass"


def test_skew_dedup_and_escalation_gates() -> None:
    items = [
        item(f"Which appellation of Burgundy grows grape number {n}?", group="burgundy", item_id=f"b{n}")
        for n in range(20)
    ]
    items += [
        item("Which river flows through the Mosel?", group="mosel", item_id="m1"),
        item("Which river flows through the Mosel?", group="mosel", item_id="m2"),
    ]
    ctx = AuditContext(CONFIG, StaticEmbedder())
    out = asyncio.run(run_audit(items, ctx))
    assert out.corpus[(D3_SKEW_AUDIT.name, "1")][1]["over_represented"] == ["burgundy"]
    dedup = {f.item_id: f for f in out.findings if f.agent == D2_DEDUP_CALIBRATION.name}
    assert dedup["m2"].severity == "fail" and dedup["m2"].payload["nearest"] == "m1"  # the earlier one is kept
    assert dedup["m1"].severity == "pass"
    skipped = {a for a, _ in out.skipped}
    assert "C1_distractor_difficulty" in skipped  # A2 saw no length skew
    assert "B1_tri_judge_answer" in skipped  # no judges: skipped, never a pass


def test_nearest_earlier_is_blockwise_exact() -> None:
    rng = np.random.default_rng(1)
    v = rng.normal(size=(2100, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    grid = integer_rows(v)
    best, cos = nearest_earlier(grid)
    sims = v.astype(np.float64) @ v.T.astype(np.float64)
    exact = similarities(grid, grid)
    for k in (1, 1023, 1024, 2099):
        assert best[k] == int(np.argmax(exact[k, :k])) and cos[k] == exact[k, :k].max()
        assert cos[k] == pytest.approx(sims[k, :k].max(), abs=1e-5)
    assert best[0] == -1


def test_self_preference_and_flagship_difficulty_from_answers() -> None:
    items = [item(f"Q{n}?", item_id=f"q{n}", generator="gen_a" if n < 5 else "gen_b") for n in range(10)]
    answers = [Answer(f"q{n}", "model_a", "fam_a", n < 5) for n in range(10)]
    kina = AuditConfig(kina=KinaScreening(flagships=["model_a"], min_flagships_answered=1, min_flagships_wrong=1))
    ctx = AuditContext(kina, StaticEmbedder(), answers=answers, generator_families={"gen_a": "fam_a"})
    out = asyncio.run(run_audit(items, ctx))
    assert out.corpus[("D1_self_preference", "1")][1]["own_minus_other_pp"] == {"fam_a": 100.0}
    k3 = {f.item_id: f.severity for f in out.findings if f.agent == "K3_flagship_difficulty"}
    assert k3["q0"] == "fail" and k3["q9"] == "pass"


def test_template_fingerprint_on_real_questions(shared_data) -> None:
    """A4 on the scored gold sheets (template vs LLM-written) with human-written negatives; held-out AUC."""
    oeno = shared_data / "oenobench"
    items = [i for p in sorted((oeno / "gold_sheets_scored").glob("*.csv")) for i in read_gold_sheet(p).items]
    human = load_human_reference(oeno / "reference" / "human_reference_v1.jsonl")
    result = A4_TEMPLATE_FINGERPRINT.run(items, AuditContext(CONFIG, human_reference=human))
    payload = result.corpus[1]
    assert payload["negatives"] == len(human) == 104 and payload["positives"] >= 10
    assert payload["heldout_auc"] > 0.8  # template style is recognisable from POS bigrams alone
    assert len(result.findings) == len(items)


def test_deterministic_items_duplicate_only_by_the_same_stem() -> None:
    """Template items differ by one name ('the Pomerol AOC' / 'the Buzet AOC'): an embedding calls them duplicates,
    D2 compares them by their stem; LLM-written items keep the embedding test."""
    template = [
        item(f"What base yield does the rulebook set for {name}?", item_id=f"t{i}", generator="deterministic")
        for i, name in enumerate(("Pomerol", "Buzet", "Volnay", "Fitou", "Pomerol"))
    ]
    written = [
        item("Which river flows through the Mosel?", item_id="m1", generator="gen0"),
        item("Which river flows through the Mosel?", item_id="m2", generator="gen0"),
    ]
    out = asyncio.run(run_audit([*template, *written], AuditContext(CONFIG, StaticEmbedder())))
    dedup = {f.item_id: f for f in out.findings if f.agent == D2_DEDUP_CALIBRATION.name}
    assert [dedup[f"t{i}"].severity for i in range(5)] == ["pass", "pass", "pass", "pass", "fail"]
    assert dedup["t4"].payload["nearest"] == "t0"
    assert dedup["m2"].severity == "fail" and dedup["m1"].severity == "pass"


def test_a_comparison_over_other_entities_is_another_question() -> None:
    """'Which of these departements declared the most red AOP wine?' asks another question with other options; the
    same comparison with the same options (in any order) is a duplicate, and a cloze stem stays one question whatever
    its options (two answers to one statement would contradict each other)."""
    stem = "Which of these departements declared the most red AOP wine in the 2016 harvest?"
    most = Grounding("facts", {"ask": "highest"})
    cloze = Grounding("facts", {"ask": "subject"})
    items = [
        item(stem, ("Gironde", "Aude", "Gard", "Var"), item_id="c0", generator="deterministic", grounding=most),
        item(stem, ("Marne", "Aude", "Gard", "Var"), item_id="c1", generator="deterministic", grounding=most),
        item(stem, ("Var", "Gard", "Aude", "Gironde"), item_id="c2", generator="deterministic", grounding=most),
        item(
            "Which declared 0 ha?", ("Cantal", "a", "b", "c"), item_id="z0", generator="deterministic", grounding=cloze
        ),
        item(
            "Which declared 0 ha?", ("Lozere", "d", "e", "f"), item_id="z1", generator="deterministic", grounding=cloze
        ),
    ]
    out = asyncio.run(run_audit(items, AuditContext(CONFIG, StaticEmbedder())))
    dedup = {f.item_id: f for f in out.findings if f.agent == D2_DEDUP_CALIBRATION.name}
    assert {i: f.severity for i, f in dedup.items()} == {
        "c0": "pass",
        "c1": "pass",
        "c2": "fail",
        "z0": "pass",
        "z1": "fail",
    }
    assert dedup["c2"].payload["nearest"] == "c0" and dedup["c2"].payload["compared"] == "exact stem and options"


def test_s1_fails_identifier_answers_and_stems_and_passes_knowledge() -> None:
    from benchmark_platform.audit.agents import S1_SALIENCE

    def verdict(question: str, key: str) -> str:
        return S1_SALIENCE.run(item(question, (key, "x", "y", "z")), CONFIG).severity

    assert verdict("Which section of 27 CFR part 9 sets out the Atlas Peak AVA?", "9.140") == "fail"
    assert verdict("On what date did TTB establish the Rockpile AVA?", "2002-02-27") == "fail"
    assert verdict("Which permittee holds this permit?", "PA-W-21084") == "fail"
    assert verdict("Which permittee holds TTB permit PA-W-21084 in GRANTVILLE?", "GRANTVILLE WINERY") == "fail"
    assert verdict("What base yield does the rulebook set for Pomerol?", "49 hl/ha") == "pass"
    assert verdict("What minimum natural alcoholic strength must Pomerol reach?", "11%") == "pass"
    assert verdict("Until when must Pomerol be aged?", "1 November of the year after the harvest") == "pass"
