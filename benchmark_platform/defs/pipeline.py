"""Running the whole graph of a spec in-process: what `benchmark-platform run` and the release rebuild both call.

It sits in the Dagster layer (not a stage: `defs.stage_modules` lists packages only), below the CLI, so the rebuild
asset code never reaches up to the command line.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import dagster as dg

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.automation.checks import release_input_checks
from benchmark_platform.defs.automation.recovery import run_tags
from benchmark_platform.defs.common import key
from benchmark_platform.defs.progress import EventLogFile, partition_prefix, partition_stages, stage_outcomes
from benchmark_platform.spec import BenchmarkSpec


def materialize_all(
    spec: BenchmarkSpec,
    instance: dg.DagsterInstance | None = None,
    resources: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = print,
    events: EventLogFile | None = None,
    disciplines: list[str] | None = None,
    starting: Callable[[str], None] | None = None,  # called with a partition's prefix before it runs
    console_level: str = "CRITICAL",
) -> ReleaseGate:
    """Every asset for every partition, in dependency order: sources, then disciplines, then unpartitioned assets;
    then the release gate's blocking checks, and the release only if they pass (as `<spec>_release_job` does).

    `instance` defaults to the project's Dagster instance (dagster.yaml); `resources` override the definitions'.
    Prints one line per partition (each stage: rows and time); Dagster's events go to `events` (a file), if given.
    `disciplines` restricts the discipline partitions run (default: all). `console_level` is the threshold of
    Dagster's console log (CRITICAL: quiet; every event is in the instance's event log and in `events` anyway).
    """
    defs = build_definitions(spec)
    assets = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)]
    all_resources = {**(defs.resources or {}), **(resources or {})}
    instance = instance or dg.DagsterInstance.get()
    release_key = key(spec, "release")
    source_ids = [s.id for s in spec.sources]
    groups: list[tuple[str, list[str] | list[None], list[dg.AssetsDefinition]]] = [
        (
            "sources",
            source_ids,
            [a for a in assets if a.partitions_def and list(a.partitions_def.get_partition_keys()) == source_ids],
        ),
        (
            "disciplines",
            disciplines or spec.discipline_keys,
            [
                a
                for a in assets
                if a.partitions_def and list(a.partitions_def.get_partition_keys()) == spec.discipline_keys
            ],
        ),
        (
            "unpartitioned",
            [None],
            [a for a in assets if a.partitions_def is None and release_key not in a.keys],
        ),
    ]

    run_config = {"loggers": {"console": {"config": {"log_level": console_level}}}}

    def run(
        selection: dg.AssetSelection, partition_key: str | None, extra: list[Any] | None = None
    ) -> dg.ExecuteInProcessResult:
        result = dg.materialize(
            [*assets, *(extra or [])],
            selection=selection,
            partition_key=partition_key,
            instance=instance,
            resources=all_resources,
            raise_on_error=True,
            tags=run_tags(),
            run_config=run_config,
        )
        if events is not None:
            events.append_run(instance, result.run_id)
        return result

    for label, partition_keys, selected in groups:
        if not selected:
            continue
        for n, partition_key in enumerate(partition_keys, 1):
            prefix = partition_prefix(spec.name, label, n, len(partition_keys), partition_key)
            if starting:
                starting(prefix)
            result = run(dg.AssetSelection.assets(*selected), partition_key)
            stages = partition_stages(stage_outcomes(result, instance))
            log(stages if starting else f"{prefix} {stages}")
    checks = release_input_checks(spec)
    result = run(dg.AssetSelection.checks(*[k for c in checks for k in c.check_keys]), None, checks)
    gate = ReleaseGate([(e.check_name, e.passed) for e in result.get_asset_check_evaluations()])
    log(f"[{spec.name} release gate] {gate.describe()}")
    if gate.passed:
        prefix = partition_prefix(spec.name, "release", 1, 1, None)
        if starting:
            starting(prefix)
        result = run(dg.AssetSelection.assets(release_key), None)
        stages = partition_stages(stage_outcomes(result, instance))
        log(stages if starting else f"{prefix} {stages}")
    return gate


@dataclass(frozen=True)
class ReleaseGate:
    outcomes: list[tuple[str, bool]]  # (blocking check, passed)

    @property
    def passed(self) -> bool:
        return all(ok for _, ok in self.outcomes)

    def describe(self) -> str:
        checks = ", ".join(f"{name} {'passed' if ok else 'FAILED'}" for name, ok in sorted(self.outcomes))
        return f"{'passed' if self.passed else 'FAILED: no release written'} ({checks})"
