"""How many runs a set of partitions takes: contiguous ranges in partition order, at most `max_per_run` keys each.

A single-run backfill policy (`max_per_run=None`) covers each contiguous stretch of wanted keys with one run; the
default policy (`max_per_run=1`) gives one run per key. Ranges are what Dagster's range tags can express."""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def plan_runs(ordered_keys: Sequence[str], wanted: Iterable[str], max_per_run: int | None) -> list[list[str]]:
    wanted = set(wanted)
    unknown = wanted - set(ordered_keys)
    if unknown:
        raise ValueError(f"not partitions of this asset: {sorted(unknown)[:5]}")
    runs: list[list[str]] = []
    current: list[str] = []
    for partition in ordered_keys:
        if partition in wanted and (max_per_run is None or len(current) < max_per_run):
            current.append(partition)
            continue
        if current:
            runs.append(current)
        current = [partition] if partition in wanted else []
    if current:
        runs.append(current)
    return runs
