"""Salience of a fact as question material (issue 20): a score in [0, 1] with the reasons that lowered it.

A fact whose value is an identifier (a permit number, a regulation section, a registry code, a bare date, a street
address) can only be memorised, not known; a source or relation the spec marks as gazetteer material (permittee
rows) names entities but asks nothing worth knowing. Both stay facts (entity gazetteer, distractor pool); only a
fact at or above the spec's `min_score` is question material for selection and generation.
"""

from __future__ import annotations

import dataclasses
import re
from functools import cache

from benchmark_platform.facts.config import SalienceConfig
from benchmark_platform.facts.models import Candidate


@cache
def _compiled(patterns: tuple[tuple[str, str], ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((reason, re.compile(pattern)) for reason, pattern in patterns)


def identifier_reasons(value: str, patterns: dict[str, str]) -> list[str]:
    """The identifier kinds `value` looks like (empty: none)."""
    return [reason for reason, pattern in _compiled(tuple(patterns.items())) if pattern.search(value)]


def salience(candidate: Candidate, config: SalienceConfig) -> tuple[float, list[str]]:
    """(score, reasons): the lowest score of the matching spec rules and identifier patterns; the default without."""
    score, reasons = config.default_score, []
    relation = candidate.attributes.get("field") or candidate.method
    for rule in config.rules:
        value_matches = rule.value is None or rule.value == candidate.attributes.get("value")
        if rule.value_in_subject:
            named, subject = (str(candidate.attributes.get(k) or "").lower() for k in ("value", "subject"))
            value_matches = value_matches and bool(named) and named in subject
        if rule.source in (None, candidate.source_id) and rule.field in (None, relation) and value_matches:
            score = min(score, rule.score)
            reasons.append(rule.reason)
    value = candidate.attributes.get("value")
    if value is not None:
        for kind in identifier_reasons(str(value), config.identifier_patterns):
            score = min(score, config.identifier_score)
            reasons.append(f"answer is an identifier: {kind}")
    return score, reasons


def with_salience(candidate: Candidate, config: SalienceConfig) -> Candidate:
    """The candidate with attributes['salience'] = {score, reasons, question_material}."""
    score, reasons = salience(candidate, config)
    record = {"score": round(score, 3), "reasons": reasons, "question_material": score >= config.min_score}
    return dataclasses.replace(candidate, attributes={**candidate.attributes, "salience": record})


def is_question_material(candidate: Candidate) -> bool:
    return bool(candidate.attributes.get("salience", {}).get("question_material", True))
