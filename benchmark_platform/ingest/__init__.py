"""Ingestion: provenance-verified source adapters over a record/replay snapshot store.

    spec source (config.SourceConfig) --adapters.read_source(source, fetcher)--> Document | Rejection
        --verify_provenance--> persist
A `LiveFetcher` fetches politely and records every response into a `SnapshotStore`; a `ReplayFetcher` serves the same
calls from the store with no network. Every document is a byte span of a recorded body (its `trace`).

read.py is that core (`ingest_source`, `replay_source`); run.py's `ingest_to_store` is what the source_documents asset
calls: read, persist (persist.py) and check the stored partition (source_checks.py).
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.ingest.fetch import FetchPolicy
    from benchmark_platform.ingest.read import IngestResult, ingest_source, replay_source
    from benchmark_platform.ingest.run import SourceIngest, ingest_to_store
    from benchmark_platform.ingest.snapshot import SnapshotStore, recorded_version
    from benchmark_platform.ingest.source_checks import CHECKS
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "CHECKS",
    "FetchPolicy",
    "IngestResult",
    "SnapshotStore",
    "SourceIngest",
    "ingest_source",
    "ingest_to_store",
    "recorded_version",
    "replay_source",
]
