"""Template generation: deterministic parameterised questions over structured facts, no LLM.

Distractors are the same field's values of other entities of the same type (or, when the question asks for the
entity, entities whose value differs), drawn with a seed derived from the spec seed and the item, so every rerun
writes the same items.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass

from benchmark_platform.generation.config import QuestionTemplate

GENERATOR = "deterministic"
PROMPT_VERSION = "templates-1"


@dataclass(frozen=True)
class StructuredFact:
    fact_id: str
    subject: str
    field: str
    value: str
    entity_type: str


@dataclass(frozen=True)
class Item:
    item_id: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    explanation: str
    difficulty: str
    fact_id: str
    strategy: str


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _rng(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("|".join([str(seed), *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def item_id(spec_name: str, template_id: str, fact_id: str) -> str:
    return hashlib.sha256(f"{spec_name}|{template_id}|{fact_id}".encode()).hexdigest()[:20]


def generate_from_templates(spec_name: str, seed: int, templates: list[QuestionTemplate],
                            selected: list[StructuredFact], pool: list[StructuredFact],
                            options_per_item: int) -> tuple[list[Item], dict[str, int]]:
    """Items for the selected facts; `pool` holds every fact of the discipline (the distractor source)."""
    by_field: dict[tuple[str, str], list[StructuredFact]] = {}
    for fact in pool:
        by_field.setdefault((fact.field, fact.entity_type), []).append(fact)
    items: list[Item] = []
    skipped = {"no template for the fact's field": 0, "too few distinct distractors": 0}
    for fact in selected:
        templates_for_fact = [t for t in templates if t.field == fact.field]
        if not templates_for_fact:
            skipped["no template for the fact's field"] += 1
            continue
        for template in templates_for_fact:
            item = _build(spec_name, seed, template, fact, by_field[(fact.field, fact.entity_type)], options_per_item)
            if item is None:
                skipped["too few distinct distractors"] += 1
            else:
                items.append(item)
    return items, skipped


def _build(spec_name: str, seed: int, template: QuestionTemplate, fact: StructuredFact,
           same_type: list[StructuredFact], options_per_item: int) -> Item | None:
    if template.ask == "value":
        answer = fact.value
        candidates = {_norm(f.value): f.value for f in same_type if _norm(f.value) != _norm(answer)}
    else:
        answer = fact.subject
        candidates = {_norm(f.subject): f.subject for f in same_type
                      if _norm(f.value) != _norm(fact.value) and _norm(f.subject) != _norm(answer)}
    pool = [candidates[k] for k in sorted(candidates)]
    if len(pool) < options_per_item - 1:
        return None
    rng = _rng(seed, template.id, fact.fact_id)
    options = [answer, *rng.sample(pool, options_per_item - 1)]
    rng.shuffle(options)
    fields = {"subject": fact.subject, "value": fact.value, "answer": answer}
    return Item(
        item_id=item_id(spec_name, template.id, fact.fact_id), question=template.question.format(**fields),
        options=tuple(options), answer_index=options.index(answer), explanation=template.explanation.format(**fields),
        difficulty=template.difficulty, fact_id=fact.fact_id, strategy=f"template:{template.id}",
    )
