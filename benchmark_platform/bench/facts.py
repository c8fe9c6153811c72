"""Facts benchmark: the five-stage extractor's throughput on the wine prose corpus and on a 20x larger one.

Corpus: the Wikibooks "Wine" page (MediaWiki chrome stripped by the ingest cleaner) and the boundary descriptions
of all 333 TTB AVA features (../shared/data/ttb_ava_ucdavis/ava_properties_derived.csv), one document each; the
20x corpus is 20 copies of it (distinct document ids). Timed end to end: sentence segmentation, parsing, the five
filters, entity linking, then near-duplicate removal (static MiniLM embedder, exact cosines) per discipline.
Side by side in one run: 1 process vs `processes` (default 2) on the base corpus, then the 20x corpus.
Peak memory is the largest resident set of this process or of any worker process. CPU seconds (this process and
its workers) are reported beside wall time, with the load average, since the machine may be shared.
Also the French rulebooks (issue 20): the 41 INAO cahiers des charges of ../shared/data through the legal-text
reader and the rulebook extractor, `copies` times, then near-duplicate removal: `rulebook_sentences_per_s`.
Prints one JSON line: {"bench": "facts", sentences, sentences_per_s, facts, facts_per_s, peak_rss_mb, ...}.
"""

from __future__ import annotations

import argparse
import csv
import html
import json
import os
import resource
import time
from collections import Counter
from typing import Any

from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.facts.build import Extraction, extract, select
from benchmark_platform.facts.models import SourceDocument
from benchmark_platform.ingest.adapters.legal_text import legal_text
from benchmark_platform.ingest.cleaners import strip_mediawiki_chrome
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec

SHARED = PROJECT_ROOT.parent / "shared" / "data"
COPIES = 20


def corpus() -> list[SourceDocument]:
    page = (SHARED / "wikimedia_pages" / "wikibooks_Wine_Printable_version.md").read_text(encoding="utf-8")
    documents = [SourceDocument("wikibooks", "wikibooks_wine", "text/markdown", "Wine", strip_mediawiki_chrome(page))]
    with (SHARED / "ttb_ava_ucdavis" / "ava_properties_derived.csv").open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            text = html.unescape(row["boundary_description"]).strip()
            if text:
                documents.append(
                    SourceDocument(f"ava:{row['ava_id']}", "ttb_ava_boundaries", "text/plain", row["name"], text)
                )
    return documents


def rulebooks() -> list[SourceDocument]:
    folder = SHARED / "inao_fr_appellations" / "cahiers_des_charges"
    return [
        SourceDocument(p.stem, "inao_cahiers", "text/markdown", p.stem, legal_text(p.read_text(encoding="utf-8")))
        for p in sorted(folder.glob("aoc_*.md"))
    ]


def _run_rulebooks(documents: list[SourceDocument], embedder: StaticEmbedder) -> dict[str, Any]:
    spec = load_spec("wine")
    started = time.perf_counter()
    extraction = extract(documents, spec.facts, spec.directory)
    extracted = time.perf_counter() - started
    facts = sum(
        len(select([c for c in extraction.candidates if c.discipline == d], spec.facts, embedder.encode, {}).facts)
        for d in {c.discipline for c in extraction.candidates}
    )
    return _figures(documents, extraction, facts, extracted, time.perf_counter() - started)


def _figures(
    documents: list[SourceDocument], extraction: Extraction, facts: int, extracted: float, total: float
) -> dict[str, Any]:
    """The figures every extraction run reports: what went in, what came out, and the rates."""
    return {
        "documents": len(documents),
        "sentences": extraction.sentences,
        "candidates": len(extraction.candidates),
        "facts": facts,
        "rejected": len(extraction.rejections),
        "extract_seconds": round(extracted, 2),
        "total_seconds": round(total, 2),
        "sentences_per_s": round(extraction.sentences / extracted, 1),
        "facts_per_s": round(facts / total, 1),
    }


def _copies(documents: list[SourceDocument], n: int) -> list[SourceDocument]:
    return [
        SourceDocument(f"{d.document_id}#{i}", d.source_id, d.media_type, d.title, d.text)
        for i in range(n)
        for d in documents
    ]


def _run(documents: list[SourceDocument], processes: int, embedder: StaticEmbedder) -> dict[str, Any]:
    spec = load_spec("wine")
    config = spec.facts.model_copy(
        update={"processes": processes, "prose_sources": ["wikibooks_wine", "ttb_ava_boundaries"]}
    )
    started, cpu_started = time.perf_counter(), _cpu_seconds()
    extraction: Extraction = extract(documents, config, spec.directory)
    extracted = time.perf_counter() - started
    extract_cpu = _cpu_seconds() - cpu_started
    by_discipline: dict[str, list] = {}
    for candidate in extraction.candidates:
        by_discipline.setdefault(candidate.discipline, []).append(candidate)
    facts = duplicates = 0
    for candidates in by_discipline.values():
        fact_set = select(candidates, config, embedder.encode, {"ttb_ava_boundaries": 1, "wikibooks_wine": 3})
        facts += len(fact_set.facts)
        duplicates += len(fact_set.duplicates)
    return {
        **_figures(documents, extraction, facts, extracted, time.perf_counter() - started),
        "duplicates_removed": duplicates,
        "extract_cpu_seconds": round(extract_cpu, 2),
        "sentences_per_cpu_s": round(extraction.sentences / extract_cpu, 1),
        "rejections_by_stage": dict(Counter(r.stage for r in extraction.rejections)),
    }


def _cpu_seconds() -> float:
    """CPU time of this process and of its finished worker processes (user + system)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + workers.ru_utime + workers.ru_stime


def _peak_rss_mb() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round(max(own, workers) / 1024, 1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--copies", type=int, default=COPIES)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    embedder = StaticEmbedder()
    base = corpus()
    one = _run(base, 1, embedder)
    many = _run(base, args.processes, embedder)
    large = _run(_copies(base, args.copies), args.processes, embedder)
    french = _run_rulebooks(_copies(rulebooks(), args.copies), embedder)
    result = {
        "bench": "facts",
        "sentences": large["sentences"],
        "sentences_per_s": large["sentences_per_s"],
        "facts": large["facts"],
        "facts_per_s": large["facts_per_s"],
        "peak_rss_mb": _peak_rss_mb(),
        "rulebook_sentences_per_s": french["sentences_per_s"],
        f"rulebooks_x{args.copies}": french,
        "processes": args.processes,
        "copies": args.copies,
        "base_1_process": one,
        f"base_{args.processes}_processes": many,
        f"corpus_x{args.copies}": large,
        "process_speedup_base": round(one["extract_seconds"] / many["extract_seconds"], 2),
        "embedder": f"{embedder.name} {embedder.version}",
        "cpu_count": os.cpu_count(),
        "load_average_1min": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(result, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
