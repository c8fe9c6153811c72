"""Ingest: one partition per source; a run reads the source through the fetcher resource (replaying the spec's
snapshot store by default), stores its documents with their verified traces, and checks the stored partition."""

import json

import dagster as dg

from benchmark_platform.defs.automation.concurrency import DATABASE_POOL
from benchmark_platform.defs.common import (
    TRIGGER_TAG,
    DatabaseResource,
    counts_metadata,
    key,
    sensor_status,
    source_partitions,
    unbuilt_note,
)
from benchmark_platform.defs.ingest.resources import SourceFetcher
from benchmark_platform.defs.inputs.versions import SOURCE_RECORDINGS, source_version
from benchmark_platform.ingest import CHECKS, ingest_to_store, recorded_version
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()
    sources = {source.id: source for source in spec.sources}
    asset_key = key(spec, "source_documents")

    @dg.asset(
        key=asset_key,
        partitions_def=source_partitions(spec),
        group_name="ingest",
        deps=[key(spec, SOURCE_RECORDINGS)],
        code_version="ingest-1",
        pool=DATABASE_POOL,
        check_specs=[dg.AssetCheckSpec(name, asset=asset_key) for name in CHECKS],
        description="Documents exactly as each source served them, each a verified byte span of a recorded "
        "response, with URL, retrieval time, tier, licence and content hash.",
    )
    def source_documents(
        context: dg.AssetExecutionContext, database: DatabaseResource, fetcher: SourceFetcher
    ) -> dg.MaterializeResult:
        source = sources[context.partition_key]
        store = fetcher.store(spec.snapshot_dir)
        ingested = ingest_to_store(database.db, spec.name, source, store, fetcher.live_policy())
        result = ingested.result
        context.log.info(
            f"{source.id}: {len(result.documents)} documents, {len(result.rejections)} rejected "
            f"({fetcher.mode} from {store.root})"
        )
        for rejection in result.rejections[:20]:
            context.log.warning(f"rejected {rejection.locator}: {rejection.reason}")
        checks = [
            dg.AssetCheckResult(
                check_name=o.name,
                passed=o.passed,
                description=o.description,
                metadata={k: str(v) for k, v in o.metadata.items()},
            )
            for o in ingested.checks
        ]
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(**ingested.counts),
                "tier": source.tier,
                "licence": source.licence,
                "adapter": source.adapter,
                "mode": fetcher.mode,
            },
            check_results=checks,
            # what was ingested: the source's settings and recordings, as source_recordings observes them
            data_version=dg.DataVersion(source_version(source, store)),
        )

    return dg.Definitions(
        assets=[source_documents], sensors=[recorded_documents_sensor(spec)], resources={"fetcher": SourceFetcher()}
    )


def recorded_documents_sensor(spec: BenchmarkSpec) -> dg.SensorDefinition:
    """Why a sensor: in replay mode (the default) a source's documents change only when its recordings do, which no
    asset materialisation tells Dagster. Live mode is left to the reingest schedule: a live run records what it
    fetched, and watching its own recordings would only echo it."""
    sources = [s for s in spec.sources if s.listed_urls()]  # adapters that build their own requests: the schedule

    @dg.sensor(
        name=f"{spec.name}_recorded_documents",
        asset_selection=[key(spec, "source_documents")],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        # on: it requests a source only when a recording with new content was added; the first tick records the
        # store as deployed, and the cursor (in Postgres) survives daemon restarts
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Re-ingests exactly the sources whose recorded responses (replay store) changed content.",
    )
    def recorded_documents(
        context: dg.SensorEvaluationContext, fetcher: SourceFetcher
    ) -> dg.SensorResult | dg.SkipReason:
        if fetcher.mode != "replay":
            return dg.SkipReason("live mode: the reingest schedule re-reads the sources")
        store = fetcher.store(spec.snapshot_dir)
        now = {s.id: recorded_version(store, s.listed_urls()) for s in sources}
        cursor = json.dumps(now, sort_keys=True)
        if context.cursor is None:
            return dg.SensorResult(cursor=cursor, skip_reason=dg.SkipReason("recordings as deployed"))
        seen = json.loads(context.cursor)
        requests = [
            dg.RunRequest(
                run_key=f"recorded:{source}:{version}", partition_key=source, tags={TRIGGER_TAG: "new_recording"}
            )
            for source, version in sorted(now.items())
            if seen.get(source) != version
        ]
        return dg.SensorResult(run_requests=requests, cursor=cursor)

    return recorded_documents
