"""Ingestion: provenance-verified source adapters over a record/replay snapshot store.

    spec source (config.SourceConfig) --adapters.read_source(source, fetcher)--> Document | Rejection
        --verify_provenance--> persist
A `LiveFetcher` fetches politely and records every response into a `SnapshotStore`; a `ReplayFetcher` serves the same
calls from the store with no network. Every document is a byte span of a recorded body (its `trace`).
"""
