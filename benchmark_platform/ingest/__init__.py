"""Ingestion: provenance-verified source adapters over a record/replay snapshot store.

    spec source (config.SourceConfig) --adapters.read_source(source, fetcher)--> Document | Rejection
        --verify_provenance--> persist
A `LiveFetcher` fetches politely and records every response into a `SnapshotStore`; a `ReplayFetcher` serves the same
calls from the store with no network. Every document is a byte span of a recorded body (its `trace`).
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.ingest.fetch import FetchPolicy, LiveFetcher
    from benchmark_platform.ingest.persist import store_ingest
    from benchmark_platform.ingest.run import IngestResult, ingest_source, replay_source
    from benchmark_platform.ingest.snapshot import SnapshotStore, recorded_version
    from benchmark_platform.ingest.source_checks import CHECKS, check_source, source_rows
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "CHECKS",
    "FetchPolicy",
    "IngestResult",
    "LiveFetcher",
    "SnapshotStore",
    "check_source",
    "ingest_source",
    "recorded_version",
    "replay_source",
    "source_rows",
    "store_ingest",
]
