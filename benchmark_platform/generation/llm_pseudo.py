"""KINA's 10-option pseudo-MCQ written by a generator (KINA 4, E.2.3): the request over a group of facts, the schema
its answer must satisfy, and the conversion to an item, which the pseudo-MCQ validator then judges.

The schema checks only the shape (types, non-empty texts); the KINA rules (>= 6 statements, exactly 10 distinct
options, no proper subsets, balanced sizes, exactly one correct, an explanation with sources per option) are
`pseudo_mcq.validate`'s, and the traceability rules (one statement per fact of the group, sources from the group)
are checked here. Anything rejected is returned with its reasons and stores nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.generation import strategies as st
from benchmark_platform.generation.config import PseudoMcqConfig
from benchmark_platform.generation.model import Fact, Item, OptionExplanation
from benchmark_platform.generation.pseudo_mcq import PseudoMcq, Statement, to_item, validate
from benchmark_platform.llm import ChatRequest

PROMPT = "pseudo_mcq"


class DraftStatement(BaseModel):
    model_config = ConfigDict(extra="ignore")
    fact_id: str = Field(min_length=1)
    text: str = Field(min_length=5)
    true: bool
    correction: str = ""


class DraftOption(BaseModel):
    model_config = ConfigDict(extra="ignore")
    statements: list[int]  # 1-based statement numbers
    explanation: str = ""  # empty or missing sources: the validator names the option
    sources: list[str] = Field(default_factory=list)


class PseudoMcqDraft(BaseModel):
    """What the pseudo-MCQ prompt must return."""

    model_config = ConfigDict(extra="ignore")
    statements: list[DraftStatement] = Field(min_length=1)
    options: list[DraftOption] = Field(min_length=1)
    answer: int  # 1-based number of the correct option


def request(
    group: list[Fact], config: PseudoMcqConfig, model: str, seed: int, difficulty: str, cognitive: str
) -> ChatRequest:
    return st.request(
        PROMPT,
        model,
        seed,
        {
            "difficulty": difficulty,
            "cognitive": cognitive,
            "true_statements": str(config.true_statements),
            "n_statements": str(len(group)),
            "max_size_spread": str(config.max_size_spread),
            "facts": "\n".join(f"[{f.fact_id}] {f.text}" for f in group),
        },
    )


def _traced(draft: PseudoMcqDraft, group: list[Fact]) -> list[str]:
    """Reasons the draft is not traced to its facts: one statement per fact of the group, sources from the group."""
    ids = [f.fact_id for f in group]
    cited = [s.fact_id.strip() for s in draft.statements]
    reasons = [
        f"statement {i + 1} cites {fid!r}, not a fact of the group" for i, fid in enumerate(cited) if fid not in ids
    ]
    reasons += [
        f"fact {fid} has {cited.count(fid)} statements, exactly one required" for fid in ids if cited.count(fid) != 1
    ]
    reasons += [
        f"option {i} cites sources outside the group: {sorted(set(o.sources) - set(ids))}"
        for i, o in enumerate(draft.options)
        if set(o.sources) - set(ids)
    ]
    return reasons


def _at(p: PseudoMcq, position: int) -> PseudoMcq:
    """The same item with its correct option moved to `position` (the plan balances positions), others in order."""
    order = [i for i in range(len(p.options)) if i != p.answer_index]
    position = min(position, len(order))
    order.insert(position, p.answer_index)
    return PseudoMcq(
        p.statements, tuple(p.options[i] for i in order), position, tuple(p.explanations[i] for i in order)
    )


def draft_item(
    spec_name: str,
    strategy: str,
    generator: str,
    group: list[Fact],
    draft: PseudoMcqDraft,
    config: PseudoMcqConfig,
    position: int,
    difficulty: str,
    cognitive: str,
) -> tuple[Item | None, list[str]]:
    """The item, or None with every reason the validator (or the traceability check) gives against it."""
    statements = tuple(
        Statement(s.text.strip(), s.true, (s.fact_id.strip(),), s.correction.strip()) for s in draft.statements
    )
    options = tuple(frozenset(n - 1 for n in o.statements) for o in draft.options)
    explanations = tuple(
        OptionExplanation(o.explanation.strip(), tuple(dict.fromkeys(s.strip() for s in o.sources)))
        for o in draft.options
    )
    pseudo = PseudoMcq(statements, options, draft.answer - 1, explanations)
    reasons = _traced(draft, group) + validate(pseudo, config)
    if reasons:
        return None, reasons
    placed = _at(pseudo, position)
    assert not validate(placed, config), "reordering options cannot break the format"
    key = "|".join(f.fact_id for f in group)
    return to_item(
        placed, spec_name, key, group, difficulty, cognitive, generator, strategy, st.prompt_version(PROMPT)
    ), []
