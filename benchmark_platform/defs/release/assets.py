"""Release: one versioned bundle over the audited items of every discipline (not partitioned)."""

from pathlib import Path

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key
from benchmark_platform.paths import RELEASES_DIR
from benchmark_platform.release.bundle import record_release, write_release
from benchmark_platform.release.tables import read_release_tables, spec_fingerprint
from benchmark_platform.spec import BenchmarkSpec


class ReleaseDirectory(dg.ConfigurableResource):
    """Where bundles are written: <root>/<spec>/<version>/."""

    root: str = str(RELEASES_DIR)


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    @dg.asset(key=key(spec, "release"), group_name="release",
              deps=[dg.AssetDep(key(spec, "audit_findings"), partition_mapping=dg.AllPartitionMapping())],
              description=f"The versioned release bundle ({spec.release.version}): Parquet tables and a manifest.")
    def release(context: dg.AssetExecutionContext, database: DatabaseResource,
                release_directory: ReleaseDirectory) -> dg.MaterializeResult:
        tables = read_release_tables(database.db, spec.name)
        directory = Path(release_directory.root) / spec.name / spec.release.version
        manifest = write_release(directory, spec.name, spec.release.version, spec.release.canary, tables,
                                 provenance={"spec_sha256": spec_fingerprint(spec.model_dump_json())})
        record_release(database.db, spec.name, spec.release.version, directory, manifest)
        rows = {name.removesuffix(".parquet"): entry["rows"] for name, entry in manifest["files"].items()}
        context.log.info(f"release written to {directory}: {rows}")
        return dg.MaterializeResult(metadata={
            "path": dg.MetadataValue.path(str(directory)), **counts_metadata(**rows),
            "files": dg.MetadataValue.json(manifest["files"]),
        })

    return dg.Definitions(assets=[release], resources={"release_directory": ReleaseDirectory()})
