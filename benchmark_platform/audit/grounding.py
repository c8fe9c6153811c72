"""G1 grounding (issue 24): every option's truth value, as the key asserts it, follows from stored facts.

Generation records, per option, the fact ids that prove it (`item_option_facts`) and the claim the stem makes
(`generation_metadata.parameters.grounding`: the field asked, the subject or value, the type of the blank and of each
option). The verifier re-derives every option's truth value from those facts alone:

- ask 'value' (which value has S?): the key is a fact (S, F, key); a distractor d is ruled out by S's facts of F,
  none with value d (same entity, same attribute, other values), and is typed by a fact that has d as F.
- ask 'subject' (which entity has V?): the key is a fact (key, F, V); a distractor's own facts of F lack V.
- ask 'negative' (three have V, which does not?): a fact (d, F, V) for each distractor; the key's facts of F lack V.
- ask 'highest' / 'lowest': one numeric fact of F per option; the key's is strictly above (below) every other.
- pseudo-MCQ statements: a true statement is a fact's text; a false one (S, F, v) is contradicted by S's facts of F,
  none with v; the key is exactly the set of true statements.

Absence is never a proof: an option without a fact is unproven. Options must have the blank's type (a city is no
AVA), a raw multi-value field ('A|B') is no option, and a cloze stem names the blank's type. Imported item banks
have no facts (not applicable); LLM-written items go to the judges (B1) and the review queue instead.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from benchmark_platform.generation import MULTI_VALUE, norm, numeric, type_label, value_type
from benchmark_platform.generation.config import DETERMINISTIC

AGENT, VERSION = "G1_grounding", "1"
Kind = Literal["facts", "llm", "imported"]


@dataclass(frozen=True)
class ProofFact:
    fact_id: str
    text: str
    subject: str | None = None
    field: str | None = None
    value: str | None = None
    entity_type: str | None = None


@dataclass(frozen=True)
class Grounding:
    """What G1 reads of one item: how it was written, the stem's claim, and each option's proving facts."""

    kind: Kind
    claim: Mapping[str, Any] = field(default_factory=dict)
    option_facts: tuple[tuple[ProofFact, ...], ...] = ()

    @property
    def digest(self) -> str:
        payload = [self.kind, self.claim, [[vars(f) for f in o] for o in self.option_facts]]
        return hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


def from_generation(
    parameters: Mapping[str, Any] | None,
    option_facts: Sequence[Sequence[ProofFact]],
    generator: str | None,
    imported: bool,
) -> Grounding:
    """G1's input for a stored item: imported bank items have no facts; items a model wrote go to the judges; the
    rest carry generation's claim (parameters.grounding, and a pseudo-MCQ's statements and option sets)."""
    if imported:
        return Grounding("imported")
    if generator is not None and generator != DETERMINISTIC:
        return Grounding("llm")
    parameters = parameters or {}
    claim = {
        **parameters.get("grounding", {}),
        **{k: parameters[k] for k in ("statements", "option_sets") if k in parameters},
    }
    return Grounding("facts", claim, tuple(tuple(o) for o in option_facts))


Verdict = tuple[Literal["pass", "warn", "fail"], dict[str, Any]]


def verify(question: str, options: tuple[str, ...], answer_index: int, grounding: Grounding) -> Verdict:
    if grounding.kind == "imported":
        return "pass", {"status": "not_applicable", "reason": "imported item bank: no stored facts to prove from"}
    if grounding.kind == "llm":
        return "warn", {"status": "llm_judged", "reason": "LLM-written: answer checked by the judges and reviewers"}
    fact_ids = [[f.fact_id for f in o] for o in grounding.option_facts]
    reasons = _reasons(question, options, answer_index, grounding)
    if reasons:
        return "fail", {"status": "unproven", "reason": reasons[0].split(":")[0], "reasons": reasons, "facts": fact_ids}
    return "pass", {"status": "proven", "facts": fact_ids}


def _reasons(question: str, options: tuple[str, ...], answer_index: int, g: Grounding) -> list[str]:
    claim = g.claim
    ask = claim.get("ask")
    if not ask:
        return ["no claim: generation recorded no grounding claim"]
    if len(g.option_facts) != len(options) or not 0 <= answer_index < len(options):
        return [f"no proof: {len(g.option_facts)} proofs for {len(options)} options"]
    missing = [_letter(i) for i, proof in enumerate(g.option_facts) if not proof]
    if missing:
        return [f"no proof: option(s) {', '.join(missing)} without a proving fact"]
    types = _type_problems(question, options, g)
    if types:
        return types
    if ask == "statements":
        return _statements(options, answer_index, g)
    check = {"value": _value, "subject": _subject, "negative": _negative, "highest": _extreme, "lowest": _extreme}
    if ask not in check:
        return [f"no claim: unknown ask {ask!r}"]
    return [
        f"unproven: option {_letter(i)} ({option!r}): {problem}"
        for i, option in enumerate(options)
        if (problem := check[ask](claim, option, i == answer_index, g.option_facts[i], g)) is not None
    ]


def _letter(i: int) -> str:
    return "ABCDEFGHIJ"[i] if i < 10 else str(i)


def _type_problems(question: str, options: tuple[str, ...], g: Grounding) -> list[str]:
    slot = g.claim.get("slot_type", "")
    declared = list(g.claim.get("option_types", []))
    problems = [
        f"type mismatch: option {_letter(i)} is a {t}, the blank a {slot}" for i, t in enumerate(declared) if t != slot
    ]
    if len(declared) != len(options):
        problems.append(f"type mismatch: {len(declared)} option types for {len(options)} options")
    if g.claim.get("ask") == "statements":
        return problems
    problems += [
        f"type mismatch: option {_letter(i)} is a raw multi-value field"
        for i, o in enumerate(options)
        if MULTI_VALUE in o
    ]
    field_name, entity_type = g.claim.get("field"), g.claim.get("entity_type")
    expected = value_type(field_name or "") if g.claim["ask"] == "value" else entity_type
    if slot != expected:
        problems.append(f"type mismatch: the blank is a {expected}, the item says {slot}")
    for i, proof in enumerate(g.option_facts):
        if any(f.field != field_name or f.entity_type != entity_type for f in proof):
            problems.append(f"type mismatch: option {_letter(i)} is proven by another field or entity type")
    label = re.match(r"Which (.+?) completes the statement", question)
    if label and label.group(1) != type_label(slot):
        problems.append(f"type mismatch: the stem asks for a {label.group(1)}, the blank is a {type_label(slot)}")
    return problems


def _values(proof: tuple[ProofFact, ...], subject: str) -> set[str]:
    return {norm(f.value or "") for f in proof if norm(f.subject or "") == norm(subject)}


def _value(claim: Mapping[str, Any], option: str, key: bool, proof: tuple[ProofFact, ...], _: Grounding) -> str | None:
    subject = claim.get("subject") or ""
    own = _values(proof, subject)
    if key:
        return None if norm(option) in own else f"no fact gives {subject} this value"
    if not own:
        return f"no fact of {subject} contradicts it"
    if norm(option) in own:
        return f"a fact gives {subject} this value: it is also right"
    if not any(norm(f.value or "") == norm(option) for f in proof):
        return "no fact has it as a value of the field (its type is unproven)"
    return None


def _subject(
    claim: Mapping[str, Any], option: str, key: bool, proof: tuple[ProofFact, ...], _: Grounding
) -> str | None:
    value = norm(claim.get("value") or "")
    own = _values(proof, option)
    if key:
        return None if value in own else "no fact gives it the asked value"
    if not own:
        return "no fact of it rules it out"
    return "a fact gives it the asked value: it is also right" if value in own else None


def _negative(
    claim: Mapping[str, Any], option: str, key: bool, proof: tuple[ProofFact, ...], g: Grounding
) -> str | None:
    return _subject(claim, option, not key, proof, g)  # the key lacks the value, the others have it


def _extreme(
    claim: Mapping[str, Any], option: str, key: bool, proof: tuple[ProofFact, ...], g: Grounding
) -> str | None:
    everything = {f.fact_id: f for o in g.option_facts for f in o}.values()
    numbers: dict[str, set[float]] = {}
    for f in everything:
        n = numeric(f.value or "")
        if n is not None:
            numbers.setdefault(norm(f.subject or ""), set()).add(n)
    own = numbers.get(norm(option), set())
    if len(own) != 1:
        return "not exactly one numeric fact of the field"
    (mine,) = own
    key_option = norm(claim.get("subject") or "")
    if len(numbers.get(key_option, set())) != 1:
        return "the key has no single numeric fact"
    (best,) = numbers[key_option]
    if not any(norm(f.subject or "") == norm(option) for f in proof):
        return "its own fact is not among its proof"
    higher = claim["ask"] == "highest"
    if key:
        others = [next(iter(v)) for s, v in numbers.items() if s != key_option]
        beaten = all((best > n) if higher else (best < n) for n in others)
        return None if beaten and others else "its value is not strictly the extreme"
    return None if ((best > mine) if higher else (best < mine)) else "its value is not beaten by the key's"


def _statements(options: tuple[str, ...], answer_index: int, g: Grounding) -> list[str]:
    statements = g.claim.get("statements", [])
    facts = {f.fact_id: f for o in g.option_facts for f in o}
    reasons = []
    for n, s in enumerate(statements, start=1):
        sources = [facts[i] for i in s.get("sources", []) if i in facts]
        if not sources:
            reasons.append(f"no proof: statement {n} has no proving fact among the options' facts")
        elif s.get("true"):
            if not any(norm(f.text) == norm(s["text"]) for f in sources):
                reasons.append(f"unproven: statement {n} is keyed true but no fact states it")
        else:
            claim = s.get("claim")
            if not claim:
                reasons.append(f"unproven: statement {n} is keyed false without a claim to contradict")
                continue
            subject, field_name, asserted = claim
            same = [f for f in sources if norm(f.subject or "") == norm(subject) and f.field == field_name]
            if not same:
                reasons.append(f"unproven: statement {n} is keyed false but no fact of {subject} contradicts it")
            elif any(norm(f.value or "") == norm(asserted) for f in same) or MULTI_VALUE in asserted:
                reasons.append(f"unproven: statement {n} is keyed false but a fact states it (or it is not one value)")
    truth = sorted(n for n, s in enumerate(statements) if s.get("true"))
    sets = g.claim.get("option_sets", [])
    if len(sets) != len(options) or sorted(sets[answer_index]) != truth:
        reasons.append("unproven: the key is not exactly the set of true statements")
    elif sum(sorted(o) == truth for o in sets) != 1:
        reasons.append("unproven: more than one option is the set of true statements")
    return reasons
