"""Filters 3-5 of OenoBench B.1: domain classification, length and predicate validation, on-topic filter.

Each returns the reason a candidate fails (a short stable string, counted in the quality report) or its result.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING

from benchmark_platform.facts.clauses import Clause, is_finite
from benchmark_platform.facts.config import FactsConfig, OnTopicRule
from benchmark_platform.facts.models import Mention

if TYPE_CHECKING:  # spaCy loads only where a document is parsed (facts/prose.py)
    from spacy.tokens import Token

_DANGLING_END = frozenset({"ADP", "DET", "CCONJ", "SCONJ"})
_MARKUP = re.compile(r"https?://|www\.|[\[\]{}|<>]|={2,}|\*\*|#{2,}")
_TERMINATED = re.compile(r"[.!?][\"'”’)\]]*$")
_PAIRS = (("(", ")"), ("[", "]"), ("“", "”"))


def classify(hits: Iterable[str], mentions: Iterable[Mention], config: FactsConfig) -> str:
    """The discipline with the highest score (lexicon hits + entity votes), ties going by `tie_order`;
    `Ambiguous` when no discipline scores, or several share the best score and none is in `tie_order`."""
    scores: dict[str, float] = dict(Counter(hits))  # hits count 1 each, entity votes `entity_vote` each
    for mention in mentions:
        discipline = config.entity_disciplines.get(mention.entity_type)
        if discipline is not None:
            scores[discipline] = scores.get(discipline, 0) + config.entity_vote
    if not scores:
        raise Ambiguous("no anchor term", "")
    best = max(scores.values())
    top = sorted(d for d, score in scores.items() if score == best)
    if len(top) > 1:
        ordered = [d for d in config.tie_order if d in top]
        if not ordered:
            raise Ambiguous("discipline tie", ", ".join(top))
        return ordered[0]
    return top[0]


class Ambiguous(ValueError):
    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(reason)
        self.reason, self.detail = reason, detail


def validate(clause: Clause, text: str, sentence_terminated: bool, config: FactsConfig) -> str | float:
    """The reason the clause is not a well-formed atomic fact, else its confidence (reduced for 31-50 words)."""
    words = len(text.split())
    if words < config.min_words:
        return f"fewer than {config.min_words} words"
    if words > config.max_words:
        return f"more than {config.max_words} words"
    if _MARKUP.search(text):
        return "markup residue"
    if not sentence_terminated:
        return "fragment: no sentence-final punctuation in the source"
    tokens = clause.tokens
    if not any(t.pos_ in ("VERB", "AUX") for t in tokens):
        return "no verb"
    if clause.head.pos_ not in ("VERB", "AUX"):
        return "fragment: no main verb"
    if not is_finite(clause.head):
        return "fragment: main verb not finite"  # 'Then proceeding west ...', imperatives
    first_word = next((t for t in tokens if t.is_alpha), None)
    if (
        not clause.has_subject
        and first_word is not None
        and (first_word == clause.head or first_word.head == clause.head and first_word.dep_.startswith("aux"))
    ):
        return "fragment: starts with its main verb"  # a clipped clause: 'Is located east of the river.'
    first = tokens[0]
    if not clause.split and (first.is_lower and first.is_alpha or first.pos_ in ("CCONJ", "PUNCT")):
        return "fragment: starts mid-sentence"
    last = _last_word(tokens)
    if last is None or last.pos_ in _DANGLING_END:
        return "fragment: dangling last word"
    if last.text.endswith(".") or (
        last.is_title and len(last.text) <= 3 and last.i + 1 < len(last.doc) and last.nbor().text == "."
    ):
        return "fragment: cut at an abbreviation"  # 'the intersection of the St.' or '... U.S.G.S.'
    if any(text.count(a) != text.count(b) for a, b in _PAIRS) or text.count('"') % 2:
        return "fragment: unbalanced brackets or quotes"
    return 1.0 if words <= config.full_confidence_max_words else config.reduced_confidence


def terminated(sentence_text: str) -> bool:
    return bool(_TERMINATED.search(sentence_text.rstrip()))


def _last_word(tokens: list[Token]) -> Token | None:
    return next((t for t in reversed(tokens) if not t.is_punct and not t.is_space), None)


class OnTopic:
    """Per-source keyword filter (OenoBench B.1 filter 5), matched on whole words, case-insensitively."""

    def __init__(self, rules: list[OnTopicRule]) -> None:
        self._rules = {rule.source: (_words(rule.keywords), _words(rule.off_topic)) for rule in rules}

    def off_topic(self, source_id: str, text: str) -> str | None:
        """The off-topic name that drops the text, or None when it stays."""
        rule = self._rules.get(source_id)
        if rule is None:
            return None
        keywords, off_topic = rule
        if keywords.search(text):
            return None
        found = off_topic.search(text)
        return found.group(0) if found else None


def _words(terms: list[str]) -> re.Pattern[str]:
    return re.compile(
        r"\b(?:" + "|".join(re.escape(t) for t in sorted(terms, key=len, reverse=True)) + r")\b", re.IGNORECASE
    )
