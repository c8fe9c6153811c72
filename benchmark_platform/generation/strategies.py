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
from typing import Any

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.embed import similarities
from benchmark_platform.generation.config import DETERMINISTIC
from benchmark_platform.generation.distractors import EntityCatalogue, Query, first_then_all, top, type_label
from benchmark_platform.generation.model import Entity, Fact, Item, content_id, norm, place_answer, value_type
from benchmark_platform.generation.templates import FieldIndex, grounding, option_proofs
from benchmark_platform.llm import ChatRequest

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
    option_facts: tuple[tuple[str, ...], ...] = ()  # the answer's proof, then each distractor's
    slot_type: str = ""  # the blank's type: the field's value type, or the subject's entity type


def _askable(fact: Fact, index: FieldIndex) -> list[Entity]:
    """Entities the fact could be asked about: its structured subject first, unless other entities share its value
    (then the blanked sentence would fit them too), and the entities it mentions."""
    # the subject's own entity is never a blank of its own (with a qualifier, 'Buzet red wines', its name alone would
    # leave '_____ red wines', which other appellations may fit too)
    entities = [
        e
        for e in fact.entities
        if not (fact.structured and (norm(e.surface) == norm(fact.subject or "") or e.entity_id == fact.entity_key))
    ]
    field_index = index.get(fact) if fact.structured else None
    sharing = field_index.subjects_with.get(norm(fact.value or ""), []) if field_index is not None else []
    if fact.entity_type and len(sharing) == 1:
        entities.insert(
            0, Entity(f"{fact.entity_type}:{norm(fact.subject or '')}", fact.entity_type, fact.subject or "")
        )
    return entities


def mine_all(facts: list[Fact], catalogue: EntityCatalogue, index: FieldIndex, k: int = 3) -> list[Mined | None]:
    """For each fact, its first askable entity (written once in its text) with k confusable same-type entities
    that do not occur in the text; None when no entity has enough."""
    out: list[Mined | None] = [None] * len(facts)
    candidates = [
        [(e, w) for e in _askable(f, index) for w in [_written(f.text, e.surface)] if w is not None] for f in facts
    ]
    depth = max((len(c) for c in candidates), default=0)
    for round_ in range(depth):
        todo = [i for i, c in enumerate(candidates) if out[i] is None and round_ < len(c)]
        queries = []
        for i in todo:
            fact, (entity, _) = facts[i], candidates[i][round_]
            structured = fact.structured and entity.surface == fact.subject
            queries.append(
                Query(
                    entity.entity_type,
                    entity.surface,
                    fact.field if structured else None,
                    fact.value if structured else None,
                )
            )
        for i, found in zip(todo, catalogue.mine_many(queries, k + 4), strict=True):
            fact, (entity, written) = facts[i], candidates[i][round_]
            true_here = _values_of_subject(fact, entity, index)
            distractors = [
                (_like(n, written), s)
                for n, s in found
                if norm(n) not in norm(fact.text) and not any(v in norm(n) or norm(n) in v for v in true_here)
            ][:k]
            proven = _cloze_proofs(fact, written, [n for n, _ in distractors], index) if len(distractors) == k else None
            if proven is not None:
                slot, proofs = proven
                blank = Entity(entity.entity_id, entity.entity_type, written)
                out[i] = Mined(fact, blank, tuple(distractors), tuple(proofs), slot)
    return out


def _cloze_proofs(
    fact: Fact, blank: str, distractors: list[str], index: FieldIndex
) -> tuple[str, list[tuple[str, ...]]] | None:
    """(slot type, per-option proofs) when the blank is a structured fact's value or subject and every distractor
    has a fact that rules it out (the template proofs of ask 'value' / 'subject'); None otherwise: a blanked entity
    that the fact merely mentions has no stored fact about the other candidates."""
    field_index = index.get(fact) if fact.structured else None
    if field_index is None:
        return None
    if norm(blank) == norm(fact.value or ""):
        ask, slot = "value", value_type(fact.field or "")
    elif norm(blank) == norm(fact.subject or ""):
        ask, slot = "subject", fact.entity_type or ""
    else:
        return None
    if ask == "subject" and not all(field_index.facts_of.get(norm(d)) for d in distractors):
        return None
    proofs = option_proofs(ask, field_index, fact, blank, distractors)
    return None if proofs is None else (slot, proofs)


def _values_of_subject(fact: Fact, entity: Entity, index: FieldIndex) -> set[str]:
    """When the blank is the fact's value (a variety of an appellation), every value the subject has in that field:
    a distractor that is one of them, or names one ('Sauvignon' / 'Sauvignon Blanc'), would also be right."""
    field_index = index.get(fact) if fact.structured else None
    if field_index is None or norm(entity.surface) != norm(fact.value or ""):
        return set()
    return field_index.values_of.get(norm(fact.subject or ""), set())


def _written(text: str, surface: str) -> str | None:
    """The surface as the text writes it, when it occurs exactly once (case-insensitively)."""
    at = text.lower().find(surface.lower()) if surface else -1
    if at < 0 or text.lower().find(surface.lower(), at + 1) >= 0:
        return None
    return text[at : at + len(surface)]


def _like(name: str, answer: str) -> str:
    """A distractor in the answer's letter case, so that case gives nothing away."""
    return string.capwords(name) if name.islower() and not answer.islower() else name


def cloze_item(spec_name: str, mined: Mined, position: int, cognitive: str) -> Item:
    """Deterministic distractor mining: which entity completes the fact's sentence."""
    label = type_label(mined.slot_type)
    blanked = mined.fact.text.replace(mined.entity.surface, "_____")
    names = [n for n, _ in mined.distractors]
    options, answer_index = place_answer(mined.entity.surface, names, position)
    option_facts, _ = place_answer(mined.option_facts[0], list(mined.option_facts[1:]), position)
    return Item(
        item_id=content_id(spec_name, "distractor_mining", DETERMINISTIC, mined.fact.fact_id),
        format="mcq4",
        question=f"Which {label} completes the statement: \u201c{blanked}\u201d?",
        options=options,
        answer_index=answer_index,
        explanation=(
            f"The statement reads \u201c{mined.fact.text}\u201d. {', '.join(names)} are {label}s of the same "
            f"kind, but the statement is about {mined.entity.surface}."
        ),
        difficulty="L2",
        cognitive=cognitive,
        strategy="distractor_mining",
        generator=DETERMINISTIC,
        prompt_version=CLOZE_VERSION,
        facts={mined.fact.fact_id: "answer"},
        parameters=_mined_parameters(mined, len(options)),
        option_facts=option_facts,
    )


def _mined_parameters(mined: Mined, n_options: int) -> dict[str, Any]:
    ask = "value" if norm(mined.entity.surface) == norm(mined.fact.value or "") else "subject"
    return {
        "entity_id": mined.entity.entity_id,
        "plausibility": [round(s, 4) for _, s in mined.distractors],
        "grounding": grounding(ask, mined.fact, n_options),
    }


def clusters(
    seeds: list[Fact], sizes: list[int], facts: list[Fact], vectors: np.ndarray, row: dict[str, int]
) -> list[list[Fact]]:
    """Each seed with its `size - 1` nearest facts by text embedding (distinct texts); one matrix product, exact
    (`vectors` are embed.exact.integer_rows), so the nearest are the same on every machine."""
    sims = similarities(vectors[[row[s.fact_id] for s in seeds]], vectors) if seeds else np.zeros((0, len(facts)))
    out = []
    for seed, size, scores in zip(seeds, sizes, sims, strict=True):
        for order in first_then_all(top(scores, 8 * size), scores):
            group, seen = [seed], {norm(seed.text)}
            for i in order:
                fact = facts[int(i)]
                if norm(fact.text) not in seen:
                    group.append(fact)
                    seen.add(norm(fact.text))
                if len(group) == size:
                    break
            if len(group) == size:
                break
        out.append(group)
    return out


def partners(
    facts: list[Fact], index: FieldIndex, by_subject: dict[tuple[str, str], list[Fact]], catalogue: EntityCatalogue
) -> list[Fact | None]:
    """Entity-affinity pairing: for each structured fact, the same field of the most related other entity of the
    same type (shared attribute values, then name similarity); None when there is none."""
    askable = [f for f in facts if index.get(f) is not None and f.entity_type]
    found = catalogue.mine_many([Query(f.entity_type or "", f.subject or "") for f in askable], 4)
    best: dict[str, Fact] = {}
    for fact, names in zip(askable, found, strict=True):
        for name, _ in names:
            other = next(
                (o for o in by_subject.get((fact.entity_type or "", norm(name)), []) if o.field == fact.field), None
            )
            if other is not None:
                best[fact.fact_id] = other
                break
    return [best.get(f.fact_id) for f in facts]


# -- requests and answers -------------------------------------------------------------------------------------------


def _messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": prompt("system")}, {"role": "user", "content": user}]


def request(strategy: str, model: str, seed: int, context: dict[str, str]) -> ChatRequest:
    return ChatRequest(model=model, messages=_messages(prompt(strategy).format(**context)), seed=seed)


def draft_item(
    spec_name: str,
    strategy: str,
    generator: str,
    facts: dict[str, str],
    draft: McqDraft,
    position: int,
    difficulty: str,
    cognitive: str,
    parameters: dict[str, Any],
) -> Item:
    options, answer_index = place_answer(draft.answer.strip(), [d.strip() for d in draft.distractors], position)
    return Item(
        item_id=content_id(spec_name, strategy, generator, *facts),
        format="mcq4",
        question=draft.question.strip(),
        options=options,
        answer_index=answer_index,
        explanation=draft.explanation.strip(),
        difficulty=difficulty,
        cognitive=cognitive,
        strategy=strategy,
        generator=generator,
        prompt_version=prompt_version(strategy),
        facts=facts,
        parameters=parameters,
    )


def mined_item(
    spec_name: str, generator: str, mined: Mined, answer: MinedQuestion, position: int, difficulty: str, cognitive: str
) -> Item | None:
    """The model's question over our mined options; None when the question gives the answer away."""
    if norm(mined.entity.surface) in norm(answer.question):
        return None
    names = [n for n, _ in mined.distractors]
    options, answer_index = place_answer(mined.entity.surface, names, position)
    option_facts, _ = place_answer(mined.option_facts[0], list(mined.option_facts[1:]), position)
    return Item(
        item_id=content_id(spec_name, "distractor_mining", generator, mined.fact.fact_id),
        format="mcq4",
        question=answer.question.strip(),
        options=options,
        answer_index=answer_index,
        explanation=answer.explanation.strip(),
        difficulty=difficulty,
        cognitive=cognitive,
        strategy="distractor_mining",
        generator=generator,
        prompt_version=prompt_version("distractor_mining"),
        facts={mined.fact.fact_id: "answer"},
        parameters=_mined_parameters(mined, len(options)),
        option_facts=option_facts,
    )


LETTERS = "ABCDEFGHIJ"


def gate_request(item: Item, model: str, seed: int) -> ChatRequest:
    options = "\n".join(f"{LETTERS[i]}. {o}" for i, o in enumerate(item.options))
    return ChatRequest(
        model=model,
        messages=[{"role": "user", "content": prompt("closed_book").format(question=item.question, options=options)}],
        seed=seed,
    )
