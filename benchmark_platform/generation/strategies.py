"""The four strategies beside templates (OenoBench 3.4, B.3): what each takes from the facts, the prompt it sends
through the gateway, and the pydantic schema its answer must satisfy. Distractor mining also runs without a model,
as a cloze over the fact with mined confusable entities.

Prompts are the files in `prompts/`; a strategy's prompt version is a hash of its file and the system prompt.
"""

from __future__ import annotations

import hashlib
import string
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.generation.config import DETERMINISTIC
from benchmark_platform.generation.distractors import EntityCatalogue, top, type_label
from benchmark_platform.generation.model import Entity, Fact, Item, content_id, norm, place_answer
from benchmark_platform.generation.templates import FieldIndex
from benchmark_platform.llm.gateway import ChatRequest

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"
CLOZE_VERSION = "cloze-1"


@cache
def prompt(name: str) -> str:
    return (PROMPTS_DIR / f"{name}.md").read_text(encoding="utf-8")


def prompt_version(strategy: str) -> str:
    digest = hashlib.sha256((prompt("system") + prompt(strategy)).encode()).hexdigest()[:10]
    return f"{strategy}-{digest}"


class McqDraft(BaseModel):
    """What fact-to-question, scenario and comparative prompts must return."""

    model_config = ConfigDict(extra="ignore")
    question: str = Field(min_length=10)
    answer: str = Field(min_length=1)
    distractors: list[str] = Field(min_length=3, max_length=3)
    explanation: str = Field(min_length=10)

    @model_validator(mode="after")
    def _distinct(self) -> McqDraft:
        options = [norm(self.answer), *(norm(d) for d in self.distractors)]
        if any(not o for o in options) or len(set(options)) != len(options):
            raise ValueError("the answer and the three distractors must be non-empty and distinct")
        return self


class MinedQuestion(BaseModel):
    """What the distractor-mining prompt must return (the options are ours)."""

    model_config = ConfigDict(extra="ignore")
    question: str = Field(min_length=10)
    explanation: str = Field(min_length=10)


class GateAnswer(BaseModel):
    model_config = ConfigDict(extra="ignore")
    answer: str = Field(min_length=1, max_length=3)


# -- what each strategy takes from the facts ------------------------------------------------------------------------

@dataclass(frozen=True)
class Mined:
    """A fact, the entity it asks for, and confusable distractors (most plausible first)."""

    fact: Fact
    entity: Entity
    distractors: tuple[tuple[str, float], ...]


def mine(fact: Fact, catalogue: EntityCatalogue, k: int = 3) -> Mined | None:
    """The fact's entity to ask for (its structured subject first) with k confusable same-type entities."""
    entities = list(fact.entities)
    if fact.structured and fact.entity_type:
        entities.insert(0, Entity(f"{fact.entity_type}:{norm(fact.subject or '')}", fact.entity_type,
                                  fact.subject or ""))
    for entity in entities:
        written = _written(fact.text, entity.surface)
        if written is None:
            continue
        structured = fact.structured and entity.surface == fact.subject
        distractors = catalogue.mine(entity.entity_type, entity.surface, k,
                                     exclude_field=fact.field if structured else None,
                                     exclude_value=fact.value if structured else None)
        distractors = [(_like(n, written), s) for n, s in distractors if norm(n) not in norm(fact.text)]
        if len(distractors) == k:
            return Mined(fact, Entity(entity.entity_id, entity.entity_type, written), tuple(distractors))
    return None


def _written(text: str, surface: str) -> str | None:
    """The surface as the text writes it, when it occurs exactly once (case-insensitively)."""
    at = text.lower().find(surface.lower()) if surface else -1
    if at < 0 or text.lower().find(surface.lower(), at + 1) >= 0:
        return None
    return text[at: at + len(surface)]


def _like(name: str, answer: str) -> str:
    """A distractor in the answer's letter case, so that case gives nothing away."""
    return string.capwords(name) if name.islower() and not answer.islower() else name


def cloze_item(spec_name: str, mined: Mined, position: int, cognitive: str) -> Item:
    """Deterministic distractor mining: which entity completes the fact's sentence."""
    label = type_label(mined.entity.entity_type)
    blanked = mined.fact.text.replace(mined.entity.surface, "_____")
    names = [n for n, _ in mined.distractors]
    options, answer_index = place_answer(mined.entity.surface, names, position)
    return Item(
        item_id=content_id(spec_name, "distractor_mining", DETERMINISTIC, mined.fact.fact_id),
        format="mcq4", question=f"Which {label} completes the statement: \u201c{blanked}\u201d?",
        options=options, answer_index=answer_index,
        explanation=(f"The statement reads \u201c{mined.fact.text}\u201d. {', '.join(names)} are {label}s of the same "
                     f"kind, but the statement is about {mined.entity.surface}."),
        difficulty="L2", cognitive=cognitive, strategy="distractor_mining", generator=DETERMINISTIC,
        prompt_version=CLOZE_VERSION, facts={mined.fact.fact_id: "answer"},
        parameters={"entity_id": mined.entity.entity_id, "plausibility": [round(s, 4) for _, s in mined.distractors]})


def cluster(seed: Fact, facts: list[Fact], vectors: np.ndarray, row: dict[str, int], size: int) -> list[Fact]:
    """The seed and its `size - 1` nearest facts by text embedding (distinct texts)."""
    scores = vectors @ vectors[row[seed.fact_id]]
    for order in (top(scores, 8 * size), np.argsort(-scores, kind="stable")):
        out, seen = [seed], {norm(seed.text)}
        for i in order:
            fact = facts[int(i)]
            if norm(fact.text) not in seen:
                out.append(fact)
                seen.add(norm(fact.text))
            if len(out) == size:
                return out
    return out


def partner(fact: Fact, index: FieldIndex, by_subject: dict[tuple[str, str], list[Fact]],
            catalogue: EntityCatalogue) -> Fact | None:
    """Entity-affinity pairing: the same field of the most related other entity of the same type (shared
    attribute values, then name similarity)."""
    field_index = index.get(fact)
    if field_index is None or not fact.entity_type:
        return None
    ranked = catalogue.mine(fact.entity_type, fact.subject or "", 1)
    for name, _ in ranked:
        for other in by_subject.get((fact.entity_type, norm(name)), []):
            if other.field == fact.field:
                return other
    return None


# -- requests and answers -------------------------------------------------------------------------------------------

def _messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt("system")}, {"role": "user", "content": user}]


def request(strategy: str, model: str, seed: int, context: dict[str, str]) -> ChatRequest:
    return ChatRequest(model=model, messages=_messages(prompt(strategy).format(**context)), seed=seed)


def draft_item(spec_name: str, strategy: str, generator: str, facts: dict[str, str], draft: McqDraft,
               position: int, difficulty: str, cognitive: str, parameters: dict) -> Item:
    options, answer_index = place_answer(draft.answer.strip(), [d.strip() for d in draft.distractors], position)
    return Item(
        item_id=content_id(spec_name, strategy, generator, *facts), format="mcq4", question=draft.question.strip(),
        options=options, answer_index=answer_index, explanation=draft.explanation.strip(), difficulty=difficulty,
        cognitive=cognitive, strategy=strategy, generator=generator, prompt_version=prompt_version(strategy),
        facts=facts, parameters=parameters)


def mined_item(spec_name: str, generator: str, mined: Mined, answer: MinedQuestion, position: int,
               difficulty: str, cognitive: str) -> Item | None:
    """The model's question over our mined options; None when the question gives the answer away."""
    if norm(mined.entity.surface) in norm(answer.question):
        return None
    names = [n for n, _ in mined.distractors]
    options, answer_index = place_answer(mined.entity.surface, names, position)
    return Item(
        item_id=content_id(spec_name, "distractor_mining", generator, mined.fact.fact_id), format="mcq4",
        question=answer.question.strip(), options=options, answer_index=answer_index,
        explanation=answer.explanation.strip(), difficulty=difficulty, cognitive=cognitive,
        strategy="distractor_mining", generator=generator, prompt_version=prompt_version("distractor_mining"),
        facts={mined.fact.fact_id: "answer"},
        parameters={"entity_id": mined.entity.entity_id, "plausibility": [round(s, 4) for _, s in mined.distractors]})


LETTERS = "ABCDEFGHIJ"


def gate_request(item: Item, model: str, seed: int) -> ChatRequest:
    options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(item.options))
    return ChatRequest(model=model, messages=[{"role": "user", "content": prompt("closed_book").format(
        question=item.question, options=options)}], seed=seed)
