"""Running the whole graph of a spec in-process: what `benchmark-platform run` and the release rebuild both call.

It sits in the Dagster layer (not a stage: `defs.stage_modules` lists packages only), below the CLI, so the rebuild
asset code never reaches up to the command line.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.automation.recovery import run_tags
from benchmark_platform.spec import BenchmarkSpec


def materialize_all(
    spec: BenchmarkSpec,
    instance: dg.DagsterInstance | None = None,
    resources: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = print,
    console_level: str = "DEBUG",
) -> None:
    """Every asset for every partition, in dependency order: sources, then disciplines, then unpartitioned assets.

    `instance` defaults to the project's Dagster instance (dagster.yaml); `resources` override the definitions';
    `console_level` is the threshold of Dagster's console log (every event is in the instance's event log anyway).
    """
    defs = build_definitions(spec)
    assets = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)]
    all_resources = {**(defs.resources or {}), **(resources or {})}
    instance = instance or dg.DagsterInstance.get()
    source_ids = [s.id for s in spec.sources]
    groups: list[tuple[str, list[str] | list[None], list[dg.AssetsDefinition]]] = [
        (
            "sources",
            source_ids,
            [a for a in assets if a.partitions_def and list(a.partitions_def.get_partition_keys()) == source_ids],
        ),
        (
            "disciplines",
            spec.discipline_keys,
            [
                a
                for a in assets
                if a.partitions_def and list(a.partitions_def.get_partition_keys()) == spec.discipline_keys
            ],
        ),
        ("unpartitioned", [None], [a for a in assets if a.partitions_def is None]),
    ]
    for label, partition_keys, selected in groups:
        if not selected:
            continue
        selection = dg.AssetSelection.assets(*selected)
        for n, partition_key in enumerate(partition_keys, 1):
            started = time.perf_counter()
            result = dg.materialize(
                assets,
                selection=selection,
                partition_key=partition_key,
                instance=instance,
                resources=all_resources,
                raise_on_error=True,
                tags=run_tags(),
                run_config={"loggers": {"console": {"config": {"log_level": console_level}}}},
            )
            log(
                f"[{label} {n}/{len(partition_keys)}] {partition_key or 'all'}: "
                f"{len(result.get_asset_materialization_events())} assets in {time.perf_counter() - started:.1f} s"
            )
