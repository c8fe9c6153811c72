"""G1 grounding (issue 24) on items generated from the real wine snapshot's facts: every option of every item is
proven by stored facts; an option whose proof is missing, a distractor that a fact makes right, a false statement
without a contradicting fact and a slot of the wrong type are unproven, and the policy drops them with the reason."""

from __future__ import annotations

import dataclasses

import pytest

from benchmark_platform.audit.agents import G1_GROUNDING, AuditItem
from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.audit.grounding import Grounding, verify
from benchmark_platform.audit.persist import load_audit_items
from benchmark_platform.audit.policy import apply_policy
from benchmark_platform.spec import load_spec

from .conftest import DISCIPLINES, generate_items

pytestmark = pytest.mark.slow  # the `prepared` database: ingest to selection of two disciplines (~20 s)


@pytest.fixture(scope="module")
def audited(prepared) -> list[AuditItem]:
    spec = load_spec("wine")
    items = []
    for discipline in DISCIPLINES:
        generate_items(prepared, spec, discipline)
        items += load_audit_items(prepared, spec.name, discipline)
    return items


def _by(items: list[AuditItem], **claim: str) -> AuditItem:
    for item in items:
        g = item.grounding
        if g is not None and all(g.claim.get(k) == v for k, v in claim.items()):
            return item
    raise AssertionError(f"no generated item with {claim}")


def _with(item: AuditItem, **changes: object) -> AuditItem:
    assert item.grounding is not None
    return dataclasses.replace(item, grounding=dataclasses.replace(item.grounding, **changes))


def _verdict(item: AuditItem) -> tuple[str, dict]:
    assert item.grounding is not None
    return verify(item.question, item.options, item.answer_index, item.grounding)


def test_every_generated_option_is_proven_by_stored_facts(audited):
    assert len(audited) > 100
    asks = set()
    for item in audited:
        severity, payload = _verdict(item)
        assert (severity, payload["status"]) == ("pass", "proven"), (item.question, payload)
        assert len(payload["facts"]) == len(item.options) and all(payload["facts"])
        assert item.grounding is not None
        asks.add(item.grounding.claim["ask"])
    assert {"value", "subject", "statements"} <= asks


def test_an_option_without_a_proving_fact_is_dropped_with_the_reason(audited):
    item = _by(audited, ask="value")
    assert item.grounding is not None
    wrong = next(i for i in range(len(item.options)) if i != item.answer_index)
    proofs = tuple(() if i == wrong else p for i, p in enumerate(item.grounding.option_facts))
    broken = _with(item, option_facts=proofs)
    severity, payload = _verdict(broken)
    assert severity == "fail" and payload["reason"] == "no proof"
    finding = G1_GROUNDING.run(broken, AuditConfig())
    assert finding is not None
    [action] = apply_policy([finding], AuditConfig())
    assert action.action == "drop" and "G1_grounding" in action.reason


def test_a_distractor_that_a_stored_fact_makes_right_is_unproven(audited):
    """Absence is no proof: a distractor offered as wrong while the subject's own facts give it that value."""
    item = _by(audited, ask="value")
    assert item.grounding is not None
    wrong = next(i for i in range(len(item.options)) if i != item.answer_index)
    key_value = item.options[item.answer_index]
    options = tuple(key_value + " " if i == wrong else o for i, o in enumerate(item.options))
    severity, payload = _verdict(dataclasses.replace(item, options=options))
    assert severity == "fail" and any("also right" in r for r in payload["reasons"]), payload


def test_a_false_statement_needs_a_contradicting_fact(audited):
    item = _by(audited, ask="statements")
    assert item.grounding is not None
    statements = [dict(s) for s in item.grounding.claim["statements"]]
    false = next(s for s in statements if not s["true"])
    false["claim"] = [false["claim"][0], false["claim"][1], "a value nobody stated"]
    ok, _ = _verdict(_with(item, claim={**item.grounding.claim, "statements": statements}))
    assert ok == "pass"  # contradicted: the subject's facts of that field give other values
    false["claim"] = ["an entity without facts", false["claim"][1], "anything"]
    severity, payload = _verdict(_with(item, claim={**item.grounding.claim, "statements": statements}))
    assert severity == "fail" and "contradicts" in payload["reasons"][0]


def test_a_slot_of_the_wrong_type_is_rejected(audited):
    item = _by(audited, ask="value")
    assert item.grounding is not None
    slot = item.grounding.claim["slot_type"]
    types = [slot if i != 1 else ("county" if slot == "city" else "city") for i in range(len(item.options))]
    claim = {**item.grounding.claim, "option_types": types}
    severity, payload = _verdict(_with(item, claim=claim))
    assert severity == "fail" and payload["reason"] == "type mismatch"
    # a cloze stem that names another type than its blank's (issue 24: an AVA asked for, cities offered)
    cloze = next(i for i in audited if i.question.startswith("Which ") and "completes the statement" in i.question)
    assert cloze.grounding is not None
    relabelled = dataclasses.replace(
        cloze, question="Which city completes the statement" + cloze.question.split("completes the statement", 1)[1]
    )
    severity, payload = _verdict(relabelled)
    assert severity == "fail" and any("the stem asks for a city" in r for r in payload["reasons"]), payload


def test_item_banks_are_not_applicable_and_model_written_items_go_to_the_judges():
    assert verify("Q?", ("a", "b", "c", "d"), 0, Grounding("imported")) == (
        "pass",
        {"status": "not_applicable", "reason": "imported item bank: no stored facts to prove from"},
    )
    severity, payload = verify("Q?", ("a", "b", "c", "d"), 0, Grounding("llm"))
    assert severity == "warn" and payload["status"] == "llm_judged"
