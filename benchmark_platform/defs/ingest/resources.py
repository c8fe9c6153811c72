"""The HTTP fetcher resource: replay from the spec's snapshot store (default, no network), or live (and record)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import dagster as dg

from benchmark_platform.ingest import FetchPolicy, SnapshotStore


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

    def live_policy(self) -> FetchPolicy | None:
        """The fetch policy of a live run; None in replay mode."""
        if self.mode == "replay":
            return None
        return FetchPolicy(
            user_agent=self.user_agent,
            min_interval_s=self.min_interval_s,
            timeout_s=self.timeout_s,
            max_attempts=self.max_attempts,
        )
