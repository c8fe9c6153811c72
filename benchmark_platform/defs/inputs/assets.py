"""What the graph reads from outside Dagster, as observable source assets: each discipline's anchor files, what the
snapshot store serves each source, the item bank file, the imported result files and the gold labels (`audit
import-gold`, the review app's ratings: rows in the database). An observation records their content hashes as data
versions, so the assets reading them turn stale in Dagster's own stale status (what the UI shows, "Observe sources"
refreshes, and `benchmark-platform run` observes before it decides what to build)."""

from collections.abc import Callable, Mapping
from typing import Any

import dagster as dg

from benchmark_platform.audit import gold_digest
from benchmark_platform.defs.common import DatabaseResource, discipline_partitions, key, source_partitions
from benchmark_platform.defs.inputs.versions import (
    ANCHOR_FILES,
    GOLD_LABELS,
    ITEM_BANK_FILE,
    RESULT_FILES,
    SOURCE_RECORDINGS,
    anchors_version,
    bank_version,
    files_version,
    result_paths,
    source_version,
)
from benchmark_platform.spec import BenchmarkSpec

# an input's current versions (partition key, or None unpartitioned -> data version), from the run's resources
Versions = Callable[[Mapping[str, Any]], dict[str | None, str]]


def input_versions(spec: BenchmarkSpec) -> dict[dg.AssetKey, Versions]:
    """What each observation of the spec would record, computed without recording it: `run` compares it with the
    latest recorded observation and observes (a Dagster run) only the inputs that moved."""
    versions: dict[dg.AssetKey, Versions] = {}
    if spec.sources or spec.item_bank is not None:
        versions[key(spec, ANCHOR_FILES)] = lambda _: _partitioned(_anchor_versions(spec))
    if spec.sources:
        versions[key(spec, SOURCE_RECORDINGS)] = lambda resources: _partitioned(
            _recording_versions(spec, resources["fetcher"])
        )
    if spec.item_bank is not None:
        versions[key(spec, ITEM_BANK_FILE)] = lambda _: {None: bank_version(spec)}
    if spec.evaluation.imports:
        versions[key(spec, RESULT_FILES)] = lambda _: {None: files_version(result_paths(spec))}
    versions[key(spec, GOLD_LABELS)] = lambda resources: {None: gold_digest(resources["database"].db)}
    return versions


def _partitioned(versions: dict[str, str]) -> dict[str | None, str]:
    return {partition: version for partition, version in versions.items()}


def _anchor_versions(spec: BenchmarkSpec) -> dict[str, str]:
    return {d: anchors_version(spec, d) for d in spec.discipline_keys}


def _recording_versions(spec: BenchmarkSpec, fetcher: Any) -> dict[str, str]:
    store = fetcher.store(spec.snapshot_dir)  # its store_dir, when set, is the store read
    return {s.id: source_version(s, store) for s in spec.sources}


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    observed: list[dg.SourceAsset] = []
    if spec.sources or spec.item_bank is not None:

        @dg.observable_source_asset(
            key=key(spec, ANCHOR_FILES),
            partitions_def=discipline_partitions(spec),
            group_name="inputs",
            description="Each discipline's anchor files under the spec's anchors/ folder (content hash).",
        )
        def anchor_files() -> dg.DataVersionsByPartition:
            return dg.DataVersionsByPartition(_anchor_versions(spec))

        observed.append(anchor_files)
    if spec.sources:

        @dg.observable_source_asset(
            key=key(spec, SOURCE_RECORDINGS),
            partitions_def=source_partitions(spec),
            group_name="inputs",
            required_resource_keys={"fetcher"},  # its store_dir, when set, is the store read
            description="Each source's settings and what the snapshot store serves for it (body hashes).",
        )
        def source_recordings(context: dg.OpExecutionContext) -> dg.DataVersionsByPartition:
            return dg.DataVersionsByPartition(_recording_versions(spec, context.resources.fetcher))

        observed.append(source_recordings)
    if spec.item_bank is not None:

        @dg.observable_source_asset(
            key=key(spec, ITEM_BANK_FILE),
            group_name="inputs",
            description=f"The item bank file {spec.item_bank.path} (sha256).",
        )
        def item_bank_file() -> dg.DataVersion:
            return dg.DataVersion(bank_version(spec))

        observed.append(item_bank_file)
    if spec.evaluation.imports:

        @dg.observable_source_asset(
            key=key(spec, RESULT_FILES),
            group_name="inputs",
            description="The result files evaluation imports (sha256 over names and bytes).",
        )
        def result_files() -> dg.DataVersion:
            return dg.DataVersion(files_version(result_paths(spec)))

        observed.append(result_files)

    @dg.observable_source_asset(
        key=key(spec, GOLD_LABELS),
        group_name="inputs",
        description="Every gold item and rating in the database (`audit import-gold`, the review app): what the "
        "audit calibration and the human key vetoes read (md5 of the rows).",
    )
    def gold_labels(database: DatabaseResource) -> dg.DataVersion:
        return dg.DataVersion(gold_digest(database.db))

    observed.append(gold_labels)
    return dg.Definitions(assets=observed)
