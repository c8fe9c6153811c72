"""Audit agents (OenoBench Tables 3-4, KINA 4.1): the shared types and the item-level deterministic agents.

Every agent has a name and a version; a finding's (run, item, agent, version) is unique in the store, so a new
version adds findings beside the old ones and never overwrites them. Item-level agents judge one item from its own
content (question, options, key, facts): their findings are reused across runs while that content is unchanged, so a
re-audit after new facts re-judges exactly the affected items. Pool-level agents (audit/pool.py) and LLM agents
(audit/judges.py) build on the same types.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from functools import cache, cached_property, lru_cache
from typing import TYPE_CHECKING, Any, Literal

from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.audit.grounding import AGENT as GROUNDING_AGENT
from benchmark_platform.audit.grounding import VERSION as GROUNDING_VERSION
from benchmark_platform.audit.grounding import Grounding, verify
from benchmark_platform.generation import norm

if TYPE_CHECKING:
    from matplotlib.mathtext import MathTextParser

Severity = Literal["pass", "warn", "fail"]
Check = tuple[Severity, dict[str, Any]]
LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class AuditItem:
    item_id: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    fact_texts: tuple[str, ...]
    expected_options: int | None  # None: any count (gold sheets hold true/false items)
    difficulty: str | None = None  # 'L1'..'L4'
    strategy: str | None = None
    generator: str | None = None
    group: str = ""  # D3's stratum (country / sub-domain); the discipline by default
    grounding: Grounding | None = None  # G1's input: the stem's claim and each option's proving facts (stored items)
    # texts of other facts on the same entity and attribute as a linked fact (they support or contradict the item)
    related_texts: tuple[str, ...] = ()

    @cached_property
    def input_hash(self) -> str:
        """What an item-level agent sees; a finding made on the same hash is still valid. Grounding and related
        facts join the hash only when there are some, so items without them keep the hash (and findings) they had."""
        payload: list[Any] = [self.question, list(self.options), self.answer_index, sorted(self.fact_texts)]
        payload.append(self.difficulty)
        if self.grounding is not None:  # items without one (gold sheets) keep their hash
            payload.append(self.grounding.digest)
        if self.related_texts:
            payload.append(sorted(self.related_texts))
        return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode()).hexdigest()[:32]

    @property
    def is_template(self) -> bool:
        return self.strategy is not None and (self.strategy == "template" or self.strategy.startswith("template:"))

    @property
    def tier(self) -> int | None:
        m = re.search(r"\d", self.difficulty or "")
        return int(m.group()) if m else None


@dataclass(frozen=True)
class Finding:
    item_id: str
    agent: str
    agent_version: str
    severity: Severity
    payload: dict[str, Any] = field(default_factory=dict)
    input_hash: str = ""
    carried_from: int | None = None  # the audit run whose identical finding this reuses


@dataclass(frozen=True)
class Agent:
    """An item-level deterministic agent; `check` returns None when the agent does not apply to the item."""

    name: str
    version: str
    check: Callable[[AuditItem, AuditConfig], Check | None]

    def run(self, item: AuditItem, config: AuditConfig) -> Finding | None:
        out = self.check(item, config)
        return None if out is None else Finding(item.item_id, self.name, self.version, out[0], out[1], item.input_hash)


@cache
def _terms_pattern(terms: tuple[str, ...]) -> re.Pattern[str]:
    """One alternation of whole-word terms (longest first), compiled once per term list."""
    alternatives = "|".join(re.escape(t.lower()) for t in sorted(terms, key=len, reverse=True))
    return re.compile(rf"(?<!\w)(?:{alternatives})(?!\w)")


def _matches(text: str, terms: list[str]) -> set[str]:
    """The terms occurring in the lower-cased text as whole words (overlapping terms included)."""
    if not terms:
        return set()
    found = {m.group() for m in _terms_pattern(tuple(terms)).finditer(text)}
    # a shorter term inside a longer match ("pinot" in "pinot noir") is only reported when it also stands alone
    return {t for t in terms if t.lower() in found}


def _structure(item: AuditItem, _: AuditConfig) -> Check:
    problems = []
    if item.expected_options is not None and len(item.options) != item.expected_options:
        problems.append(f"{len(item.options)} options, expected {item.expected_options}")
    if len({norm(o) for o in item.options}) != len(item.options):
        problems.append("duplicate options")
    if not 0 <= item.answer_index < len(item.options):
        problems.append("answer index outside the options")
    if any(not o.strip() for o in item.options):
        problems.append("empty option")
    return ("fail" if problems else "pass"), {"problems": problems}


def _lexical_hygiene(item: AuditItem, config: AuditConfig) -> Check:
    """A1: vague phrasing, marketing language and meta-questions in the stem."""
    # precise phrases containing a vague word ("how many") are matched as wholes, so the word inside them is not a hit
    found = _matches(item.question.lower(), [*config.vague_terms, *config.precise_phrases])
    hits = sorted(found.intersection(config.vague_terms).difference(config.precise_phrases))
    return ("fail" if hits else "pass"), {"vague_terms": hits}


def longest_common_substring_ratio(question: str, source: str) -> float:
    """Share of the question that is one verbatim run of the source (OenoBench A3)."""
    if not question:
        return 0.0
    a, b = question.lower(), source.lower()
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size / len(a)


def _fact_echo(item: AuditItem, config: AuditConfig) -> Check:
    """A3: the question copies its source fact verbatim."""
    ratio = max((longest_common_substring_ratio(item.question, fact) for fact in item.fact_texts), default=0.0)
    return ("fail" if ratio >= config.fact_echo_fail else "pass"), {"lcs_ratio": round(ratio, 4)}


_REGION_QUESTION = re.compile(
    r"\b(which|what|where)\b[^?]*\b(region|country|appellation|area|district|ava|doc|docg|aoc|do|state|valley|"
    r"located|grown|planted)\b",
    re.IGNORECASE,
)


def _ubiquity_risk(item: AuditItem, config: AuditConfig) -> Check:
    """B3: an internationally grown grape in the stem with a region-class answer: several options may be right."""
    grapes = sorted(_matches(item.question.lower(), config.international_grapes))
    region_answer = bool(_REGION_QUESTION.search(item.question))
    flagged = bool(grapes) and region_answer
    return ("fail" if flagged else "pass"), {"international_grapes": grapes, "region_answer": region_answer}


def _categories(text: str, config: AuditConfig) -> set[str]:
    low = text.lower()
    return {cat for cat, terms in config.category_terms.items() if _matches(low, terms)}


def _category_leak(item: AuditItem, config: AuditConfig) -> Check:
    """C2: wine-type distractor validation. Fails when the stem names a wine category and only the key belongs to it
    (the category alone gives the answer away); warns when the key belongs to another category than the stem's."""
    if not 0 <= item.answer_index < len(item.options):
        return "pass", {"skipped": "no valid key (see structure)"}
    asked = _categories(item.question, config)
    option_cats = [_categories(o, config) for o in item.options]
    key_cats = option_cats[item.answer_index]
    distractor_cats = [c for i, c in enumerate(option_cats) if i != item.answer_index]
    leaks = sorted(c for c in asked & key_cats if all(d and c not in d for d in distractor_cats))
    mismatch = sorted(asked - key_cats) if asked and key_cats and not asked & key_cats else []
    severity: Severity = "fail" if leaks else "warn" if mismatch else "pass"
    return severity, {"stem_categories": sorted(asked), "leaked_categories": leaks, "key_mismatch": mismatch}


@cache
def _math_parser() -> MathTextParser[Any]:
    from matplotlib.mathtext import MathTextParser

    return MathTextParser("path")


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$", re.DOTALL)
_TEX_MARKUP = re.compile(r"[\\^_{}]")
_TEX_COMMAND = re.compile(r"\\[A-Za-z]+")


def latex_problems(text: str) -> list[str]:
    """Math segments ($...$, $$...$$) with TeX markup that matplotlib's mathtext cannot parse and lay out, and an
    unbalanced '$' in a text that uses TeX commands.

    mathtext is a real TeX-math parser and renderer (already pinned for the plots); pylatexenc was not chosen because
    it is lenient by design: it tokenises malformed math without an error, so it cannot tell that a formula breaks.
    """
    problems: list[str] = []
    if "$" not in text:
        return problems
    if (text.count("$") - text.count(r"\$")) % 2 and _TEX_COMMAND.search(text):  # a lone '$' of an amount is text
        problems.append("unbalanced $")
    for m in _MATH.finditer(text.replace(r"\$", "")):
        expr = m.group(1) or m.group(2)
        if _TEX_MARKUP.search(expr):  # plain text between two '$' (e.g. amounts): nothing to compile
            problem = _math_problem(expr)
            if problem is not None:
                problems.append(problem)
    return problems


@lru_cache(maxsize=1 << 16)
def _math_problem(expr: str) -> str | None:
    """Why mathtext cannot lay out $expr$, or None (cached: options and stems repeat formulas)."""
    try:
        _math_parser().parse(f"${expr}$", dpi=72)
    except ValueError as e:
        return f"${expr}$: {str(e).splitlines()[-1].strip() or 'unparseable'}"
    return None


def _formatting(item: AuditItem, config: AuditConfig) -> Check | None:
    """K2 (KINA 4.1): every formula in the stem and options parses and renders."""
    if config.kina is None:
        return None
    problems = [p for text in (item.question, *item.options) for p in latex_problems(text)]
    return ("fail" if problems else "pass"), {"latex_problems": problems}


@cache
def _identifier_patterns(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((reason, re.compile(pattern)) for reason, pattern in patterns)


_STEM_IDENTIFIER = re.compile(r"\b(?:27 CFR|CFR section|permit (?:number )?[A-Z]{2}-|TTB permit|registry code)", re.I)


def _salience(item: AuditItem, config: AuditConfig) -> Check:
    """S1 (issue 20): an item whose keyed answer is an identifier (permit number, regulation section, registry code,
    bare date, street address) or whose stem asks through one tests memory of a register, not knowledge."""
    if not 0 <= item.answer_index < len(item.options):
        return "pass", {"skipped": "no valid key (see structure)"}
    key = item.options[item.answer_index]
    kinds = [r for r, p in _identifier_patterns(tuple(config.identifier_patterns.items())) if p.search(key)]
    stem = _STEM_IDENTIFIER.search(item.question)
    reasons = [f"answer is an identifier: {k}" for k in kinds] + ([f"stem cites {stem.group(0)!r}"] if stem else [])
    return ("fail" if reasons else "pass"), {"reasons": reasons}


def _grounding(item: AuditItem, _: AuditConfig) -> Check | None:
    """G1 (issue 24): every option's truth value follows from the stored facts linked to it (audit/grounding.py);
    it does not apply to items that are not stored (gold sheets)."""
    if item.grounding is None:
        return None
    return verify(item.question, item.options, item.answer_index, item.grounding)


STRUCTURE = Agent("structure", "1", _structure)
A1_LEXICAL_HYGIENE = Agent("A1_lexical_hygiene", "1", _lexical_hygiene)
A3_FACT_ECHO = Agent("A3_fact_echo", "1", _fact_echo)
B3_UBIQUITY_RISK = Agent("B3_ubiquity_risk", "1", _ubiquity_risk)
C2_CATEGORY_LEAK = Agent("C2_category_leak", "1", _category_leak)
K2_FORMATTING = Agent("K2_formatting", "1", _formatting)
S1_SALIENCE = Agent("S1_salience", "1", _salience)
G1_GROUNDING = Agent(GROUNDING_AGENT, GROUNDING_VERSION, _grounding)

# Item-level deterministic agents that give every item a verdict (K2 only on KINA-style specs).
DETERMINISTIC_AGENTS: tuple[Agent, ...] = (
    STRUCTURE,
    A1_LEXICAL_HYGIENE,
    A3_FACT_ECHO,
    B3_UBIQUITY_RISK,
    C2_CATEGORY_LEAK,
    S1_SALIENCE,
    G1_GROUNDING,
)
ITEM_AGENTS: tuple[Agent, ...] = (*DETERMINISTIC_AGENTS, K2_FORMATTING)


def audit(items: list[AuditItem], config: AuditConfig, agents: tuple[Agent, ...] = ITEM_AGENTS) -> list[Finding]:
    """Item-level deterministic findings of every item (no pool statistics, no LLM)."""
    return [f for item in items for agent in agents if (f := agent.run(item, config)) is not None]
