"""Run requests for a set of partitions that honour the target asset's backfill policy.

A single-run asset gets one run per contiguous range of wanted keys (range tags, the asset loops over
`context.partition_keys`); any other asset gets one run per key. Run keys make every request idempotent: the daemon
launches a run key once, however often a tick repeats it."""

from collections.abc import Mapping, Sequence

import dagster as dg

from benchmark_platform.automation import plan_runs

PARTITION_TAG = "dagster/partition"
RANGE_START, RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def run_partitions(tags: Mapping[str, str], order: Sequence[str]) -> list[str]:
    """The partitions of `order` a run materialises: its partition tag, or every key of its range (a single-run
    asset's run, e.g. from a backfill, is tagged with its range only); [] for an unpartitioned run or foreign keys."""
    if PARTITION_TAG in tags:
        return [tags[PARTITION_TAG]] if tags[PARTITION_TAG] in order else []
    start, end = tags.get(RANGE_START), tags.get(RANGE_END)
    if start in order and end in order:
        return list(order[order.index(start) : order.index(end) + 1])
    return []


def partition_run_requests(
    context: dg.SensorEvaluationContext | dg.ScheduleEvaluationContext,
    asset_key: dg.AssetKey,
    partitions: Sequence[str],
    run_key: str,
    tags: dict[str, str] | None = None,
) -> list[dg.RunRequest]:
    node = context.repository_def.asset_graph.get(asset_key)
    ordered = node.partitions_def.get_partition_keys(dynamic_partitions_store=context.instance)
    max_per_run = 1 if node.backfill_policy is None else node.backfill_policy.max_partitions_per_run
    requests = []
    for chunk in plan_runs(ordered, partitions, max_per_run):
        if len(chunk) == 1:
            requests.append(
                dg.RunRequest(
                    run_key=f"{run_key}:{chunk[0]}",
                    asset_selection=[asset_key],
                    partition_key=chunk[0],
                    tags=tags or {},
                )
            )
        else:
            requests.append(
                dg.RunRequest(
                    run_key=f"{run_key}:{chunk[0]}..{chunk[-1]}",
                    asset_selection=[asset_key],
                    tags={**(tags or {}), RANGE_START: chunk[0], RANGE_END: chunk[-1]},
                )
            )
    return requests
