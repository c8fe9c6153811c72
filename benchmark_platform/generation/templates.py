"""Template strategy: deterministic parameterised questions over structured facts, no LLM (OenoBench B.3).

Distractors are the same field's values of other entities of the same type (or entities whose value differs), drawn
with a seed derived from the spec seed and the item, so every rerun writes the same items.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

from benchmark_platform.facts import one_article
from benchmark_platform.generation.config import DETERMINISTIC, QuestionTemplate
from benchmark_platform.generation.model import (
    COMPARISON_ASKS,
    Fact,
    Item,
    content_id,
    ids,
    norm,
    place_answer,
    quantities,
    seeded,
    value_type,
)


def templates_version(templates: list[QuestionTemplate]) -> str:
    payload = json.dumps([t.model_dump() for t in templates], sort_keys=True)
    return "templates-" + hashlib.sha256(payload.encode()).hexdigest()[:10]


@dataclass
class _FieldIndex:
    values: list[str] = field(default_factory=list)  # distinct values (display form), sorted by norm
    subjects: list[str] = field(default_factory=list)  # distinct subjects, sorted by norm
    values_of: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # norm(subject) -> norm(values)
    subjects_with: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # norm(value) -> subjects
    facts_of: dict[str, list[Fact]] = field(default_factory=lambda: defaultdict(list))  # norm(subject) -> its facts
    witness: dict[str, Fact] = field(default_factory=dict)  # norm(value) -> the first fact that has it

    def having(self, subject: str, value: str) -> Fact | None:
        """The subject's fact with this value: the proof that the subject has it."""
        return next((f for f in self.facts_of.get(norm(subject), []) if norm(f.value or "") == norm(value)), None)


MULTI_VALUE = "|"
PLACE_TYPES = ("county", "city")  # value types whose names recur across states ('Lake' county: California, Ohio)
REGION_FIELD = "state"  # the field that places an entity of the same type in its state


class FieldIndex:
    """Structured facts of a discipline by (field, entity type): the distractor source of templates."""

    def __init__(self, pool: list[Fact]) -> None:
        raw: dict[tuple[str, str], list[Fact]] = defaultdict(list)
        for fact in pool:
            if fact.field is not None and fact.subject is not None and fact.value is not None:  # structured
                raw[(fact.field, fact.entity_type or "")].append(fact)
        self.fields: dict[tuple[str, str], _FieldIndex] = {}
        self.ambiguous = _ambiguous_places(raw)
        for key, facts in raw.items():
            index = _FieldIndex()
            values: dict[str, str] = {}
            subjects: dict[str, str] = {}
            for f in sorted(facts, key=lambda f: f.fact_id):
                assert f.subject is not None and f.value is not None  # structured facts only, see above
                if (
                    MULTI_VALUE not in f.value and (key, norm(f.value)) not in self.ambiguous
                ):  # no single place to offer
                    values.setdefault(norm(f.value), f.value)
                    index.witness.setdefault(norm(f.value), f)
                subjects.setdefault(norm(f.subject), f.subject)
                index.values_of[norm(f.subject)].add(norm(f.value))
                index.facts_of[norm(f.subject)].append(f)
            index.values = [values[k] for k in sorted(values)]
            index.subjects = [subjects[k] for k in sorted(subjects)]
            for k in sorted(subjects):
                for v in index.values_of[k]:
                    index.subjects_with[v].append(subjects[k])
            self.fields[key] = index

    def ambiguous_place(self, fact: Fact) -> bool:
        """The fact's value is a place name that the discipline's facts put in several states: a question about it,
        or an option naming it, would not say which place is meant."""
        return ((fact.field or "", fact.entity_type or ""), norm(fact.value or "")) in self.ambiguous

    def get(self, fact: Fact) -> _FieldIndex | None:
        return self.fields.get((fact.field or "", fact.entity_type or ""))


def _ambiguous_places(raw: dict[tuple[str, str], list[Fact]]) -> set[tuple[tuple[str, str], str]]:
    """((field, entity type), norm(value)) of the place-typed values held by two entities in disjoint states."""
    out: set[tuple[tuple[str, str], str]] = set()
    for (field_name, entity_type), facts in raw.items():
        if value_type(field_name) not in PLACE_TYPES:
            continue
        states: dict[str, set[str]] = defaultdict(set)
        for f in raw.get((REGION_FIELD, entity_type), []):
            states[norm(f.subject or "")].add(norm(f.value or ""))
        places: dict[str, list[set[str]]] = defaultdict(list)
        for f in facts:
            places[norm(f.value or "")].append(states.get(norm(f.subject or ""), set()))
        for value, held in places.items():
            if any(a and b and not a & b for i, a in enumerate(held) for b in held[i + 1 :]):
                out.add(((field_name, entity_type), value))
    return out


def _sample(rng: random.Random, population: list[str], k: int, reject: Callable[[str], bool]) -> list[str] | None:
    """k distinct members not rejected, by rejection sampling (fast on large fields), else by filtering."""
    chosen: dict[str, str] = {}
    for _ in range(8 * k):
        candidate = population[rng.randrange(len(population))]
        if norm(candidate) not in chosen and not reject(candidate):
            chosen[norm(candidate)] = candidate
            if len(chosen) == k:
                return list(chosen.values())
    rest = [c for c in population if norm(c) not in chosen and not reject(c)]
    if len(rest) < k - len(chosen):
        return None
    return [*chosen.values(), *rng.sample(rest, k - len(chosen))]


_LEADING_NUMBER = re.compile(r"^\s*(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?")


def numeric(value: str) -> float | None:
    """The leading number of a value with its unit ('5,500 vines per hectare' -> 5500.0), else None."""
    m = _LEADING_NUMBER.match(value)
    return float(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else "")) if m else None


def exact(value: str) -> Fraction | None:
    """The leading number of a value as an exact fraction ('4,071.22 ha' -> 407122/100), else None."""
    m = _LEADING_NUMBER.match(value)
    return Fraction(m.group(1).replace(",", "") + ("." + m.group(2) if m.group(2) else "")) if m else None


_MONTHS = ("January February March April May June July August September October November December").split()
_DAY = re.compile(
    r"^(?:before )?(\d{1,2}) (" + "|".join(_MONTHS) + r") of the (harvest year|(?:(\w+) )?year after the harvest)$"
)
_YEARS_AFTER = {None: 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7}
NEAR_DAYS = 7  # two dates this close are one answer to a reader ('14 December' against '15 December')


def day_number(value: str) -> int | None:
    """'15 December of the harvest year' -> a day count from the harvest year's start (None: not such a date)."""
    m = _DAY.match(value)
    if m is None or (m.group(3) != "harvest year" and m.group(4) not in _YEARS_AFTER):
        return None
    years = 0 if m.group(3) == "harvest year" else _YEARS_AFTER[m.group(4)]
    return years * 366 + _MONTHS.index(m.group(2)) * 31 + int(m.group(1))


def near(a: str, b: str) -> bool:
    """Two values too close to stand as different answers: two dates of the rulebooks' one form within NEAR_DAYS of
    each other, or two other values that share a number with its unit ("at least 12 months on the lees before
    disgorgement" and "at least 12 months in bottle on the lees from tirage": `quantities`)."""
    x, y = day_number(a), day_number(b)
    if x is not None and y is not None:
        return abs(x - y) <= NEAR_DAYS
    return x is None and y is None and bool(quantities(a) & quantities(b))


def _compared(
    field_index: _FieldIndex, fact: Fact, template: QuestionTemplate, rng: random.Random, k: int
) -> list[tuple[str, str]] | None:
    """k other entities whose one value of the field is strictly below (highest) / above (lowest) the fact's, as
    (subject, value); None when the fact's entity has several values of the field or too few entities compare. With
    the template's `min_ratio` the others must differ by that factor, and with `min_share_of_largest` the fact's value
    must not be tiny beside the field's largest (exact decimal arithmetic: no float decides)."""
    highest = template.ask == "highest"
    own = exact(fact.value or "")
    if own is None or len(field_index.values_of.get(norm(fact.subject or ""), ())) != 1:
        return None
    ratio = Fraction(str(template.min_ratio)) if template.min_ratio is not None else Fraction(1)
    if template.min_share_of_largest is not None:
        largest = max((n for v in field_index.values if (n := exact(v)) is not None), default=own)
        if own < Fraction(str(template.min_share_of_largest)) * largest:
            return None
    display = {norm(v): v for v in field_index.values}
    pool = []
    for subject in field_index.subjects:
        values = field_index.values_of.get(norm(subject), set())
        if len(values) != 1 or norm(subject) == norm(fact.subject or ""):
            continue
        (value,) = values
        number = exact(value)
        if number is None:
            continue
        apart = (number < own and number * ratio <= own) if highest else (number > own and own * ratio <= number)
        if apart:
            pool.append((subject, display.get(value, value)))
    return rng.sample(pool, k) if len(pool) >= k else None


def matching_templates(templates: list[QuestionTemplate], fact: Fact) -> list[QuestionTemplate]:
    return [
        t
        for t in templates
        if fact.structured
        and (t.field == fact.field or fact.field in t.fields)
        and (t.entity_type is None or t.entity_type == fact.entity_type)
        and (not t.values or fact.value in t.values)
    ]


def template_item(
    spec_name: str,
    seed: int,
    template: QuestionTemplate,
    fact: Fact,
    index: FieldIndex,
    options_per_item: int,
    position: int,
    version: str,
) -> Item | None:
    """The template's question about `fact`, answer at `position`; None when too few distinct distractors exist."""
    if template.ask in STATEMENT_ASKS:
        return statement_item(spec_name, seed, template, fact, index, options_per_item, position, version)
    field_index = index.get(fact)
    if field_index is None:
        return None
    rng = seeded(seed, template.id, fact.fact_id)
    k = options_per_item - 1
    subject, value = fact.subject or "", fact.value or ""
    own = field_index.values_of.get(norm(subject), set())
    if template.ask == "value":
        answer = value
        distractors = _sample(rng, field_index.values, k, lambda c: norm(c) in own or near(c, value))
    elif template.ask == "subject":
        answer = subject
        distractors = _sample(rng, field_index.subjects, k, lambda c: norm(value) in field_index.values_of[norm(c)])
    elif template.ask in COMPARISON_ASKS:
        compared = _compared(field_index, fact, template, rng, k)
        if compared is None:
            return None
        answer, distractors = subject, [s for s, _ in compared]
        values = "; ".join(f"{s}: {v}" for s, v in [(subject, value), *compared])
    else:  # negative: the one entity without the value among three that have it
        sharing = [s for s in field_index.subjects_with.get(norm(value), []) if norm(s) != norm(subject)]
        others = _sample(rng, field_index.subjects, 1, lambda c: norm(value) in field_index.values_of[norm(c)])
        if len(sharing) < k - 1 or not others:
            return None
        answer, distractors = others[0], [subject, *rng.sample(sharing, k - 1)]
    if distractors is None:
        return None
    proofs = option_proofs(template.ask, field_index, fact, answer, distractors)
    if proofs is None:
        return None
    options, answer_index = place_answer(answer, distractors, position)
    option_facts, _ = place_answer(proofs[0], list(proofs[1:]), position)
    fields = {"subject": subject, "value": value, "answer": answer}
    explanation = one_article(template.explanation.format(**fields))
    if template.ask in COMPARISON_ASKS:
        explanation += f" ({values})"
    return Item(
        item_id=content_id(spec_name, "template", template.id, fact.fact_id),
        format="mcq4",
        question=one_article(template.question.format(**fields)),
        options=options,
        answer_index=answer_index,
        explanation=explanation,
        difficulty=template.difficulty,
        cognitive=template.cognitive,
        strategy="template",
        generator=DETERMINISTIC,
        prompt_version=version,
        facts={fact.fact_id: "answer"},
        parameters={
            "template": template.id,
            "ask": template.ask,
            "grounding": grounding(template.ask, fact, len(options)),
        },
        option_facts=option_facts,
    )


def grounding(ask: str, fact: Fact, n_options: int) -> dict[str, object]:
    """The claim G1 checks (audit/grounding.py): what the stem asks about which field, and the type of the blank
    and of every option (a value slot has its field's value type, any other slot the subject's entity type)."""
    slot = value_type(fact.field or "") if ask == "value" else fact.entity_type or ""
    return {
        "ask": ask,
        "field": fact.field,
        "entity_type": fact.entity_type,
        "subject": fact.subject,
        "value": fact.value,
        "slot_type": slot,
        "option_types": [slot] * n_options,
    }


def option_proofs(
    ask: str, field_index: _FieldIndex, fact: Fact, answer: str, distractors: list[str]
) -> list[tuple[str, ...]] | None:
    """Per option (the answer first, then the distractors), the facts that prove its truth value; None when one
    option has none (then the item is not built: its key could not be proven)."""
    subject, value = fact.subject or "", fact.value or ""
    own = field_index.facts_of.get(norm(subject), [])
    if ask == "value":  # a wrong value: the subject's facts of the field (none has it) and a fact that has it
        wrong = [(*own, w) for d in distractors if (w := field_index.witness.get(norm(d))) is not None]
        return [(fact.fact_id,), *map(ids, wrong)] if len(wrong) == len(distractors) else None
    if ask == "subject":  # a wrong subject: its own facts of the field, none with the value
        return [(fact.fact_id,), *(ids(field_index.facts_of.get(norm(d), [])) for d in distractors)]
    if ask == "negative":  # three that have the value, and the key's facts of the field without it
        having = [field_index.having(d, value) for d in distractors]
        if any(h is None for h in having):
            return None
        return [ids(field_index.facts_of.get(norm(answer), [])), *((h.fact_id,) for h in having if h is not None)]
    # highest / lowest: each option's one fact, and the key's; the key needs them all
    others = [field_index.facts_of.get(norm(d), [])[:1] for d in distractors]
    return [ids([fact, *(f for o in others for f in o)]), *(ids([*o, fact]) for o in others)]


STATEMENT_ASKS = ("true_statement", "false_statement")


@dataclass(frozen=True)
class _Statement:
    text: str
    true: bool
    sources: tuple[str, ...]  # a true statement: its fact; a false one: the subject's facts of its field
    field: str
    value: str
    claim: tuple[str, str, str] | None = None  # a false statement's (subject, field, asserted value), for G1
    correction: str = ""  # a false statement: what the subject's own facts of the field give


def _exclusive(field_index: _FieldIndex, value: str) -> bool:
    """No subject holding the value holds another of the field ('sets no ban on oak chips', a release date): beside
    a true statement of its field, a false one with such a value contradicts it and gives the pair away."""
    return all(len(field_index.values_of[norm(s)]) == 1 for s in field_index.subjects_with.get(norm(value), []))


def _statements(fact: Fact, index: FieldIndex, fields: list[str], rng: random.Random) -> list[_Statement]:
    """The subject's facts of the fields (true), and per field its facts with their value replaced by another of the
    field that no fact gives the subject's appellation under any qualifier (false: 'Côtes du Jura' is not offered
    'picked by hand' when its vin de paille is). A false statement is proven by the subject's own facts of its field,
    which state otherwise, never by silence."""
    subject = norm(fact.subject or "")
    out: list[_Statement] = []
    for name in fields:
        field_index = index.fields.get((name, fact.entity_type or ""))
        own = field_index.facts_of.get(subject, []) if field_index is not None else []
        if field_index is None or not own:
            continue
        out += [_Statement(f.text, True, (f.fact_id,), name, f.value or "") for f in own]
        held = {
            norm(f.value or "")
            for facts in field_index.facts_of.values()
            for f in facts
            if f.entity_key == fact.entity_key
        }
        stated = [f for f in own if f.value and f.text.count(f.value) == 1]
        wrong = [v for v in field_index.values if norm(v) not in held and not any(near(v, f.value or "") for f in own)]
        rng.shuffle(wrong)
        correction = "; ".join(f.value or "" for f in own)
        for i, value in enumerate(wrong):
            base = stated[i % len(stated)] if stated else None
            if base is not None and value not in base.text:
                text = base.text.replace(base.value or "", value)
                out.append(
                    _Statement(text, False, ids(own), name, value, (fact.subject or "", name, value), correction)
                )
    return out


def _compatible(a: _Statement, b: _Statement, index: FieldIndex, entity_type: str) -> bool:
    """A true and a false statement of one field may share an item only when neither value excludes the others."""
    if a.field != b.field or a.true == b.true:
        return True
    field_index = index.fields[(a.field, entity_type)]
    return not _exclusive(field_index, a.value) and not _exclusive(field_index, b.value)


def _pick(candidates: list[_Statement], chosen: list[_Statement], k: int, fit: Callable[[_Statement], bool]) -> None:
    """Add up to k candidates that fit, taking their fields in turn so that the options mix the subject's rules."""
    by_field: dict[str, list[_Statement]] = defaultdict(list)
    for c in candidates:
        by_field[c.field].append(c)
    added = 0
    for depth in range(max((len(g) for g in by_field.values()), default=0)):
        for group in by_field.values():
            if depth < len(group) and added < k and fit(group[depth]):
                chosen.append(group[depth])
                added += 1


def statement_item(
    spec_name: str,
    seed: int,
    template: QuestionTemplate,
    fact: Fact,
    index: FieldIndex,
    options_per_item: int,
    position: int,
    version: str,
) -> Item | None:
    """Which of these statements about the fact's subject is true (the fact, beside three of the subject's facts made
    false) or false (the fact and two more of the subject's facts, beside one made false)? G1 checks the options as
    statement sets: each option is the set it asserts true (the statement itself; for 'false', the other three)."""
    rng = seeded(seed, template.id, fact.fact_id)
    pool = _statements(fact, index, [template.field, *template.fields], rng)
    entity_type = fact.entity_type or ""
    chosen = [_Statement(fact.text, True, (fact.fact_id,), fact.field or "", fact.value or "")]
    texts = {norm(fact.text)}

    def fit(s: _Statement) -> bool:
        ok = norm(s.text) not in texts and all(_compatible(s, c, index, entity_type) for c in chosen)
        if ok:
            texts.add(norm(s.text))
        return ok

    falses, trues = [s for s in pool if not s.true], [s for s in pool if s.true]
    if template.ask == "true_statement":
        _pick(falses, chosen, options_per_item - 1, fit)
    else:
        _pick(falses, chosen, 1, fit)  # the false one first, then the true ones that do not give it away
        _pick(trues, chosen, options_per_item - 2, fit)
    if len(chosen) != options_per_item or sum(not s.true for s in chosen) != (
        options_per_item - 1 if template.ask == "true_statement" else 1
    ):
        return None
    key = chosen[0] if template.ask == "true_statement" else next(s for s in chosen if not s.true)
    statements, answer_index = place_answer(key, [s for s in chosen if s is not key], position)
    n = len(statements)
    sets = (
        [[i] for i in range(n)]
        if template.ask == "true_statement"
        else [[j for j in range(n) if j != i] for i in range(n)]
    )
    fields_ = {"subject": fact.subject or "", "value": fact.value or "", "answer": key.text}
    corrections = "; ".join(
        f"\u201c{s.text}\u201d is false: the rulebook gives \u201c{s.correction}\u201d"
        for s in statements
        if not s.true
    )
    return Item(
        item_id=content_id(spec_name, "template", template.id, fact.fact_id),
        format="mcq4",
        question=one_article(template.question.format(**fields_)),
        options=tuple(s.text for s in statements),
        answer_index=answer_index,
        explanation=f"{one_article(template.explanation.format(**fields_))} {corrections}.",
        difficulty=template.difficulty,
        cognitive=template.cognitive,
        strategy="template",
        generator=DETERMINISTIC,
        prompt_version=version,
        facts={fact.fact_id: "answer", **{i: "context" for s in statements for i in s.sources if i != fact.fact_id}},
        parameters={
            "template": template.id,
            "ask": template.ask,
            "statements": [
                {
                    "text": s.text,
                    "true": s.true,
                    "sources": list(s.sources),
                    **({"claim": list(s.claim)} if s.claim else {}),
                }
                for s in statements
            ],
            "option_sets": sets,
            "grounding": {"ask": "statements", "slot_type": "statement", "option_types": ["statement"] * n},
        },
        option_facts=tuple(s.sources for s in statements),
    )
