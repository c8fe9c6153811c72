"""Records of the facts stage: what it reads (documents), what it keeps (candidates, facts) and what it drops."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import Any, Literal

_DOUBLED_ARTICLE = re.compile(r"\b[Tt]he (?=The )")


def one_article(text: str) -> str:
    """'lies within the The Rocks District' -> 'lies within The Rocks District': a name that starts with 'The'
    written into a template's 'the {name}' keeps its own article only."""
    return _DOUBLED_ARTICLE.sub("", text)


# The five filters of OenoBench B.1, plus the structured-record templates and the near-duplicate pass.
Stage = Literal["split", "resolve", "classify", "validate", "on_topic", "template", "duplicate"]


@dataclass(frozen=True)
class SourceDocument:
    """The part of a stored document that fact extraction reads."""

    document_id: str
    source_id: str
    media_type: str
    title: str
    text: str
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Mention:
    """An entity named in a fact. `ner_label` is the small model's label where the gazetteer overrode it."""

    entity_id: str
    entity_type: str
    surface: str
    ner_label: str | None = None


@dataclass(frozen=True)
class Candidate:
    """A fact that passed every filter, before near-duplicate removal. The span is the evidence in the document
    text; `source_text` is that evidence as written, `text` the atomic sentence (references resolved)."""

    source_id: str
    document_id: str
    span_start: int
    span_end: int
    discipline: str
    text: str
    source_text: str
    confidence: float
    method: str  # 'sentence' | 'clause' | 'template:<field>'
    mentions: tuple[Mention, ...] = ()
    attributes: dict[str, Any] = field(default_factory=dict)

    @property
    def words(self) -> int:
        return len(self.text.split())


@dataclass(frozen=True)
class Rejection:
    source_id: str
    document_id: str
    span_start: int
    span_end: int
    stage: Stage
    reason: str
    text: str
    detail: str = ""
    discipline: str | None = None  # known once the candidate was classified


def fact_id(discipline: str, document_id: str, start: int, end: int, text: str) -> str:
    """Content-derived, so an unchanged fact keeps its id across reruns (and the items built on it)."""
    return hashlib.sha256(f"{discipline}|{document_id}|{start}|{end}|{text}".encode()).hexdigest()[:24]


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()
