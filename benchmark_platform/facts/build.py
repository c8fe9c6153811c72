"""The facts stage, end to end on plain data: documents -> candidates and rejections (per source), then
candidates -> facts of one discipline with near-duplicates removed, optional paraphrase and a quality report."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchmark_platform.facts.config import FactsConfig
from benchmark_platform.facts.dedup import Encode, near_duplicates
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import Candidate, Rejection, SourceDocument, fact_id
from benchmark_platform.facts.paraphrase import Paraphraser, paraphrase
from benchmark_platform.facts.prose import ProseExtractor, extract_prose
from benchmark_platform.facts.rulebook import extract_rulebook, sentences
from benchmark_platform.facts.rules import OnTopic
from benchmark_platform.facts.salience import with_salience
from benchmark_platform.facts.structured import extract_structured

VALIDATED_SENTENCE = "validated sentence"


@dataclass
class Extraction:
    candidates: list[Candidate] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)
    sentences: int = 0


def extract(
    documents: list[SourceDocument],
    config: FactsConfig,
    spec_dir: Path,
    extractor: ProseExtractor | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Extraction:
    """Prose of the spec's prose sources through the five filters, structured records through the templates, French
    rulebooks through their attribute readers; every candidate then gets its salience score and reasons."""
    prose_documents = [d for d in documents if d.source_id in config.prose_sources]
    result = Extraction()
    if prose_documents:
        prose = extract_prose(prose_documents, config, spec_dir, extractor, progress)
        result = Extraction(prose.candidates, prose.rejections, prose.sentences)
    gazetteer = extractor.linker.gazetteer if extractor else Gazetteer.from_config(config, spec_dir)
    on_topic = OnTopic(config.on_topic)
    for document in documents:
        candidates, rejections = extract_structured(document, config, gazetteer, on_topic)
        result.candidates += candidates
        result.rejections += rejections
        candidates, rejections = extract_rulebook(document, config, gazetteer)
        result.candidates += candidates
        result.rejections += rejections
        if config.rulebook is not None and document.source_id in config.rulebook.sources:
            result.sentences += sentences(document.text)
    result.candidates = [with_salience(c, config.salience) for c in result.candidates]
    return result


@dataclass(frozen=True)
class Fact:
    fact_id: str
    candidate: Candidate


@dataclass(frozen=True)
class RemovedDuplicate:
    candidate: Candidate
    kept_fact_id: str
    cosine: float


@dataclass
class FactSet:
    facts: list[Fact]
    duplicates: list[RemovedDuplicate]
    guarded_pairs: int
    text_mode: str
    paraphrase_outcome: Counter[str]


def select(
    candidates: Sequence[Candidate],
    config: FactsConfig,
    encode: Encode,
    tiers: Mapping[str, int],
    paraphraser: Paraphraser | None = None,
    gazetteer: Gazetteer | None = None,
) -> FactSet:
    """Facts of one discipline: near-duplicates removed, paraphrased when a paraphraser is given (with the
    gazetteer, to check that the paraphrase keeps every entity)."""
    unique = list({(c.discipline, c.document_id, c.span_start, c.span_end): c for c in candidates}.values())
    dedup = near_duplicates(unique, encode, config.duplicate_cosine, tiers)
    kept = [unique[i] for i in dedup.kept]
    outcome: Counter[str] = Counter()
    text_mode = VALIDATED_SENTENCE
    if paraphraser is not None:
        if gazetteer is None:
            raise ValueError("paraphrase needs the gazetteer to check the entities it must keep")
        kept, outcome = paraphrase(kept, paraphraser, config, gazetteer)
        text_mode = f"paraphrase: {config.paraphrase_model}"
    facts = [Fact(fact_id(c.discipline, c.document_id, c.span_start, c.span_end, c.text), c) for c in kept]
    id_of = {(f.candidate.document_id, f.candidate.span_start, f.candidate.span_end): f.fact_id for f in facts}
    duplicates = [
        RemovedDuplicate(
            unique[d.index],
            id_of[(unique[d.kept].document_id, unique[d.kept].span_start, unique[d.kept].span_end)],
            d.cosine,
        )
        for d in dedup.duplicates
    ]
    return FactSet(facts, duplicates, dedup.guarded_pairs, text_mode, outcome)


@dataclass(frozen=True)
class QualityRow:
    discipline: str
    source_id: str
    tier: int | None
    facts: int
    full_confidence: int
    reduced_confidence: int
    words_mean: float | None
    words_median: float | None
    words_max: int | None
    with_entities: int
    ner_corrections: int
    duplicates_removed: int
    rejected: int
    rejections: dict[str, int]
    paraphrased: int
    text_mode: str


def quality_report(
    discipline: str,
    fact_set: FactSet,
    rejections: Sequence[Rejection],
    tiers: Mapping[str, int],
    full_confidence: float = 1.0,
) -> list[QualityRow]:
    """One row per source that gave this discipline facts, duplicates or rejections."""
    sources = sorted(
        {f.candidate.source_id for f in fact_set.facts}
        | {d.candidate.source_id for d in fact_set.duplicates}
        | {r.source_id for r in rejections if r.discipline == discipline}
    )
    rows = []
    for source in sources:
        mine = [f.candidate for f in fact_set.facts if f.candidate.source_id == source]
        words = [c.words for c in mine]
        dropped = Counter(
            f"{r.stage}: {r.reason}" for r in rejections if r.source_id == source and r.discipline == discipline
        )
        rows.append(
            QualityRow(
                discipline=discipline,
                source_id=source,
                tier=tiers.get(source),
                facts=len(mine),
                full_confidence=sum(c.confidence >= full_confidence for c in mine),
                reduced_confidence=sum(c.confidence < full_confidence for c in mine),
                words_mean=round(statistics.fmean(words), 2) if words else None,
                words_median=float(statistics.median(words)) if words else None,
                words_max=max(words) if words else None,
                with_entities=sum(bool(c.mentions) for c in mine),
                ner_corrections=sum(m.ner_label is not None for c in mine for m in c.mentions),
                duplicates_removed=sum(d.candidate.source_id == source for d in fact_set.duplicates),
                rejected=sum(dropped.values()),
                rejections=dict(sorted(dropped.items())),
                paraphrased=sum("paraphrase_of" in c.attributes for c in mine),
                text_mode=fact_set.text_mode,
            )
        )
    return rows
