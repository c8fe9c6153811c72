"""What the source_documents asset calls: read one source (replayed from the snapshot store, or fetched live and
recorded), store its documents with their verified traces, and check the stored partition."""

from __future__ import annotations

from dataclasses import dataclass

from benchmark_platform.ingest.config import SourceConfig
from benchmark_platform.ingest.fetch import FetchPolicy, LiveFetcher
from benchmark_platform.ingest.persist import store_ingest
from benchmark_platform.ingest.read import IngestResult, ingest_source, replay_source
from benchmark_platform.ingest.snapshot import SnapshotStore
from benchmark_platform.ingest.source_checks import CheckOutcome, check_source, source_rows
from benchmark_platform.store import Database


@dataclass(frozen=True)
class SourceIngest:
    result: IngestResult
    counts: dict[str, int]  # what store_ingest wrote
    checks: list[CheckOutcome]  # the source checks (CHECKS) on the stored partition


def ingest_to_store(
    db: Database, spec_name: str, source: SourceConfig, store: SnapshotStore, live: FetchPolicy | None = None
) -> SourceIngest:
    """Replay `source` from `store` (no network), or with a `live` policy fetch it and record into `store`; store it."""
    if live is None:
        result = replay_source(source, store)
    else:
        with LiveFetcher(store, live) as fetcher:
            result = ingest_source(source, fetcher)
    counts = store_ingest(db, spec_name, result, store)
    return SourceIngest(result, counts, check_source(source_rows(db, source.id)))
