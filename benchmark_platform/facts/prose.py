"""Prose documents -> atomic fact candidates through the five filters of OenoBench B.1, at corpus speed.

Two spaCy passes: the small model's statistical sentence segmenter over paragraphs (cheap), then the tagger, parser
and NER over the sentences that can still yield a fact (sentences over twice the word limit are rejected before
parsing). Documents are cut into contiguous chunks and extracted by `processes` worker processes, each running
`nlp.pipe` in batches; results come back in document order, so the output does not depend on the process count.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from multiprocessing import get_context
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc

from benchmark_platform.facts.clauses import (
    REFERRING_WORDS,
    Antecedent,
    Clause,
    Context,
    antecedent_from,
    resolve,
    split_clauses,
    subject_of,
)
from benchmark_platform.facts.config import FactsConfig
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.linking import Linker, MentionSpan, mentions_within
from benchmark_platform.facts.models import Candidate, Mention, Rejection, SourceDocument
from benchmark_platform.facts.rules import Ambiguous, OnTopic, classify, terminated, validate

# served bytes of structured sources (their facts come from templates, not from prose)
STRUCTURED_MEDIA_TYPES = frozenset({"application/geo+json", "application/json", "text/csv", "application/vnd.ms-excel"})
_PARAGRAPH = re.compile(r"[^\n]+(?:\n(?!\s*\n)[^\n]+)*")
_FIELD_LINE = re.compile(r"^[\w .()/-]{1,40}: \S")


@dataclass
class ProseResult:
    candidates: list[Candidate] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    sentences: int = 0

    def extend(self, other: ProseResult) -> None:
        self.candidates += other.candidates
        self.rejections += other.rejections
        self.sentences += other.sentences


def prose_lines(document: SourceDocument) -> Iterator[tuple[int, int, str]]:
    """(paragraph number, offset, text) of the document's prose lines. A line is never joined to the next (a
    heading has no full stop); paragraphs (blank-line separated) bound reference resolution. Blocks of
    'name: value' field lines are structured records, not prose."""
    if document.media_type in STRUCTURED_MEDIA_TYPES:
        return
    for number, block in enumerate(_PARAGRAPH.finditer(document.text)):
        lines = list(re.finditer(r"[^\n]+", block.group()))
        if all(_FIELD_LINE.match(line.group()) for line in lines):
            continue
        for line in lines:
            yield number, block.start() + line.start(), line.group()


@dataclass
class _Sentence:
    document: int
    paragraph: int
    start: int  # character offset in the document text
    text: str


class ProseExtractor:
    """Loaded models, gazetteer and matcher: build once per process, then `extract` any number of documents."""

    def __init__(self, config: FactsConfig, spec_dir: Path) -> None:
        self.config = config
        # one model, two passes: the statistical segmenter alone, then the parse pipes (the segmenter off)
        import spacy  # here, not at import: every process that loads the code location would pay ~0.9 s

        self.nlp = spacy.load(config.spacy_model, exclude=["lemmatizer"])
        self.nlp.enable_pipe("senter")
        self.parse_pipes = [name for name in self.nlp.pipe_names if name != "senter"]
        self.linker = Linker(self.nlp, Gazetteer.from_config(config, spec_dir), config.lexicons)
        self.on_topic = OnTopic(config.on_topic)
        self.conjunctions = frozenset(c.lower() for c in config.conjunctions)

    def extract(self, documents: list[SourceDocument]) -> ProseResult:
        result = ProseResult()
        sentences = list(self._sentences(documents, result))
        context, where = Context(), (-1, -1)
        with self.nlp.select_pipes(enable=self.parse_pipes):
            docs = self.nlp.pipe((s.text for s in sentences), batch_size=self.config.batch_size)
            for sentence, doc in zip(sentences, docs, strict=True):
                if (sentence.document, sentence.paragraph) != where:
                    where = (sentence.document, sentence.paragraph)
                    topic = self.linker.topic(documents[sentence.document].title)
                    context = Context(
                        topic=Antecedent(topic.name, (Mention(topic.entity_id, topic.entity_type, topic.name),))
                        if topic
                        else None
                    )
                self._sentence(documents[sentence.document], sentence.start, doc, context, result)
        return result

    def _sentences(self, documents: list[SourceDocument], result: ProseResult) -> Iterator[_Sentence]:
        """Segmented sentences worth parsing, in document order; the others are rejected here, before the costly
        parse: sentences over twice the word limit, and, when neither they nor the next sentence hold a referring
        word (else the parse is needed to resolve it, or to give the next sentence its referent), sentences with
        no anchor term (no lexicon term, no gazetteer name) or no sentence-final punctuation. None of them could
        yield a fact after parsing."""
        units = [
            (d, p, offset, text) for d, document in enumerate(documents) for p, offset, text in prose_lines(document)
        ]
        paragraph: list[tuple[_Sentence, bool, bool]] = []
        with self.nlp.select_pipes(enable=["senter"]):
            segmented = self.nlp.pipe((u[3] for u in units), batch_size=self.config.batch_size * 4)
            for (d, p, offset, _), doc in zip(units, segmented, strict=True):
                if paragraph and (paragraph[-1][0].document, paragraph[-1][0].paragraph) != (d, p):
                    yield from self._worth_parsing(paragraph, documents, result)
                    paragraph = []
                anchored = {start for _, start, _ in self.linker.matcher(doc)}
                for sent in doc.sents:
                    text = sent.text.strip()
                    if not text:
                        continue
                    result.sentences += 1
                    start = offset + sent.start_char + (len(sent.text) - len(sent.text.lstrip()))
                    paragraph.append(
                        (
                            _Sentence(d, p, start, text),
                            any(sent.start <= i < sent.end for i in anchored),
                            any(t.lower_ in REFERRING_WORDS for t in sent),
                        )
                    )
        yield from self._worth_parsing(paragraph, documents, result)

    def _worth_parsing(
        self, paragraph: list[tuple[_Sentence, bool, bool]], documents: list[SourceDocument], result: ProseResult
    ) -> Iterator[_Sentence]:
        limit = 2 * self.config.max_words
        for position, (sentence, anchored, referring) in enumerate(paragraph):
            document = documents[sentence.document]
            words = len(sentence.text.split())
            span = (sentence.start, sentence.start + len(sentence.text))
            if words > limit:
                result.rejections.append(
                    Rejection(
                        document.source_id,
                        document.document_id,
                        *span,
                        "validate",
                        f"more than {self.config.max_words} words",
                        sentence.text,
                        detail=f"{words} words, not parsed",
                    )
                )
            elif referring or (position + 1 < len(paragraph) and paragraph[position + 1][2]):
                yield sentence  # resolution needs it parsed, or the next sentence may need its subject
            elif not anchored:
                result.rejections.append(
                    Rejection(
                        document.source_id,
                        document.document_id,
                        *span,
                        "classify",
                        "no anchor term",
                        sentence.text,
                        detail="not parsed",
                    )
                )
            elif not terminated(sentence.text):  # validation's own order: a short heading is 'fewer than' first
                reason = (
                    f"fewer than {self.config.min_words} words"
                    if words < self.config.min_words
                    else "fragment: no sentence-final punctuation in the source"
                )
                result.rejections.append(
                    Rejection(
                        document.source_id,
                        document.document_id,
                        *span,
                        "validate",
                        reason,
                        sentence.text,
                        detail="not parsed",
                    )
                )
            else:
                yield sentence

    def _sentence(self, document: SourceDocument, offset: int, doc: Doc, context: Context, result: ProseResult) -> None:
        """Filters 1-5 on the clauses of a parsed sentence; then its subject and people become context."""
        mentions, hits = self.linker.link(doc)
        for sent in doc.sents:
            subject = subject_of(sent.root)
            own_subject = antecedent_from(subject, mentions) if subject is not None else None
            people = [
                (start, Antecedent(m.surface, (m,)))
                for start, _, m in mentions
                if sent.start <= start < sent.end and m.entity_type == "person"
            ]
            for clause in split_clauses(sent, self.conjunctions, mentions):
                self._clause(
                    document,
                    offset,
                    clause,
                    terminated(sent.text),
                    own_subject,
                    people,
                    mentions,
                    hits,
                    context,
                    result,
                )
            if own_subject is not None:
                context.subject = own_subject
            if people:
                context.person = people[-1][1]

    def _clause(
        self,
        document: SourceDocument,
        offset: int,
        clause: Clause,
        is_terminated: bool,
        own_subject: Antecedent | None,
        people: list[tuple[int, Antecedent]],
        mentions: list[MentionSpan],
        hits: list[tuple[int, str]],
        context: Context,
        result: ProseResult,
    ) -> None:
        config = self.config
        start, end = offset + clause.start_char, offset + clause.end_char
        source_text = document.text[start:end]
        where = (document.source_id, document.document_id, start, end)
        resolved = resolve(clause, own_subject, context, people)
        if isinstance(resolved, str):
            result.rejections.append(Rejection(*where, "resolve", resolved, source_text))
            return
        indices = {t.i for t in clause.tokens} | {t.i for t in clause.subject_prefix}
        clause_mentions = tuple(dict.fromkeys(mentions_within(mentions, indices) + list(resolved.mentions)))
        try:
            discipline = classify((d for i, d in hits if i in indices), clause_mentions, config)
        except Ambiguous as ambiguous:
            result.rejections.append(Rejection(*where, "classify", ambiguous.reason, source_text, ambiguous.detail))
            return
        confidence = validate(clause, resolved.text, is_terminated, config)
        if isinstance(confidence, str):
            result.rejections.append(Rejection(*where, "validate", confidence, source_text, discipline=discipline))
            return
        off_topic = self.on_topic.off_topic(document.source_id, resolved.text)
        if off_topic is not None:
            result.rejections.append(Rejection(*where, "on_topic", "off topic", source_text, off_topic, discipline))
            return
        result.candidates.append(
            Candidate(
                source_id=document.source_id,
                document_id=document.document_id,
                span_start=start,
                span_end=end,
                discipline=discipline,
                text=resolved.text,
                source_text=source_text,
                confidence=confidence,
                method="clause" if clause.split else "sentence",
                mentions=clause_mentions,
                attributes={"resolved_references": resolved.replaced} if resolved.replaced else {},
            )
        )


_WORKER: ProseExtractor | None = None


def _start_worker(config: FactsConfig, spec_dir: Path) -> None:
    global _WORKER  # one extractor per worker process
    _WORKER = ProseExtractor(config, spec_dir)


def _extract_chunk(documents: list[SourceDocument]) -> ProseResult:
    assert _WORKER is not None
    return _WORKER.extract(documents)


def extract_prose(
    documents: list[SourceDocument],
    config: FactsConfig,
    spec_dir: Path,
    extractor: ProseExtractor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ProseResult:
    """Candidates and rejections of every prose document, in document order.

    With `config.processes` > 1 the documents are spread over that many worker processes (each loads the models
    once); otherwise `extractor` (or a new one) runs in this process. `progress(done, total)` is called with the
    number of documents done after each chunk.
    """
    result = ProseResult()
    chunks = _chunks(documents, config.processes * 4)
    done = 0

    def collect(parts: Iterator[ProseResult]) -> None:
        nonlocal done
        for chunk, part in zip(chunks, parts, strict=True):
            result.extend(part)
            done += len(chunk)
            if progress is not None:
                progress(done, len(documents))

    if config.processes == 1 or len(chunks) < 2:
        collect(map((extractor or ProseExtractor(config, spec_dir)).extract, chunks))
        return result
    with ProcessPoolExecutor(
        config.processes, mp_context=get_context("spawn"), initializer=_start_worker, initargs=(config, spec_dir)
    ) as pool:
        collect(pool.map(_extract_chunk, chunks))
    return result


def _chunks(documents: list[SourceDocument], count: int) -> list[list[SourceDocument]]:
    """Contiguous chunks of about equal text length (order kept); none when there are no documents."""
    if not documents:
        return []
    total = sum(len(d.text) for d in documents) or 1
    chunks: list[list[SourceDocument]] = [[]]
    size = 0
    for document in documents:
        if size >= total / count * len(chunks) and chunks[-1]:
            chunks.append([])
        chunks[-1].append(document)
        size += len(document.text)
    return chunks
