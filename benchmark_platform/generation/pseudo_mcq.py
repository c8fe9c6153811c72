"""KINA's 10-option pseudo-MCQ (KINA 4, E.2.3, E.3.4): a validator, and a deterministic builder from facts.

A stem of at least six statements; exactly ten distinct options, each a combination of statements; no option a
proper subset of another; option sizes balanced (largest minus smallest at most `max_size_spread`); exactly one
option is the set of true statements, and the answer points at it; every option has its own explanation with sources.

The builder takes structured facts of one entity type, keeps some statements as the sources state them and falsifies
the others by substituting another entity's value of the same field; all options have the same size, so no option
can be a proper subset of another.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from benchmark_platform.generation.config import DETERMINISTIC, PseudoMcqConfig
from benchmark_platform.generation.model import Fact, Item, OptionExplanation, content_id, ids, norm, seeded
from benchmark_platform.generation.templates import FieldIndex, near

PROMPT_VERSION = "pseudo-mcq-1"


@dataclass(frozen=True)
class Statement:
    text: str
    true: bool
    sources: tuple[str, ...]  # fact ids
    correction: str = ""  # for a false statement: what the source says
    claim: tuple[str, str, str] | None = None  # a false statement's (subject, field, asserted value), for G1


@dataclass(frozen=True)
class PseudoMcq:
    statements: tuple[Statement, ...]
    options: tuple[frozenset[int], ...]  # 0-based statement indices
    answer_index: int
    explanations: tuple[OptionExplanation, ...]


def validate(item: PseudoMcq, config: PseudoMcqConfig) -> list[str]:
    """Every reason the item breaks the format; empty when it is valid."""
    reasons: list[str] = []
    n = len(item.statements)
    if n < config.statements:
        reasons.append(f"{n} statements in the stem, at least {config.statements} required")
    if len({norm(s.text) for s in item.statements}) != n:
        reasons.append("repeated statements")
    if len(item.options) != config.options:
        reasons.append(f"{len(item.options)} options, exactly {config.options} required")
    if len(set(item.options)) != len(item.options):
        reasons.append("options are not distinct")
    for i, option in enumerate(item.options):
        if not option:
            reasons.append(f"option {i} selects no statement")
        elif min(option) < 0 or max(option) >= n:
            reasons.append(f"option {i} names a statement outside 1..{n}")
    for i, a in enumerate(item.options):
        for j, b in enumerate(item.options):
            if i != j and a < b:
                reasons.append(f"option {i} is a proper subset of option {j}")
    sizes = [len(o) for o in item.options]
    if sizes and max(sizes) - min(sizes) > config.max_size_spread:
        reasons.append(f"unbalanced option sizes {min(sizes)}..{max(sizes)} (spread at most {config.max_size_spread})")
    truth = frozenset(i for i, s in enumerate(item.statements) if s.true)
    correct = [i for i, o in enumerate(item.options) if o == truth]
    if len(correct) != 1:
        reasons.append(f"{len(correct)} options are exactly the true statements, exactly one required")
    elif item.answer_index != correct[0]:
        reasons.append(f"the answer is option {item.answer_index} but option {correct[0]} is correct")
    if len(item.explanations) != len(item.options):
        reasons.append(f"{len(item.explanations)} explanations for {len(item.options)} options")
    for i, e in enumerate(item.explanations):
        if not e.text.strip() or not e.sources:
            reasons.append(f"option {i} lacks an explanation with sources")
    return reasons


def option_text(option: frozenset[int]) -> str:
    numbers = [str(i + 1) for i in sorted(option)]
    return "Statements " + (", ".join(numbers[:-1]) + " and " + numbers[-1] if len(numbers) > 1 else numbers[0])


def stem(statements: tuple[Statement, ...]) -> str:
    lines = [f"{i + 1}. {s.text}" for i, s in enumerate(statements)]
    return "Which option lists exactly the true statements among the following?\n" + "\n".join(lines)


def numbered(noun: str, numbers: list[int]) -> str:
    """'statement 2', 'statements 2 and 4', 'statements 1, 2 and 4' (never 'statement(s)')."""
    if len(numbers) == 1:
        return f"{noun} {numbers[0]}"
    return f"{noun}s {', '.join(map(str, numbers[:-1]))} and {numbers[-1]}"


def explain(statements: tuple[Statement, ...], option: frozenset[int]) -> OptionExplanation:
    parts: list[str] = []
    sources: list[str] = []
    for i in sorted(option):
        s = statements[i]
        parts.append(f"statement {i + 1} is true" if s.true else f"statement {i + 1} is false ({s.correction})")
        sources += s.sources
    missing = [i + 1 for i, s in enumerate(statements) if s.true and i not in option]
    verdict = "Correct: " if not missing and all(statements[i].true for i in option) else "Incorrect: "
    tail = f"; it omits true {numbered('statement', missing)}" if missing else ""
    return OptionExplanation(verdict + "; ".join(parts) + tail + ".", tuple(dict.fromkeys(sources)))


def assemble(
    statements: tuple[Statement, ...], config: PseudoMcqConfig, seed: int, key: str, position: int
) -> PseudoMcq | None:
    """Options over the statements: the true set plus the nearest wrong sets of the same size, answer at
    `position`. None when the statements do not allow it (e.g. the true count does not match the config)."""
    truth = frozenset(i for i, s in enumerate(statements) if s.true)
    if len(truth) != config.true_statements or len(statements) < config.statements:
        return None
    rng = seeded(seed, "pseudo", key)
    wrong = [frozenset(c) for c in combinations(range(len(statements)), len(truth)) if frozenset(c) != truth]
    rng.shuffle(wrong)
    wrong.sort(key=lambda o: -len(o & truth))  # near misses first: they share most true statements
    options = wrong[: config.options - 1]
    position = min(position, len(options))
    options.insert(position, truth)
    return PseudoMcq(statements, tuple(options), position, tuple(explain(statements, o) for o in options))


def falsify(fact: Fact, index: FieldIndex, rng: random.Random) -> Statement | None:
    """The fact's sentence with its value replaced by another entity's value of the same field."""
    field_index = index.get(fact)
    value = fact.value or ""
    if field_index is None or not value or fact.text.count(value) != 1:
        return None
    own = field_index.values_of.get(norm(fact.subject or ""), set())
    stated = [f.value or "" for f in field_index.facts_of.get(norm(fact.subject or ""), [fact])]
    values = field_index.values
    wrong = next(
        (
            v
            for v in (values[rng.randrange(len(values))] for _ in range(16))
            if norm(v) not in own and v not in fact.text and not any(near(v, o) for o in stated)
        ),
        None,
    )
    if wrong is None:
        return None
    # the subject's facts of the field contradict it: same entity, same attribute, other values
    contradicting = ids(field_index.facts_of.get(norm(fact.subject or ""), [fact]))
    return Statement(
        fact.text.replace(value, wrong),
        False,
        contradicting,
        f"the source gives {value}, not {wrong}",
        (fact.subject or "", fact.field or "", wrong),
    )


def pseudo_item(
    spec_name: str,
    seed: int,
    facts: list[Fact],
    index: FieldIndex,
    config: PseudoMcqConfig,
    position: int,
    difficulty: str,
    cognitive: str,
) -> Item | None:
    """A pseudo-MCQ over `facts` (structured, one per statement; the first is the seed fact)."""
    facts = facts[: config.statements]
    if len(facts) < config.statements or any(index.ambiguous_place(f) for f in facts):
        return None
    key = "|".join(f.fact_id for f in facts)
    rng = seeded(seed, "pseudo-truth", key)
    false_rows = set(rng.sample(range(len(facts)), config.statements - config.true_statements))
    statements = []
    for i, fact in enumerate(facts):
        s = falsify(fact, index, rng) if i in false_rows else Statement(fact.text, True, (fact.fact_id,))
        if s is None:
            return None
        statements.append(s)
    item = assemble(tuple(statements), config, seed, key, position)
    if item is None or validate(item, config):
        return None
    return to_item(item, spec_name, key, facts, difficulty, cognitive, DETERMINISTIC, "template", PROMPT_VERSION)


def to_item(
    p: PseudoMcq,
    spec_name: str,
    key: str,
    facts: list[Fact],
    difficulty: str,
    cognitive: str,
    generator: str,
    strategy: str,
    prompt_version: str,
) -> Item:
    return Item(
        item_id=content_id(spec_name, "pseudo_mcq10", strategy, generator, key),
        format="pseudo_mcq10",
        question=stem(p.statements),
        options=tuple(option_text(o) for o in p.options),
        answer_index=p.answer_index,
        explanation="\n".join(f"{option_text(o)}: {e.text}" for o, e in zip(p.options, p.explanations, strict=True)),
        difficulty=difficulty,
        cognitive=cognitive,
        strategy=strategy,
        generator=generator,
        prompt_version=prompt_version,
        facts={f.fact_id: "answer" for f in facts},
        parameters={
            "statements": [
                {
                    "text": s.text,
                    "true": s.true,
                    "sources": list(s.sources),
                    **({"claim": list(s.claim)} if s.claim else {}),
                }
                for s in p.statements
            ],
            "option_sets": [sorted(o) for o in p.options],
            "grounding": {
                "ask": "statements",
                "slot_type": "statement_set",
                "option_types": ["statement_set"] * len(p.options),
            },
        },
        option_explanations=p.explanations,
        # an option is right or wrong by the truth of every statement: the facts of all of them prove each option
        option_facts=(tuple(dict.fromkeys(f for s in p.statements for f in s.sources)),) * len(p.options),
    )


def from_parameters(
    item_options: list[str], answer_index: int, parameters: dict[str, Any], explanations: list[OptionExplanation]
) -> PseudoMcq:
    """Rebuild a stored pseudo-MCQ (items.options + generation_metadata.parameters) for re-validation."""
    statements = tuple(Statement(s["text"], bool(s["true"]), tuple(s["sources"])) for s in parameters["statements"])
    options = tuple(frozenset(o) for o in parameters["option_sets"])
    if [option_text(o) for o in options] != list(item_options):
        raise ValueError("stored option texts do not match the stored option sets")
    return PseudoMcq(statements, options, answer_index, tuple(explanations))
