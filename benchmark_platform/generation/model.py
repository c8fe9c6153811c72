"""What generation reads (facts with their entity links) and writes (items with their provenance)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass, field
from typing import Any


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


def norm(text: str) -> str:
    return " ".join(text.lower().split())


def seeded(seed: int, *parts: str) -> random.Random:
    digest = hashlib.sha256("|".join([str(seed), *parts]).encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def content_id(*parts: str) -> str:
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


def place_answer(answer: str, distractors: list[str], position: int) -> tuple[tuple[str, ...], int]:
    """Options with the answer at `position` (the orchestrator balances positions) and distractors in given order."""
    position = min(position, len(distractors))
    options = [*distractors[:position], answer, *distractors[position:]]
    return tuple(options), position
