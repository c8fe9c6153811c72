"""The facts stage for one partition: a source's extraction (candidates and rejections), then a discipline's facts
with near-duplicates removed, the optional paraphrase through the LLM gateway, and the quality report."""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from benchmark_platform.facts.build import Extraction, FactSet, QualityRow, extract, quality_report, select
from benchmark_platform.facts.dedup import Encode
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.paraphrase import Paraphraser
from benchmark_platform.facts.persist import (
    load_candidates,
    load_documents,
    load_rejections,
    store_extraction,
    store_facts,
)
from benchmark_platform.llm import ChatRequest, GatewayTotals, RunBatch
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database


@dataclass(frozen=True)
class SourceExtraction:
    documents: int
    extraction: Extraction
    seconds: float

    def rejected_by_stage(self) -> dict[str, int]:
        return dict(Counter(r.stage for r in self.extraction.rejections))

    def candidates_by_discipline(self) -> dict[str, int]:
        return dict(Counter(c.discipline for c in self.extraction.candidates))


def extract_source(
    db: Database, spec: BenchmarkSpec, source_id: str, progress: Callable[[int, int], None]
) -> SourceExtraction:
    """Replace the source's candidates and rejections with those of its stored documents."""
    documents = load_documents(db, [source_id])
    started = time.perf_counter()
    extraction = extract(documents, spec.facts, spec.directory, progress=progress)
    seconds = time.perf_counter() - started
    store_extraction(db, spec.name, source_id, extraction)
    return SourceExtraction(len(documents), extraction, seconds)


@dataclass
class DisciplineFacts:
    candidates: int
    fact_set: FactSet
    report: list[QualityRow]
    counts: dict[str, int]
    gateway_totals: list[GatewayTotals] = field(default_factory=list)  # one per paraphrase batch sent


def build_facts(
    db: Database,
    spec: BenchmarkSpec,
    discipline: str,
    encode: Encode,
    paraphrase_model: ModelConfig | None,
    run_batch: RunBatch,
) -> DisciplineFacts:
    """Replace the discipline's facts: its candidates deduplicated (and paraphrased by `paraphrase_model`, one user
    message per fact, cached by request hash), with the quality report per source."""
    tiers = {source.id: source.tier for source in spec.sources}
    candidates = load_candidates(db, spec.name, discipline)
    totals: list[GatewayTotals] = []
    fact_set = select(
        candidates,
        spec.facts,
        encode,
        tiers,
        _gateway_paraphraser(paraphrase_model, spec.seed, run_batch, totals) if paraphrase_model else None,
        Gazetteer.from_config(spec.facts, spec.directory) if paraphrase_model else None,
    )
    report = quality_report(discipline, fact_set, load_rejections(db, spec.name, discipline), tiers)
    counts = store_facts(db, spec.name, discipline, fact_set, report)
    return DisciplineFacts(len(candidates), fact_set, report, counts, totals)


def _gateway_paraphraser(
    model: ModelConfig, seed: int, run_batch: RunBatch, totals: list[GatewayTotals]
) -> Paraphraser:
    """The gateway as the paraphrase step sees it: one user message per fact; each batch's totals go to `totals`."""

    def paraphraser(prompts: Sequence[str]) -> list[str | None]:
        requests = [
            ChatRequest(model=model.name, messages=[{"role": "user", "content": p}], seed=seed) for p in prompts
        ]
        results, batch_totals = run_batch([model], requests)
        totals.append(batch_totals)
        return [r.text if r.ok else None for r in results]

    return paraphraser
