"""Entity linking and lexicon hits on a parsed document, with one PhraseMatcher over gazetteer names and lexicon
terms. Gazetteer names win over the small model's entities: an overlapping NER entity keeps only its label, recorded
as the label the gazetteer corrected (Barolo tagged PERSON becomes appellation:barolo)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from benchmark_platform.facts.gazetteer import Entity, Gazetteer, entity_id
from benchmark_platform.facts.models import Mention

if TYPE_CHECKING:  # spaCy loads only where a document is parsed: importing it costs every process ~0.9 s
    from spacy.language import Language
    from spacy.tokens import Doc

# entities the small model finds that no gazetteer lists are still linked, typed by their label
NER_TYPES = {"PERSON": "person", "ORG": "organization", "GPE": "place", "LOC": "place", "FAC": "place"}
_LEADING = ("the ", "The ")

MentionSpan = tuple[int, int, Mention]  # token start, token end, mention


class Linker:
    def __init__(self, nlp: Language, gazetteer: Gazetteer, lexicons: dict[str, list[str]]) -> None:
        self.gazetteer = gazetteer
        from spacy.matcher import PhraseMatcher

        tokenizer: Any = nlp.tokenizer  # a spacy.tokenizer.Tokenizer (compiled; mypy sees a plain callable)
        self.matcher = PhraseMatcher(nlp.vocab, attr="LOWER")
        self._entities: dict[int, Entity] = {}
        self._disciplines: dict[int, str] = {}
        by_entity: dict[Entity, list[str]] = {}
        for name, entity in gazetteer.names.items():
            by_entity.setdefault(entity, []).append(name)
        for number, (entity, names) in enumerate(by_entity.items()):
            label = f"entity:{number}"
            self.matcher.add(label, list(tokenizer.pipe(names)))
            self._entities[nlp.vocab.strings[label]] = entity
        for discipline, terms in lexicons.items():
            label = f"lexicon:{discipline}"
            self.matcher.add(label, list(tokenizer.pipe(terms)))
            self._disciplines[nlp.vocab.strings[label]] = discipline

    def link(self, doc: Doc) -> tuple[list[MentionSpan], list[tuple[int, str]]]:
        """(mentions, lexicon hits as (token index, discipline)) of a parsed document."""
        from spacy.tokens import Span
        from spacy.util import filter_spans

        named, hits = [], []
        for match_id, start, end in self.matcher(doc):
            if match_id in self._disciplines:
                hits.append((start, self._disciplines[match_id]))
            elif _proper(doc, start, end):
                named.append(Span(doc, start, end, label=match_id))
        spans = filter_spans(named)  # longest match wins where names overlap
        claimed = {i for span in spans for i in range(span.start, span.end)}
        mentions: list[MentionSpan] = []
        corrected: dict[int, str] = {}
        for ent in doc.ents:
            overlap = next((span for span in spans if span.start < ent.end and ent.start < span.end), None)
            if overlap is not None:
                corrected[overlap.start] = ent.label_
            elif (
                ent.label_ in NER_TYPES
                and any(t.pos_ == "PROPN" for t in ent)
                and not any(i in claimed for i in range(ent.start, ent.end))
            ):  # 'Grape' at a sentence start is no ORG
                surface = _trim(ent.text)
                entity_type = NER_TYPES[ent.label_]
                mentions.append((ent.start, ent.end, Mention(entity_id(entity_type, surface), entity_type, surface)))
        for span in spans:
            entity = self._entities[span.label]
            mentions.append(
                (
                    span.start,
                    span.end,
                    Mention(entity.entity_id, entity.entity_type, span.text, corrected.get(span.start)),
                )
            )
        mentions.sort(key=lambda m: m[0])
        return mentions, hits

    def topic(self, title: str) -> Entity | None:
        return self.gazetteer.lookup(title)


def _proper(doc: Doc, start: int, end: int) -> bool:
    """A name matched case-insensitively counts when written as a name: some capital letter, or several words."""
    return end - start > 1 or any(not t.is_lower for t in doc[start:end])


def _trim(text: str) -> str:
    for leading in _LEADING:
        if text.startswith(leading):
            return text[len(leading) :]
    return text


def mentions_within(mentions: Iterable[MentionSpan], token_indices: set[int]) -> list[Mention]:
    return [m for start, end, m in mentions if any(i in token_indices for i in range(start, end))]
