"""Ingest benchmark: documents parsed per second from the bundled `wine` snapshot store, and the overhead of
replaying from the store versus handing the adapters the same bytes read directly from ../shared/data.

Side by side in one run, interleaved, `--repeats` times each; medians are reported. Keys:
documents, source_types, provenance_complete_share, documents_per_s (full replay: store lookup, gzip, hash check,
adapter parsing and cleaning, provenance verification), replay_overhead (adapter parsing via the store / via direct
file reads), body_read_overhead (store body read / plain file read), verify_s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmark_platform.ingest import replay_source
from benchmark_platform.ingest.adapters import read_source
from benchmark_platform.ingest.fetch import Fetched, ReplayFetcher
from benchmark_platform.ingest.records import Document, ProvenanceError, verify_provenance
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.spec import load_spec


class DirectFileFetcher:
    """Serves each recorded URL straight from the shared-data file it was imported from (no store, no hash check)."""

    def __init__(self, store: SnapshotStore, data_dir: Path) -> None:
        self.store = store
        self._files = {e.url: (e, data_dir / e.capture.origin) for e in store.exchanges()}

    def get(self, url: str, *, params: dict[str, str] | None = None, headers: dict[str, str] | None = None) -> Fetched:
        exchange, path = self._files[url]
        return Fetched(exchange, path.read_bytes())


def _timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", default="wine")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data", type=Path, default=PROJECT_ROOT.parent / "shared" / "data")
    args = parser.parse_args()

    spec = load_spec(args.spec)
    store = SnapshotStore(spec.snapshot_dir)
    exchanges = store.exchanges()
    direct_ok = all((args.data / e.capture.origin).exists() for e in exchanges)

    full, replay_parse, direct_parse, store_reads, file_reads = [], [], [], [], []
    documents: list[Document] = []
    for _ in range(args.repeats):
        seconds, results = _timed(lambda: [replay_source(s, SnapshotStore(spec.snapshot_dir)) for s in spec.sources])
        full.append(seconds)
        documents = [d for r in results for d in r.documents]
        replay = ReplayFetcher(SnapshotStore(spec.snapshot_dir))
        replay_parse.append(_timed(lambda: [list(read_source(s, replay)) for s in spec.sources])[0])  # noqa: B023
        store_reads.append(_timed(lambda: [store.body(e) for e in exchanges])[0])
        if direct_ok:
            direct = DirectFileFetcher(store, args.data)
            direct_parse.append(_timed(lambda: [list(read_source(s, direct)) for s in spec.sources])[0])  # noqa: B023
            file_reads.append(_timed(lambda: [(args.data / e.capture.origin).read_bytes() for e in exchanges])[0])

    tiers = {s.id: (s.tier, s.licence) for s in spec.sources}
    bodies: dict[str, bytes] = {}
    verified = 0
    start = time.perf_counter()
    for document in documents:
        tier, licence = tiers[document.source_id]
        try:
            verify_provenance(document, tier, licence, store, bodies)
            verified += 1
        except ProvenanceError:
            pass
    verify_s = time.perf_counter() - start
    per_source: dict[str, int] = {}
    for document in documents:
        per_source[document.source_id] = per_source.get(document.source_id, 0) + 1
    median_full = statistics.median(full)
    result = {
        "bench": "ingest",
        "documents": len(documents),
        "source_types": len({s.adapter for s in spec.sources if per_source.get(s.id)}),
        "sources": len(per_source),
        "provenance_complete_share": verified / len(documents),
        "documents_per_s": round(len(documents) / median_full, 1),
        "replay_seconds_median": round(median_full, 3),
        "replay_overhead": round(statistics.median(replay_parse) / statistics.median(direct_parse), 3)
        if direct_parse
        else None,
        "body_read_overhead": round(statistics.median(store_reads) / statistics.median(file_reads), 2)
        if file_reads
        else None,
        "verify_s": round(verify_s, 3),
        "exchanges": len(exchanges),
        "repeats": args.repeats,
        "documents_by_source": per_source,
    }
    print(json.dumps(result, ensure_ascii=False))


if __name__ == "__main__":
    main()
