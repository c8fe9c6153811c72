"""Running the whole graph of a spec in-process: what `benchmark-platform run` and the release rebuild both call.

It builds what is stale or missing, per asset and partition, as Dagster's own stale status says (the same resolver
the UI's "Materialize stale and missing" uses): every asset declares a code version (with the spec settings it
reads) and a data version, and what the graph reads from outside (anchor files, recordings, the item bank file,
result files) is observed first as source assets (defs/inputs). `force` rebuilds everything.

It sits in the Dagster layer (not a stage: `defs.stage_modules` lists packages only), below the CLI, so the rebuild
asset code never reaches up to the command line.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

# Dagster's stale-status resolver is what its UI and `RunRequest(stale_assets_only=True)` use; it has no public
# import path in 1.13, so the one place that needs it imports it here
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.definitions.observe import observe  # the in-process observation `materialize` lacks
from dagster._core.loader import LoadingContext

from benchmark_platform.defs import build_definitions
from benchmark_platform.defs.automation.checks import release_input_checks
from benchmark_platform.defs.automation.recovery import run_tags
from benchmark_platform.defs.common import key
from benchmark_platform.defs.inputs.assets import input_versions
from benchmark_platform.defs.progress import (
    EventLogFile,
    StageOutcome,
    partition_prefix,
    partition_stages,
    stage_outcomes,
)
from benchmark_platform.spec import BenchmarkSpec

BUILD_TAG = "benchmark_platform/build"  # every run of one `materialize_all` call: lineage.json tells reused from built


class _Loading(LoadingContext):
    """The request scope the stale resolver batches its instance reads in (one per decision)."""

    def __init__(self, instance: dg.DagsterInstance) -> None:
        self._instance = instance
        self._loaders: dict[type, Any] = {}

    @property
    def instance(self) -> dg.DagsterInstance:
        return self._instance

    @property
    def loaders(self) -> dict[type, Any]:
        return self._loaders


def stale_status(
    instance: dg.DagsterInstance, graph: Any, asset_key: dg.AssetKey, partition_key: str | None
) -> StaleStatus:
    """Dagster's stale status of one asset partition (FRESH, STALE or MISSING), as the UI shows it."""
    return _Resolver(instance, graph).status(asset_key, partition_key)


class _Resolver:
    """Dagster's stale-status resolver, kept while nothing is written (it caches its instance reads across the
    partitions of a build: a no-op rerun asks each record once) and renewed after every run or observation."""

    def __init__(self, instance: dg.DagsterInstance, graph: Any) -> None:
        self.instance, self.graph = instance, graph
        self._current: CachingStaleStatusResolver | None = None

    def get(self) -> CachingStaleStatusResolver:
        if self._current is None:
            self._current = CachingStaleStatusResolver(self.instance, self.graph, _Loading(self.instance))
        return self._current

    def status(self, asset_key: dg.AssetKey, partition_key: str | None) -> StaleStatus:
        return self.get().get_status(asset_key, partition_key)

    def reset(self) -> None:
        self._current = None


def _reachable(graph: Any, asset_key: dg.AssetKey, edges: str) -> set[dg.AssetKey]:
    """Every asset below (`edges="child_keys"`) or above (`"parent_keys"`) one, transitively."""
    found: set[dg.AssetKey] = set()
    stack = list(getattr(graph.get(asset_key), edges))
    while stack:
        nxt = stack.pop()
        if nxt not in found:
            found.add(nxt)
            stack.extend(getattr(graph.get(nxt), edges))
    return found


def _descendants(graph: Any, asset_key: dg.AssetKey) -> set[dg.AssetKey]:
    return _reachable(graph, asset_key, "child_keys")


def _ancestors(graph: Any, asset_key: dg.AssetKey) -> set[dg.AssetKey]:
    return _reachable(graph, asset_key, "parent_keys")


@dataclass(frozen=True)
class _Group:
    label: str
    partitions_def: dg.PartitionsDefinition | None
    partition_keys: list[str] | list[None]
    assets: list[dg.AssetsDefinition]


def _groups(
    spec: BenchmarkSpec, assets: list[dg.AssetsDefinition], graph: Any, disciplines: list[str] | None
) -> list[_Group]:
    """In dependency order: unpartitioned assets a partitioned one reads (the audit calibration), the sources, the
    disciplines, then the other unpartitioned assets (analysis); the release is left to the gate."""
    release_key = key(spec, "release")
    source_ids = [s.id for s in spec.sources]
    by_source = [a for a in assets if a.partitions_def and list(a.partitions_def.get_partition_keys()) == source_ids]
    by_discipline = [
        a for a in assets if a.partitions_def and list(a.partitions_def.get_partition_keys()) == spec.discipline_keys
    ]
    partitioned = {a.key for a in [*by_source, *by_discipline]}
    unpartitioned = [a for a in assets if a.partitions_def is None and a.key != release_key]
    before = [a for a in unpartitioned if _descendants(graph, a.key) & partitioned]
    after = [a for a in unpartitioned if a not in before]
    return [
        _Group("setup", None, [None], before),
        _Group("sources", by_source[0].partitions_def if by_source else None, source_ids, by_source),
        _Group(
            "disciplines",
            by_discipline[0].partitions_def if by_discipline else None,
            disciplines or spec.discipline_keys,
            by_discipline,
        ),
        _Group("unpartitioned", None, [None], after),
    ]


@dataclass
class _Build:
    """One spec's graph made runnable: its assets in groups, a named job per group, the resources and run tags."""

    spec: BenchmarkSpec
    instance: dg.DagsterInstance
    graph: Any
    assets: list[dg.AssetsDefinition]
    observed: list[dg.SourceAsset]
    resources: dict[str, Any]
    groups: list[_Group]
    jobs: dict[str, Any]
    runnable: dg.Definitions
    tags: dict[str, str]
    run_config: dict[str, Any]
    resolver: _Resolver

    @property
    def release_key(self) -> dg.AssetKey:
        return key(self.spec, "release")


def _prepare(
    spec: BenchmarkSpec,
    instance: dg.DagsterInstance | None,
    resources: Mapping[str, Any] | None,
    disciplines: list[str] | None,
    console_level: str,
) -> _Build:
    defs = build_definitions(spec)
    assets = [a for a in defs.assets or [] if isinstance(a, dg.AssetsDefinition)]
    observed = [a for a in defs.assets or [] if isinstance(a, dg.SourceAsset)]
    all_resources = {**(defs.resources or {}), **(resources or {})}
    if instance is None:
        instance = dg.DagsterInstance.get()
        # Dagster's Postgres storages open a connection per query by default (a build makes thousands: every event,
        # every stale-status read); hold them open for this process, as its webserver does
        instance.optimize_for_webserver(statement_timeout=0, pool_recycle=3600, max_overflow=10)
    graph = defs.resolve_asset_graph()
    groups = _groups(spec, assets, graph, disciplines)
    jobs = {
        g.label: dg.define_asset_job(
            f"{spec.name}_build_{g.label}", selection=[a.key for a in g.assets], partitions_def=g.partitions_def
        )
        for g in groups
        if g.assets
    }
    jobs["release"] = dg.define_asset_job(f"{spec.name}_build_release", selection=[key(spec, "release")])
    return _Build(
        spec,
        instance,
        graph,
        assets,
        observed,
        all_resources,
        groups,
        jobs,
        dg.Definitions(assets=[*assets, *observed], resources=all_resources, jobs=list(jobs.values())),
        {**run_tags(), BUILD_TAG: uuid.uuid4().hex},
        {"loggers": {"console": {"config": {"log_level": console_level}}}},
        _Resolver(instance, graph),
    )


def _observe_inputs(build: _Build, record: Callable[[Any], object], force: bool) -> None:
    """Hash what the graph reads from outside (anchor files, recordings, the bank and result files, gold labels)
    and record an observation (one Dagster run per input: a run holds one partitioning) of each input whose hash
    differs from the latest recorded one, so the stale status compares against what is there now. An input that
    has not moved is not observed again: its recorded version is already the current one (`force` observes all)."""
    current = input_versions(build.spec)
    # as a run would see them: a resource's EnvVar fields (the database URL) resolved
    resources = {
        name: r.process_config_and_initialize() if isinstance(r, dg.ConfigurableResource) else r
        for name, r in build.resources.items()
        if name in ("database", "fetcher")
    }
    for source in build.observed:
        now = current[source.key](resources)
        resolver = build.resolver.get()
        if force or any(
            resolver.get_current_data_version(source.key, partition) != dg.DataVersion(version)
            for partition, version in now.items()
        ):
            record(
                observe(
                    [source],
                    instance=build.instance,
                    resources=build.resources,
                    tags=build.tags,
                    run_config=build.run_config,
                )
            )
            build.resolver.reset()


def stale_plan(
    spec: BenchmarkSpec,
    instance: dg.DagsterInstance | None = None,
    resources: Mapping[str, Any] | None = None,
    disciplines: list[str] | None = None,
) -> dict[dg.AssetKey, list[str | None]]:
    """What Dagster's stale status (the resolver behind the UI's stale badges and "Materialize stale and missing")
    says is STALE or MISSING, per asset and partition, once the inputs are observed: `run --plan`. Builds nothing.
    A run starts from exactly this set; what a rebuilt asset feeds turns stale only once it is rebuilt (Dagster
    does not mark the assets below a stale one), so a run may go further down than its plan."""
    build = _prepare(spec, instance, resources, disciplines, "CRITICAL")
    _observe_inputs(build, lambda _: None, force=False)
    plan: dict[dg.AssetKey, list[str | None]] = {}
    groups = [*build.groups, _Group("release", None, [None], [a for a in build.assets if a.key == build.release_key])]
    for group in groups:
        for asset in group.assets:
            stale = [
                p
                for p in group.partition_keys
                if build.resolver.status(asset.key, p) in (StaleStatus.STALE, StaleStatus.MISSING)
            ]
            if stale:
                plan[asset.key] = stale
    return plan


def materialize_all(
    spec: BenchmarkSpec,
    instance: dg.DagsterInstance | None = None,
    resources: Mapping[str, Any] | None = None,
    log: Callable[[str], None] = print,
    events: EventLogFile | None = None,
    disciplines: list[str] | None = None,
    starting: Callable[[str], None] | None = None,  # called with a partition's prefix before it runs
    console_level: str = "CRITICAL",
    force: bool = False,
) -> ReleaseGate:
    """What is stale or missing (everything with `force`), per asset and partition, in dependency order: sources,
    then disciplines, then unpartitioned assets; then the release gate's blocking checks, and the release only if
    they pass (as `<spec>_release_job` does). A release that is up to date (and on disk) is not written again.

    `instance` defaults to the project's Dagster instance (dagster.yaml); `resources` override the definitions'.
    Prints one line per partition (each stage: rows and time; or "up to date"); Dagster's events go to `events` (a
    file), if given. `disciplines` restricts the discipline partitions run (default: all). `console_level` is the
    threshold of Dagster's console log (CRITICAL: quiet; every event is in the instance's event log and in `events`).
    Runs carry a named job per spec and partitioning (`<spec>_build_<group>`), not Dagster's ephemeral one.
    """
    build = _prepare(spec, instance, resources, disciplines, console_level)
    instance, release_key = build.instance, build.release_key

    def record(result: dg.ExecuteInProcessResult) -> list[StageOutcome]:
        logs = instance.all_logs(result.run_id)  # read once: the event log file and the stage lines share it
        if events is not None:
            events.append_run(instance, result.run_id, logs)
        return stage_outcomes(result, instance, logs)

    def run(label: str, asset_keys: list[dg.AssetKey], partition_key: str | None) -> list[StageOutcome]:
        return record(
            build.runnable.resolve_job_def(build.jobs[label].name).execute_in_process(
                instance=instance,
                partition_key=partition_key,
                asset_selection=asset_keys,
                tags=build.tags,
                run_config=build.run_config,
                raise_on_error=True,
            )
        )

    _observe_inputs(build, record, force)
    for group in build.groups:
        if not group.assets:
            continue
        for n, partition_key in enumerate(group.partition_keys, 1):
            prefix = partition_prefix(spec.name, group.label, n, len(group.partition_keys), partition_key)
            if starting:
                starting(prefix)
            outcomes = _build_partition(build.resolver, group, partition_key, force, run)
            line = partition_stages(outcomes) if outcomes else "up to date"
            log(line if starting else f"{prefix} {line}")
    prefix = partition_prefix(spec.name, "release", 1, 1, None)
    directory = Path(getattr(build.resources.get("release_directory"), "root", ".")) / spec.name / spec.release.version
    fresh = build.resolver.status(release_key, None) == StaleStatus.FRESH
    if fresh and not force and (directory / "manifest.json").is_file():
        log(f"{prefix} up to date ({directory})")
        return ReleaseGate([], up_to_date=True)
    checks = release_input_checks(spec)
    result = dg.materialize(
        [*build.assets, *build.observed, *checks],
        selection=dg.AssetSelection.checks(*[k for c in checks for k in c.check_keys]),
        instance=instance,
        resources=build.resources,
        raise_on_error=True,
        tags=build.tags,
        run_config=build.run_config,
    )
    record(result)
    gate = ReleaseGate([(e.check_name, e.passed) for e in result.get_asset_check_evaluations()])
    log(f"[{spec.name} release gate] {gate.describe()}")
    if gate.passed:
        if starting:
            starting(prefix)
        stages = partition_stages(run("release", [release_key], None))
        log(stages if starting else f"{prefix} {stages}")
    return gate


def _build_partition(
    resolver: _Resolver,
    group: _Group,
    partition_key: str | None,
    force: bool,
    run: Callable[[str, list[dg.AssetKey], str | None], list[StageOutcome]],
) -> list[StageOutcome]:
    """Run the group's stale or missing assets of one partition, round by round, until none is left.

    Dagster marks an asset stale when its code version changed or an input's data version moved since it was
    built; it does not mark the assets below a stale one until that one is rebuilt (its new data version may equal
    the old). So a round runs the stale assets with nothing pending above them, and everything missing with what is
    below it (certainly to build, in one run: Dagster orders the steps); an asset waits while an asset above it
    is stale, since it reads what that one will write. An anchor file edit rebuilds `anchors`, then what reads the
    new anchors, and so on down; an asset whose inputs come back unchanged stops the walk there."""
    graph = resolver.graph
    keys = [a.key for a in group.assets]
    above = {k: _ancestors(graph, k) & set(keys) for k in keys}
    done: set[dg.AssetKey] = set()
    outcomes: list[StageOutcome] = []
    while True:
        if force and not done:
            todo = set(keys)
        else:
            status = {k: resolver.status(k, partition_key) for k in keys if k not in done}
            missing = {k for k, s in status.items() if s == StaleStatus.MISSING}
            certain = (missing | {d for k in missing for d in _descendants(graph, k)}) & set(keys)
            pending = ({k for k, s in status.items() if s == StaleStatus.STALE} | certain) - done
            todo = {k for k in pending if not (above[k] & pending) - certain}
        if not todo:
            return outcomes
        outcomes += run(group.label, [k for k in keys if k in todo], partition_key)
        resolver.reset()  # what it wrote moves the stale status of what reads it
        done |= todo


@dataclass(frozen=True)
class ReleaseGate:
    outcomes: list[tuple[str, bool]]  # (blocking check, passed)
    up_to_date: bool = False  # the release was current and on disk: no gate, nothing written

    @property
    def passed(self) -> bool:
        return all(ok for _, ok in self.outcomes)

    def describe(self) -> str:
        if self.up_to_date:
            return "release up to date"
        checks = ", ".join(f"{name} {'passed' if ok else 'FAILED'}" for name, ok in sorted(self.outcomes))
        return f"{'passed' if self.passed else 'FAILED: no release written'} ({checks})"
