"""What generation reads (facts with their entity links) and writes (items with their provenance)."""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Entity:
    entity_id: str
    entity_type: str
    surface: str  # as written in the fact's text


@dataclass(frozen=True)
class Fact:
    fact_id: str
    text: str
    source: str = ""  # URL of the document the fact is a span of
    subject: str | None = None  # structured facts: attributes subject / field / value / entity_type
    field: str | None = None
    value: str | None = None
    entity_type: str | None = None
    entities: tuple[Entity, ...] = ()
    question_material: bool = True  # the facts stage's salience verdict; False: distractor pool only

    @property
    def entity_key(self) -> str:
        """The entity the fact is about (its subject's linked entity), for statements about one entity."""
        linked = next((e.entity_id for e in self.entities if e.entity_type == self.entity_type), None)
        return linked or f"{self.entity_type}:{norm(self.subject or '')}"

    @property
    def structured(self) -> bool:
        return self.field is not None and self.subject is not None and self.value is not None


@dataclass(frozen=True)
class OptionExplanation:
    text: str
    sources: tuple[str, ...]  # fact ids the explanation rests on


@dataclass
class Item:
    """One generated question. `facts` maps fact ids to their role ('answer', 'context', 'distractor')."""

    item_id: str
    format: str  # 'mcq4' | 'pseudo_mcq10'
    question: str
    options: tuple[str, ...]
    answer_index: int
    explanation: str
    difficulty: str
    cognitive: str
    strategy: str
    generator: str
    prompt_version: str
    facts: dict[str, str]
    parameters: dict[str, Any] = field(default_factory=dict)
    option_explanations: tuple[OptionExplanation, ...] = ()
    gate_result: str = "not_run"
    # per option, the fact ids that prove its truth value for this stem (the audit's G1 checks them; empty: none)
    option_facts: tuple[tuple[str, ...], ...] = ()


# The type of a value slot by the field it comes from (places, varieties); any other field's values are quantities or
# labels of that attribute ('value:<field>'). A subject slot's type is its entity type.
VALUE_TYPES = {
    "state": "state",
    "county": "county",
    "Prem_County": "county",
    "City": "city",
    "within": "ava",
    "department": "department",
    "departement": "department",
    "variety": "grape_variety",
    "principal_variety": "grape_variety",
    "accessory_variety": "grape_variety",
    "cépages": "grape_variety",
}


def value_type(field_name: str) -> str:
    return VALUE_TYPES.get(field_name, f"value:{field_name}")


def ids(facts: list[Fact] | tuple[Fact, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f.fact_id for f in facts))


def norm(text: str) -> str:
    return " ".join(text.lower().split())


_QUANTITY = re.compile(r"(\d[\d,.]*)\s+([^\W\d]+)")


def quantities(text: str) -> set[tuple[str, str]]:
    """Each number with the word after it ('12 months', '15 april', '55 hl'): two values of one field that share
    one say the same thing in other words as often as not ("12 months on the lees before disgorgement" and "12
    months in bottle on the lees from tirage"), so one is never offered as the other's false counterpart."""
    return {(number.rstrip(".,"), unit.lower()) for number, unit in _QUANTITY.findall(text)}


COMPARISON_ASKS = ("highest", "lowest")


def asked_question(question: str, options: tuple[str, ...] | list[str], ask: str | None) -> str:
    """What an item asks, to tell a repeated question from a new one: its stem, and for a comparison ("which of these
    declared the most ...") also its options, as they are what it compares: the same stem over other entities is
    another question. Any other stem asks the same question whatever its options (two clozes with one statement and
    two answers would contradict each other)."""
    if ask in COMPARISON_ASKS:
        return "\x1f".join([norm(question), *sorted(norm(o) for o in options)])
    return norm(question)


def seeded(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("|".join([str(seed), *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def content_id(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


def place_answer(answer: T, distractors: list[T], position: int) -> tuple[tuple[T, ...], int]:
    """Options with the answer at `position` (the orchestrator balances positions) and distractors in given order."""
    position = min(position, len(distractors))
    options = [*distractors[:position], answer, *distractors[position:]]
    return tuple(options), position
