"""Deterministic audit agents (OenoBench Tables 3-4): each is a versioned pure function item -> finding.

A finding's (run, item, agent, version) is unique in the store, so a new version adds findings beside the old.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Any, Literal

from benchmark_platform.audit.config import AuditConfig

Severity = Literal["pass", "warn", "fail"]


@dataclass(frozen=True)
class AuditItem:
    item_id: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    fact_texts: tuple[str, ...]
    expected_options: int


@dataclass(frozen=True)
class Finding:
    item_id: str
    agent: str
    agent_version: str
    severity: Severity
    payload: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Agent:
    name: str
    version: str
    critical: bool  # a critical failure drops the item from the release
    check: Callable[[AuditItem, AuditConfig], tuple[Severity, dict[str, Any]]]

    def run(self, item: AuditItem, config: AuditConfig) -> Finding:
        severity, payload = self.check(item, config)
        return Finding(item.item_id, self.name, self.version, severity, payload)


def _structure(item: AuditItem, _: AuditConfig) -> tuple[Severity, dict[str, Any]]:
    problems = []
    if len(item.options) != item.expected_options:
        problems.append(f"{len(item.options)} options, expected {item.expected_options}")
    if len({" ".join(o.lower().split()) for o in item.options}) != len(item.options):
        problems.append("duplicate options")
    if not 0 <= item.answer_index < len(item.options):
        problems.append("answer index outside the options")
    if any(not o.strip() for o in item.options):
        problems.append("empty option")
    return ("fail" if problems else "pass"), {"problems": problems}


def _lexical_hygiene(item: AuditItem, config: AuditConfig) -> tuple[Severity, dict[str, Any]]:
    text = item.question.lower()
    hits = sorted({term for term in config.vague_terms if re.search(rf"\b{re.escape(term.lower())}\b", text)})
    return ("fail" if hits else "pass"), {"vague_terms": hits}


def longest_common_substring_ratio(question: str, source: str) -> float:
    """Share of the question that is one verbatim run of the source (OenoBench A3)."""
    if not question:
        return 0.0
    a, b = question.lower(), source.lower()
    match = SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0, len(b))
    return match.size / len(a)


def _fact_echo(item: AuditItem, config: AuditConfig) -> tuple[Severity, dict[str, Any]]:
    ratio = max((longest_common_substring_ratio(item.question, fact) for fact in item.fact_texts), default=0.0)
    return ("fail" if ratio >= config.fact_echo_fail else "pass"), {"lcs_ratio": round(ratio, 4)}


STRUCTURE = Agent("structure", "1", critical=True, check=_structure)
A1_LEXICAL_HYGIENE = Agent("A1_lexical_hygiene", "1", critical=True, check=_lexical_hygiene)
A3_FACT_ECHO = Agent("A3_fact_echo", "1", critical=True, check=_fact_echo)
DETERMINISTIC_AGENTS: tuple[Agent, ...] = (STRUCTURE, A1_LEXICAL_HYGIENE, A3_FACT_ECHO)


def audit(items: list[AuditItem], config: AuditConfig, agents: tuple[Agent, ...] = DETERMINISTIC_AGENTS) -> list[Finding]:
    return [agent.run(item, config) for item in items for agent in agents]


def dropped_items(findings: list[Finding], agents: tuple[Agent, ...] = DETERMINISTIC_AGENTS) -> set[str]:
    """The policy: an item with a failure from a critical agent is dropped."""
    critical = {a.name for a in agents if a.critical}
    return {f.item_id for f in findings if f.severity == "fail" and f.agent in critical}
