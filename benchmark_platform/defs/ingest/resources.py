"""The HTTP fetcher resource: replay from the spec's snapshot store (default, no network), or live (and record)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import dagster as dg

from benchmark_platform.ingest import (
    FetchPolicy,
    IngestResult,
    LiveFetcher,
    SnapshotStore,
    ingest_source,
    replay_source,
)
from benchmark_platform.ingest.config import SourceConfig


class SourceFetcher(dg.ConfigurableResource):
    """mode="replay" serves the snapshot store with socket connections forbidden; mode="live" fetches politely and
    records every response into the store (`store_dir`, default the spec's bundled snapshot/)."""

    mode: Literal["replay", "live"] = "replay"
    store_dir: str | None = None
    user_agent: str = FetchPolicy().user_agent
    min_interval_s: float = FetchPolicy().min_interval_s
    timeout_s: float = FetchPolicy().timeout_s
    max_attempts: int = FetchPolicy().max_attempts

    def store(self, default_dir: Path) -> SnapshotStore:
        return SnapshotStore(Path(self.store_dir) if self.store_dir else default_dir)

    def ingest(self, source: SourceConfig, store: SnapshotStore) -> IngestResult:
        if self.mode == "replay":
            return replay_source(source, store)
        policy = FetchPolicy(
            user_agent=self.user_agent,
            min_interval_s=self.min_interval_s,
            timeout_s=self.timeout_s,
            max_attempts=self.max_attempts,
        )
        with LiveFetcher(store, policy) as fetcher:
            return ingest_source(source, fetcher)
