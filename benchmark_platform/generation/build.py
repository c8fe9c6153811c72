"""One discipline's generation round: plan the slots, fill them from the selected facts, ask the generators through
the gateway, run the closed-book gate, and keep the closed-book-solvable share under the corpus cap.

Pure apart from the gateway: the caller loads the facts and stores the result. Reruns give the same items (seeded
choices, content-derived ids, and the gateway's cache answers every call a crashed run already paid for).
"""

from __future__ import annotations

import asyncio
import itertools
import math
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from pydantic import BaseModel

from benchmark_platform.embed import Embedder, integer_rows
from benchmark_platform.generation import llm_pseudo
from benchmark_platform.generation import strategies as st
from benchmark_platform.generation.config import DETERMINISTIC, STRATEGIES, GenerationConfig, QuestionTemplate
from benchmark_platform.generation.distractors import EntityCatalogue
from benchmark_platform.generation.model import Fact, Item, asked_question, norm
from benchmark_platform.generation.plan import Plan, Slot, balanced_positions, plan
from benchmark_platform.generation.pseudo_mcq import pseudo_item
from benchmark_platform.generation.templates import FieldIndex, matching_templates, template_item, templates_version
from benchmark_platform.llm import CallResult, ChatRequest, Gateway
from benchmark_platform.runtime import frozen_heap, single_threaded_blas

# (slot, request, payload the answer is read against, item parameters) of one LLM slot, and its answer
Entry = tuple[Slot, ChatRequest, Any, dict[str, Any]]
Answer = tuple[Entry, CallResult]
PseudoEntry = tuple[Slot, ChatRequest, list[Fact]]  # (slot, request, fact group) of an LLM pseudo-MCQ
E = TypeVar("E", Entry, PseudoEntry)

PSEUDO_DIFFICULTY, PSEUDO_COGNITIVE = "L3", "analysis"
BLOCK = 64  # selected facts mined / paired / clustered per matrix product
REQUEST_CHUNK = 64  # LLM requests of one strategy prepared per worker-thread hop and sent together


@dataclass
class GenerationResult:
    items: list[Item]
    reserve: list[Item]  # closed-book-solvable items over the corpus cap (OenoBench B.4's reserve pool)
    plan: Plan
    unfilled: Counter[str] = field(default_factory=Counter)  # slots without a usable fact, per strategy
    invalid: Counter[str] = field(default_factory=Counter)  # LLM answers rejected, per strategy
    rejections: list[str] = field(default_factory=list)  # why LLM pseudo-MCQs were rejected (the validator's reasons)

    def tally(self, attr: str) -> dict[str, int]:
        """Items per value of an Item attribute ('strategy', 'generator', 'format', ...)."""
        return dict(sorted(Counter(getattr(i, attr) for i in self.items).items()))

    def counts(self) -> dict[str, int]:
        return {
            "items": len(self.items),
            "reserve": len(self.reserve),
            "slots": len(self.plan.slots),
            "unfilled": sum(self.unfilled.values()),
            "invalid": sum(self.invalid.values()),
            "cap_overflow": self.plan.cap_overflow,
            "generator_cap": self.plan.generator_cap,
        }


class _Context:
    """What the strategies draw on: indexes over the discipline's facts, built once."""

    def __init__(self, selected: list[Fact], pool: list[Fact], config: GenerationConfig, embedder: Embedder) -> None:
        seen = {f.fact_id for f in selected}
        self.everything = selected + [f for f in pool if f.fact_id not in seen]
        self.index = FieldIndex(self.everything)
        # a place name that several states share ('Lake' county) is asked about nowhere (issue 24)
        self.selected = [f for f in selected if not self.index.ambiguous_place(f)]
        self.catalogue = EntityCatalogue(self.everything, embedder)
        self.templates = config.templates
        self.options, self.pseudo = config.options_per_item, config.pseudo_mcq
        self.embedder = embedder
        self.by_subject: dict[tuple[str, str], list[Fact]] = defaultdict(list)
        self.by_entity: dict[str, list[Fact]] = defaultdict(list)
        for f in self.everything:
            if f.structured and f.entity_type:
                self.by_subject[(f.entity_type, norm(f.subject or ""))].append(f)
                if f.question_material:
                    self.by_entity[f.entity_key].append(f)
        self._vectors: np.ndarray | None = None
        self._row: dict[str, int] = {}
        self._streams: dict[str, tuple[list[Any], Iterator[Any]]] = {}

    def stream(self, name: str) -> Iterator[Any]:
        """The named candidates (mined, pairs, pseudo groups, template items), computed once and lazily."""
        made, source = self._streams.setdefault(name, ([], getattr(self, name)()))
        i = 0
        while True:
            if i == len(made):
                nxt = next(source, None)
                if nxt is None:
                    return
                made.append(nxt)
            yield made[i]
            i += 1

    def count(self, name: str, needed: int) -> int:
        """How many candidates the named stream has, looking no further than `needed`."""
        return sum(1 for _ in itertools.islice(self.stream(name), needed))

    def _blocks(self) -> Iterator[list[Fact]]:
        for at in range(0, len(self.selected), BLOCK):
            yield self.selected[at : at + BLOCK]

    def mined(self) -> Iterator[st.Mined]:
        """Selected facts with an entity to ask for and three confusable distractors, in rank order."""
        return (m for block in self._blocks() for m in st.mine_all(block, self.catalogue, self.index) if m is not None)

    def pairs(self) -> Iterator[tuple[Fact, Fact]]:
        """Selected structured facts with their entity-affinity partner, in rank order."""
        return (
            (f, p)
            for block in self._blocks()
            for f, p in zip(block, st.partners(block, self.index, self.by_subject, self.catalogue), strict=True)
            if p is not None
        )

    def available(self) -> set[str]:
        out = {"fact_to_question"} if self.selected else set()
        if any(matching_templates(self.templates, f) for f in self.selected):
            out.add("template")
        if self.count("mined", 1):
            out.add("distractor_mining")
        if self.count("pairs", 1):
            out.add("comparative")
        if len(self.everything) >= 3 and self.selected:
            out.add("scenario")
        return out

    def template_items(self) -> Iterator[tuple[Fact, QuestionTemplate]]:
        """(fact, template) pairs whose item can be built and asks a question not asked before."""
        asked: set[str] = set()
        for fact, template in self.template_pairs():
            item = template_item("", 0, template, fact, self.index, self.options, 0, "")
            if item is None:
                continue
            question = asked_question(item.question, item.options, template.ask)
            if question not in asked:
                asked.add(question)
                yield fact, template

    def pseudo_ok(self) -> Iterator[list[Fact]]:
        """Pseudo-MCQ fact groups the builder accepts."""
        return (
            g
            for g in self.pseudo_groups()
            if pseudo_item("", 0, g, self.index, self.pseudo, 0, PSEUDO_DIFFICULTY, PSEUDO_COGNITIVE) is not None
        )

    def limits(self, the_plan: Plan) -> dict[str, int]:
        """Strategies (and the pseudo format) whose candidates fall short of the plan, with what they can make."""
        planned: Counter[str] = Counter(s.strategy for s in the_plan.slots)
        pseudo = sum(s.format == "pseudo_mcq10" for s in the_plan.slots)  # template and LLM (scenario) slots
        template_pseudo = sum(s.format == "pseudo_mcq10" and s.strategy == "template" for s in the_plan.slots)
        have = {
            "distractor_mining": self.count("mined", planned["distractor_mining"]),
            "comparative": self.count("pairs", planned["comparative"]),
            "scenario": len(self.selected) if len(self.everything) >= 3 else 0,
            "fact_to_question": len(self.selected),
            "pseudo_mcq10": self.count("pseudo_ok", pseudo),
        }
        have["template"] = (
            self.count("template_items", planned["template"] - min(template_pseudo, have["pseudo_mcq10"]))
            + have["pseudo_mcq10"]
        )
        out = {k: v for k, v in have.items() if k in planned and v < planned[k]}
        if have["pseudo_mcq10"] < pseudo:
            out["pseudo_mcq10"] = have["pseudo_mcq10"]
        return out

    def template_pairs(self) -> Iterator[tuple[Fact, QuestionTemplate]]:
        """(fact, template) in rank order, each fact's templates rotated so consecutive facts vary."""
        per_fact = [(r, f, matching_templates(self.templates, f)) for r, f in enumerate(self.selected)]
        depth = max((len(ts) for _, _, ts in per_fact), default=0)
        for round_ in range(depth):
            for r, f, ts in per_fact:
                if round_ < len(ts):
                    yield f, ts[(r + round_) % len(ts)]

    def pseudo_groups(self) -> Iterator[list[Fact]]:
        """A structured selected fact and further statements: facts about the same entity (several statements about
        one appellation, its fields taken in turn) when it has enough of them, else facts of its entity type about
        other subjects, one per statement."""
        structured = [f for f in self.selected if f.structured]
        for i, seed in enumerate(structured):
            about = _one_per_field_in_turn(seed, self.by_entity.get(seed.entity_key, []), self.pseudo.statements)
            if about is not None:
                yield about
                continue
            group, subjects = [seed], {norm(seed.subject or "")}
            for other in structured[i + 1 :] + structured[:i] + self.everything:
                if (
                    other.structured
                    and other.entity_type == seed.entity_type
                    and norm(other.subject or "") not in subjects
                ):
                    group.append(other)
                    subjects.add(norm(other.subject or ""))
                if len(group) == self.pseudo.statements:
                    break
            yield group

    def clusters(self) -> Iterator[list[Fact]]:
        """Each selected fact with its 2-4 nearest facts by text embedding (cluster sizes 3, 4, 5 in turn)."""
        vectors = self._vectors
        if vectors is None:
            vectors = self._vectors = integer_rows(self.embedder.encode([f.text for f in self.everything]))
            self._row = {f.fact_id: i for i, f in enumerate(self.everything)}
        for at, block in zip(range(0, len(self.selected), BLOCK), self._blocks(), strict=True):
            sizes = [min(3 + (at + i) % 3, len(self.everything)) for i in range(len(block))]
            yield from st.clusters(block, sizes, self.everything, vectors, self._row)


def _one_per_field_in_turn(seed: Fact, about: list[Fact], size: int) -> list[Fact] | None:
    """`size` facts about the seed's entity, the seed first, then a fact of each other field in turn (so a stem
    mixes varieties, yields, alcohol, ageing ... of one appellation); None when the entity has too few."""
    by_field: dict[str, list[Fact]] = defaultdict(list)
    for f in about:
        if f.fact_id != seed.fact_id:
            by_field[f.field or ""].append(f)
    queues = [by_field[k] for k in sorted(by_field, key=lambda k: (k == seed.field, k))]
    group, texts = [seed], {norm(seed.text)}
    for depth in range(max((len(q) for q in queues), default=0)):
        for queue in queues:
            if depth < len(queue) and norm(queue[depth].text) not in texts and len(group) < size:
                group.append(queue[depth])
                texts.add(norm(queue[depth].text))
    return group if len(group) == size else None


def _fill(
    slots: list[Slot], candidates: Iterator[Any], build: Callable[[Slot, Any], Item | None]
) -> tuple[list[Item], int]:
    """Give each slot the next candidate `build` accepts; returns (built, unfilled count)."""
    out: list[Item] = []
    for slot in slots:
        for candidate in candidates:
            made = build(slot, candidate)
            if made is not None:
                out.append(made)
                break
        else:
            return out, len(slots) - len(out)
    return out, 0


async def generate(
    spec_name: str,
    seed: int,
    discipline: str,
    config: GenerationConfig,
    selected: list[Fact],
    pool: list[Fact],
    audited: Mapping[str, tuple[int, int]],
    embedder: Embedder,
    gateway: Gateway | None = None,
    ordinal: int = 0,
) -> GenerationResult:
    """`ordinal`: the discipline's place in the taxonomy; answer positions are rotated by it, so that disciplines
    with few items of a format do not all put their answers in the same places."""
    if config.generators and gateway is None:
        raise ValueError(f"generation.generators {config.generators} need an LLM gateway")
    # mining and clustering are many small products next to the event loop; the round's allocations should not make
    # the collector walk the loaded facts and indexes again and again (see runtime.py for the measurements)
    with single_threaded_blas(), frozen_heap():
        return await _generate(spec_name, seed, discipline, config, selected, pool, audited, embedder, gateway, ordinal)


async def _generate(
    spec_name: str,
    seed: int,
    discipline: str,
    config: GenerationConfig,
    selected: list[Fact],
    pool: list[Fact],
    audited: Mapping[str, tuple[int, int]],
    embedder: Embedder,
    gateway: Gateway | None,
    ordinal: int,
) -> GenerationResult:
    # salience (facts stage): a fact that is not question material never becomes an item's answer; it stays in the
    # pool, where it can still supply distractors
    selected = [f for f in selected if f.question_material]
    ctx = _Context(selected, pool, config, embedder)
    n, available, limits = config.items_per_discipline or len(selected), ctx.available(), {}
    the_plan = plan(n, config, audited, available)
    for _ in range(len(STRATEGIES) + 1):  # re-plan while some strategy lacks the facts for its share
        short = ctx.limits(the_plan)
        if not short:
            break
        limits.update(short)
        the_plan = plan(n, config, audited, available, limits)
    slots_by = defaultdict(list)
    for slot in the_plan.slots:
        slots_by[(slot.strategy, slot.generator == DETERMINISTIC, slot.format)].append(slot)
    positions = {
        fmt: iter(balanced_positions(sum(s.format == fmt for s in the_plan.slots), k, seed, fmt))
        for fmt, k in (("mcq4", config.options_per_item), ("pseudo_mcq10", config.pseudo_mcq.options))
    }
    width = {"mcq4": config.options_per_item, "pseudo_mcq10": config.pseudo_mcq.options}
    pos = {s.index: (next(positions[s.format]) + ordinal) % width[s.format] for s in the_plan.slots}
    result = GenerationResult([], [], the_plan)
    version = templates_version(config.templates)

    # deterministic slots
    made, result.unfilled["template"] = _fill(
        slots_by[("template", True, "mcq4")],
        ctx.stream("template_items"),
        lambda s, c: template_item(
            spec_name, seed, c[1], c[0], ctx.index, config.options_per_item, pos[s.index], version
        ),
    )
    result.items += made
    pseudo_groups = ctx.stream("pseudo_ok")  # one iterator: the LLM pseudo slots take the groups after these
    made, missing = _fill(
        slots_by[("template", True, "pseudo_mcq10")],
        pseudo_groups,
        lambda s, g: pseudo_item(
            spec_name, seed, g, ctx.index, config.pseudo_mcq, pos[s.index], PSEUDO_DIFFICULTY, PSEUDO_COGNITIVE
        ),
    )
    result.items += made
    result.unfilled["template"] += missing
    mined_iter = ctx.stream("mined")
    made, result.unfilled["distractor_mining"] = _fill(
        slots_by[("distractor_mining", True, "mcq4")],
        mined_iter,
        lambda s, m: st.cloze_item(spec_name, m, pos[s.index], s.cognitive),
    )
    result.items += made

    # LLM pseudo-MCQ slots (a share of the scenario slots, see plan.py): asked now, read back after the other slots
    pseudo_asked = _ask_pseudo(gateway, the_plan, pseudo_groups, config, seed, result)

    # LLM slots: one request each, prepared by one producer per strategy, so a slow input (the first scenario slot
    # embeds every fact) holds back no other strategy. A producer prepares REQUEST_CHUNK slots per worker-thread hop
    # (mining, pairing, clustering: the event loop keeps serving the calls in flight) and hands them to the gateway
    # at once. Answers are read back in slot order, so timing changes nothing.
    llm_slots = [s for s in the_plan.slots if s.generator != DETERMINISTIC and s.format == "mcq4"]
    sources: dict[str, Iterator[Any]] = {
        "fact_to_question": iter(ctx.selected),
        "distractor_mining": mined_iter,
        "comparative": ctx.stream("pairs"),
        "scenario": ctx.clusters() if llm_slots else iter(()),
    }
    kinds = config.scenario_types_for(discipline)

    async def produce(strategy: str) -> list[Answer]:
        slots = [s for s in llm_slots if s.strategy == strategy]
        schema = st.MinedQuestion if strategy == "distractor_mining" else st.McqDraft
        asked: list[asyncio.Task[list[Answer]]] = []
        for at in range(0, len(slots), REQUEST_CHUNK):
            chunk = slots[at : at + REQUEST_CHUNK]
            entries = await asyncio.to_thread(_llm_entries, chunk, sources[strategy], seed, kinds)
            result.unfilled[strategy] += len(chunk) - len(entries)
            asked.append(asyncio.create_task(_ask(gateway, entries, schema)))
        return [answer for batch in await asyncio.gather(*asked) for answer in batch]

    answers = [a for batch in await asyncio.gather(*map(produce, sources)) for a in batch]
    for entry, res in sorted(answers, key=lambda a: a[0][0].index):
        slot = entry[0]
        if slot.strategy == "distractor_mining":
            item = (
                st.mined_item(
                    spec_name,
                    slot.generator,
                    entry[2],
                    res.parsed,
                    pos[slot.index],
                    slot.difficulty or "L2",
                    slot.cognitive,
                )
                if res.ok
                else None
            )
        else:
            item = (
                st.draft_item(
                    spec_name,
                    slot.strategy,
                    slot.generator,
                    entry[2],
                    res.parsed,
                    pos[slot.index],
                    slot.difficulty or "L2",
                    slot.cognitive,
                    entry[3],
                )
                if res.ok
                else None
            )
        if item is None:
            result.invalid[slot.strategy] += 1
        else:
            result.items.append(item)
    await _read_pseudo(pseudo_asked, spec_name, config, pos, result)

    result.items = list({i.item_id: i for i in result.items}.values())
    await _gate(result, config, seed, gateway)
    return result


def _llm_entries(slots: list[Slot], source: Iterator[Any], seed: int, kinds: list[str]) -> list[Entry]:
    """(slot, request, payload, parameters) for each slot of one LLM strategy, drawing its inputs from `source`
    (facts, mined answers, fact pairs or fact clusters); stops when the source runs out."""
    entries: list[Entry] = []
    for slot in slots:
        args = {"difficulty": slot.difficulty or "L2", "cognitive": slot.cognitive}
        drawn = next(source, None)
        if drawn is None:
            break
        if slot.strategy == "distractor_mining":
            entries.append(
                (
                    slot,
                    st.request(
                        slot.strategy,
                        slot.generator,
                        seed,
                        {
                            **args,
                            "fact_id": drawn.fact.fact_id,
                            "fact": drawn.fact.text,
                            "answer": drawn.entity.surface,
                            "distractors": "; ".join(n for n, _ in reversed(drawn.distractors)),
                        },
                    ),
                    drawn,
                    {},
                )
            )
            continue
        if slot.strategy == "fact_to_question":
            prompt_args, facts, params = {"fact_id": drawn.fact_id, "fact": drawn.text}, {drawn.fact_id: "answer"}, {}
        elif slot.strategy == "comparative":
            a, b = drawn
            prompt_args = {"fact_a_id": a.fact_id, "fact_a": a.text, "fact_b_id": b.fact_id, "fact_b": b.text}
            facts, params = {a.fact_id: "answer", b.fact_id: "answer"}, {"field": a.field}
        else:
            kind = kinds[slot.index % len(kinds)]
            prompt_args = {"scenario_type": kind, "facts": "\n".join(f"[{f.fact_id}] {f.text}" for f in drawn)}
            facts = {f.fact_id: "answer" for f in drawn}
            params = {"scenario_type": kind, "cluster_size": len(drawn)}
        entries.append((slot, st.request(slot.strategy, slot.generator, seed, {**args, **prompt_args}), facts, params))
    return entries


def _ask_pseudo(
    gateway: Gateway | None,
    the_plan: Plan,
    groups: Iterator[list[Fact]],
    config: GenerationConfig,
    seed: int,
    result: GenerationResult,
) -> asyncio.Task[list[tuple[PseudoEntry, CallResult]]] | None:
    """The LLM pseudo-MCQ requests, one per planned slot with the next fact group, sent as one task."""
    entries = []
    for slot in (s for s in the_plan.slots if s.generator != DETERMINISTIC and s.format == "pseudo_mcq10"):
        group = next(groups, None)
        if group is None:
            result.unfilled[slot.strategy] += 1
            continue
        group = group[: config.pseudo_mcq.statements]
        entries.append(
            (
                slot,
                llm_pseudo.request(
                    group,
                    config.pseudo_mcq,
                    slot.generator,
                    seed,
                    slot.difficulty or PSEUDO_DIFFICULTY,
                    PSEUDO_COGNITIVE,
                ),
                group,
            )
        )
    return asyncio.create_task(_ask(gateway, entries, llm_pseudo.PseudoMcqDraft)) if entries else None


async def _read_pseudo(
    asked: asyncio.Task[list[tuple[PseudoEntry, CallResult]]] | None,
    spec_name: str,
    config: GenerationConfig,
    pos: dict[int, int],
    result: GenerationResult,
) -> None:
    """Items from the valid answers; an answer the schema or the pseudo-MCQ validator rejects counts as invalid."""
    for (slot, _, group), res in await asked if asked is not None else []:
        item, reasons = (
            (None, [f"answer {res.status}: {res.error or ''}"])
            if not res.ok
            else llm_pseudo.draft_item(
                spec_name,
                slot.strategy,
                slot.generator,
                group,
                res.parsed,
                config.pseudo_mcq,
                pos[slot.index],
                slot.difficulty or PSEUDO_DIFFICULTY,
                PSEUDO_COGNITIVE,
            )
        )
        if item is None:
            result.invalid[slot.strategy] += 1
            result.rejections.append(f"slot {slot.index} ({slot.generator}): {'; '.join(reasons)}")
        else:
            result.items.append(item)


async def _ask(gateway: Gateway | None, entries: Sequence[E], schema: type[BaseModel]) -> list[tuple[E, CallResult]]:
    assert gateway is not None, "LLM slots need a gateway"
    results = await gateway.complete_many([entry[1] for entry in entries], schema)
    return list(zip(entries, results, strict=True))


async def _gate(result: GenerationResult, config: GenerationConfig, seed: int, gateway: Gateway | None) -> None:
    """Closed-book gate per difficulty (L4 skipped) and the corpus cap on the solvable share."""
    asked = []
    for item in result.items:
        model = next((m for tier, m in config.gate.models.items() if tier == item.difficulty), None)
        if item.difficulty == "L4":
            item.gate_result = "skipped"
        elif model is not None and gateway is not None:
            asked.append((item, st.gate_request(item, model, seed)))
    if asked and gateway is not None:  # asked only with a gateway
        answers = await gateway.complete_many([r for _, r in asked], st.GateAnswer)
        for (item, _), res in zip(asked, answers, strict=True):
            if not res.ok:
                item.gate_result = "gate_error"
                continue
            letter = res.parsed.answer.strip().upper()[:1]
            solved = letter == st.LETTERS[item.answer_index]
            item.gate_result = "closed_book_solvable" if solved else "not_solvable"
    cap = config.gate.max_solvable_share
    solvable = [i for i in result.items if i.gate_result == "closed_book_solvable"]
    n = len(result.items)
    excess = len(solvable) - cap * n
    reserve_n = 0 if excess <= 0 else (len(solvable) if cap >= 1 else math.ceil(excess / (1 - cap) - 1e-9))
    reserved = {i.item_id for i in sorted(solvable, key=lambda i: i.item_id)[:reserve_n]}
    result.reserve = [i for i in result.items if i.item_id in reserved]
    result.items = [i for i in result.items if i.item_id not in reserved]
