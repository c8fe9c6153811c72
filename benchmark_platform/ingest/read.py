"""Ingest one source: read it through a fetcher, verify every document's provenance, and return what to store.

`ingest_source` is the whole pure core of the ingest asset; persistence (persist.py) takes its result and run.py
runs both. A replay (`replay_source`) runs the same adapters over the snapshot store with socket connections
forbidden, so a replay that would need the network fails at once instead of quietly fetching.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from benchmark_platform.ingest.adapters import read_source
from benchmark_platform.ingest.config import SourceConfig
from benchmark_platform.ingest.fetch import Fetcher, ReplayFetcher, forbid_network
from benchmark_platform.ingest.records import Document, ProvenanceError, Rejection, verify_provenance
from benchmark_platform.ingest.snapshot import SnapshotStore


@dataclass
class IngestResult:
    source: SourceConfig
    documents: list[Document] = field(default_factory=list)
    rejections: list[Rejection] = field(default_factory=list)

    @property
    def exchange_ids(self) -> list[str]:
        return sorted({d.trace.exchange_id for d in self.documents})


def ingest_source(source: SourceConfig, fetcher: Fetcher) -> IngestResult:
    result = IngestResult(source)
    for record in read_source(source, fetcher):
        if isinstance(record, Document):
            result.documents.append(record)
        else:
            result.rejections.append(record)
    bodies: dict[str, bytes] = {}
    for document in result.documents:
        verify_provenance(document, source.tier, source.licence, fetcher.store, bodies)
    repeated = [url for url, n in Counter(d.url for d in result.documents).items() if n > 1]
    if repeated:
        raise ProvenanceError(f"{source.id}: {len(repeated)} URL(s) name more than one document, e.g. {repeated[0]}")
    return result


def replay_source(source: SourceConfig, store: SnapshotStore) -> IngestResult:
    with forbid_network():
        return ingest_source(source, ReplayFetcher(store))
