"""What the graph reads from outside Dagster, as observable source assets: each discipline's anchor files, what the
snapshot store serves each source, the item bank file and the imported result files. An observation records their
content hashes as data versions, so the assets reading them turn stale in Dagster's own stale status (what the UI
shows, "Observe sources" refreshes, and `benchmark-platform run` observes before it decides what to build)."""

import dagster as dg

from benchmark_platform.defs.common import discipline_partitions, key, source_partitions
from benchmark_platform.defs.inputs.versions import (
    ANCHOR_FILES,
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
            return dg.DataVersionsByPartition({d: anchors_version(spec, d) for d in spec.discipline_keys})

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
            store = context.resources.fetcher.store(spec.snapshot_dir)
            return dg.DataVersionsByPartition({s.id: source_version(s, store) for s in spec.sources})

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
    return dg.Definitions(assets=observed)
