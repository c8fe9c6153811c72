"""Anchors: import each discipline's expert files (KINA 3.1, App. B) into anchor_imports; a sensor watches the files."""

import json

import dagster as dg

from benchmark_platform.anchors import MAIN_FILE, anchor_files, import_anchors, latest_import_versions, version_of
from benchmark_platform.defs.common import (
    DatabaseResource,
    discipline_partitions,
    key,
    per_partition,
    sensor_status,
    stage_pool,
    unbuilt_note,
)
from benchmark_platform.defs.inputs.versions import ANCHOR_FILES
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources and spec.item_bank is None:
        return dg.Definitions()
    anchors_key = key(spec, "anchors")

    @dg.asset(
        key=anchors_key,
        partitions_def=discipline_partitions(spec),
        group_name="anchors",
        deps=[key(spec, ANCHOR_FILES)],  # observed content hash of the files: a changed file makes this stale
        code_version="anchor-import-2",  # 2: the parsed import is stored whole (sql/0420) for the stages after it
        # one discipline per run, on purpose: its data version is the content hash of the discipline's own files
        # (downstream staleness and the release's lineage read it) and Dagster records one data version per output,
        # so a range run would stamp one discipline's version on all (or none). Importing is cheap, and changed
        # files are re-imported by the `<spec>_anchor_files` sensor, so a scheduled backfill rarely includes it.
        backfill_policy=dg.BackfillPolicy.multi_run(max_partitions_per_run=1),
        pool=stage_pool("anchors"),
        description="Expert prototype Sigma_d, item and pair labels, strata, quotas and K_d, imported from "
        "the spec's anchors/<discipline>/ files (versioned by content hash).",
    )
    def anchors(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            stored = import_anchors(database.db, spec, discipline)
            anchor_set, import_id, new = stored.anchor_set, stored.import_id, stored.new
            if anchor_set is None:
                context.log.warning(
                    f"{discipline}: no {stored.folder / MAIN_FILE}; the discipline goes to manual review"
                )
                return dg.MaterializeResult(
                    metadata={"manual_review": f"no anchor files in {stored.folder}"},
                    data_version=dg.DataVersion("none"),
                )
            context.log.info(
                f"{discipline}: import {import_id} ({'new' if new else 'unchanged'}) version {anchor_set.version[:12]}"
            )
            return dg.MaterializeResult(
                metadata={
                    "import_id": import_id,
                    "new_import": new,
                    "version": anchor_set.version,
                    "is_example": anchor_set.is_example,
                    "k_total": anchor_set.k_total,
                    "anchor_items": len(anchor_set.anchor_items),
                    "item_labels": len(anchor_set.item_labels),
                    "pair_labels": len(anchor_set.pair_labels),
                    "strata": len(anchor_set.strata),
                },
                data_version=dg.DataVersion(anchor_set.version),
            )

        return per_partition(context, one)

    @dg.sensor(
        name=f"{spec.name}_anchor_files",
        asset_selection=[anchors_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        # on: it requests only disciplines whose files differ from both the cursor and the stored import, so a
        # fresh daemon over an imported database launches nothing
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Re-imports a discipline's anchors when its files are added or change (content hash); files "
        "already imported (the latest stored version) are not re-imported.",
    )
    def anchor_files_sensor(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult:
        # the cursor (in the instance's Postgres storage) survives daemon restarts; without one (first tick, or a
        # reset cursor) the stored imports say what is already in
        seen = json.loads(context.cursor) if context.cursor else latest_import_versions(database.db, spec.name)
        now = {}
        for discipline in spec.discipline_keys:
            folder = spec.anchors_dir / discipline
            if (folder / MAIN_FILE).is_file():
                now[discipline] = version_of(anchor_files(folder))
        requests = [
            dg.RunRequest(run_key=f"{discipline}:{version}", partition_key=discipline)
            for discipline, version in sorted(now.items())
            if seen.get(discipline) != version
        ]
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(now, sort_keys=True))

    return dg.Definitions(assets=[anchors], sensors=[anchor_files_sensor])
