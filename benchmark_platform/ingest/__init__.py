"""Ingestion: provenance-verified source adapters over a record/replay snapshot store.

    spec source (config.SourceConfig) --read(fetcher)--> Document | Rejection --verify_provenance--> persist
A `LiveFetcher` fetches politely and records every response into a `SnapshotStore`; a `ReplayFetcher` serves the same
calls from the store with no network. Every document is a byte span of a recorded body (its `trace`).
"""

from benchmark_platform.ingest.config import SourceBase, SourceConfig
from benchmark_platform.ingest.fetch import (
    FetchError,
    FetchPolicy,
    LiveFetcher,
    NetworkForbidden,
    ReplayFetcher,
    ReplayMiss,
    forbid_network,
)
from benchmark_platform.ingest.records import (
    Document,
    ProvenanceError,
    Rejection,
    Trace,
    document_id,
    record_fields,
    verify_provenance,
)
from benchmark_platform.ingest.run import IngestResult, ingest_source, replay_source
from benchmark_platform.ingest.snapshot import Exchange, SnapshotStore

__all__ = [
    "Document",
    "Exchange",
    "FetchError",
    "FetchPolicy",
    "IngestResult",
    "LiveFetcher",
    "NetworkForbidden",
    "ProvenanceError",
    "Rejection",
    "ReplayFetcher",
    "ReplayMiss",
    "SnapshotStore",
    "SourceBase",
    "SourceConfig",
    "Trace",
    "document_id",
    "forbid_network",
    "ingest_source",
    "record_fields",
    "replay_source",
    "verify_provenance",
]
