"""Release: one versioned bundle over the audited items of every discipline (not partitioned).

The manifest says what the release is (byte-identical on a rerun); lineage.json records, for every upstream asset
partition, the data version, code version and run id of its latest materialisation in the Dagster instance, with
the building run and time, so `benchmark-platform release rebuild` can say what it rebuilt from.
"""

from pathlib import Path
from typing import Any

import dagster as dg

from benchmark_platform.defs.automation.concurrency import DATABASE_POOL
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key
from benchmark_platform.paths import RELEASES_DIR
from benchmark_platform.release import RELEASE_CODE_VERSION, build_release, spec_fingerprint
from benchmark_platform.spec import BenchmarkSpec

RELEASE_KEY_ENV = "BENCHMARK_PLATFORM_RELEASE_KEY"


class ReleaseDirectory(dg.ConfigurableResource):
    """Where bundles are written: <root>/<spec>/<version>/ (one folder per version; old versions are kept)."""

    root: str = str(RELEASES_DIR)


class ReleaseKey(dg.ConfigurableResource):
    """The Fernet key sealing the test split (from the environment; never logged or written)."""

    key: str | None = None


def upstream_provenance(
    context: dg.AssetExecutionContext, spec: BenchmarkSpec
) -> dict[str, dict[str, dict[str, Any] | None]]:
    """asset key -> partition ('' when unpartitioned) -> latest materialisation's (an input's: observation's)
    versions and run id, and whether this build reused it (None: never built).

    A build is every run of one `benchmark-platform run` (their shared build tag; a run without one, e.g. from the
    UI, is its own build): a materialisation from another build was current and reused. Ancestors come from the
    spec's whole graph: a run's own job may hold only the assets it executes."""
    from benchmark_platform.defs import build_definitions
    from benchmark_platform.defs.pipeline import BUILD_TAG

    graph = build_definitions(spec).resolve_asset_graph()
    ancestors, stack = set(), list(graph.get(context.asset_key).parent_keys)
    while stack:
        asset_key = stack.pop()
        if asset_key not in ancestors:
            ancestors.add(asset_key)
            stack.extend(graph.get(asset_key).parent_keys)
    provenance: dict[str, dict[str, dict[str, Any] | None]] = {}
    for asset_key in sorted(ancestors, key=lambda k: k.to_user_string()):
        node = graph.get(asset_key)
        partitions = node.partitions_def.get_partition_keys() if node.partitions_def else [None]
        provenance[asset_key.to_user_string()] = {
            partition or "": _latest(context.instance, asset_key, partition, node.is_external)
            for partition in partitions
        }
    run_ids = {e["run_id"] for p in provenance.values() for e in p.values() if e}
    builds = (
        {
            r.dagster_run.run_id: r.dagster_run.tags.get(BUILD_TAG)
            for r in context.instance.get_run_records(dg.RunsFilter(run_ids=sorted(run_ids)))
        }
        if run_ids
        else {}
    )
    this_build = context.run.tags.get(BUILD_TAG)
    for entries in provenance.values():
        for entry in entries.values():
            if entry:
                built_here = entry["run_id"] == context.run.run_id or (
                    this_build is not None and builds.get(entry["run_id"]) == this_build
                )
                entry["reused"] = not built_here
    return provenance


def _latest(
    instance: dg.DagsterInstance, asset_key: dg.AssetKey, partition: str | None, observed: bool = False
) -> dict[str, Any] | None:
    records_filter = dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition] if partition else None)
    fetch = instance.fetch_observations if observed else instance.fetch_materializations
    records = fetch(records_filter, limit=1).records
    if not records:
        return None
    entry = records[0].event_log_entry
    event = entry.asset_observation if observed else entry.asset_materialization
    tags = (event.tags if event else None) or {}
    return {
        "data_version": tags.get("dagster/data_version"),
        "code_version": tags.get("dagster/code_version"),
        "run_id": records[0].run_id,
    }


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    all_partitions = dg.AllPartitionMapping()

    @dg.asset(
        key=key(spec, "release"),
        group_name="release",
        # the release reads the whole spec (spec.json is in the bundle): any setting makes it stale
        code_version=f"{RELEASE_CODE_VERSION}-{spec_fingerprint(spec.model_dump_json())[:12]}",
        pool=DATABASE_POOL,
        deps=[dg.AssetDep(key(spec, "audit_findings"), partition_mapping=all_partitions), key(spec, "analysis")],
        description=f"The versioned release bundle ({spec.release.version}): Parquet tables, plots, Croissant, "
        "datasheet, harness exports, an optional sealed test split, and a manifest of hashes.",
    )
    def release(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        release_directory: ReleaseDirectory,
        release_key: ReleaseKey,
    ) -> dg.MaterializeResult:
        built = build_release(
            database.db,
            spec,
            Path(release_directory.root),
            release_key.key,
            context.run.run_id,
            upstream_provenance(context, spec),
        )
        context.log.info(
            f"release {spec.release.version} written to {built.directory}: {built.files} files, {built.split}"
        )
        return dg.MaterializeResult(
            data_version=dg.DataVersion(built.digest),
            metadata={
                "path": dg.MetadataValue.path(str(built.directory)),
                **counts_metadata(files=built.files, **built.split),
                "rows": dg.MetadataValue.json(
                    {
                        p.removeprefix("data/").removesuffix(".parquet"): n
                        for p, n in built.rows.items()
                        if p.startswith("data/")
                    }
                ),
            },
        )

    release_key = ReleaseKey(key=dg.EnvVar(RELEASE_KEY_ENV)) if spec.release.test_share > 0 else ReleaseKey()
    return dg.Definitions(
        assets=[release], resources={"release_directory": ReleaseDirectory(), "release_key": release_key}
    )
