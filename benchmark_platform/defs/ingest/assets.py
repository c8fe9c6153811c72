"""Ingest: one partition per source; a run reads the source through the fetcher resource (replaying the spec's
snapshot store by default), stores its documents with their verified traces, and checks the stored partition."""

import dagster as dg

from benchmark_platform.defs.automation.concurrency import DATABASE_POOL
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key, source_partitions
from benchmark_platform.defs.ingest.resources import SourceFetcher
from benchmark_platform.ingest.checks import CHECKS, check_source, source_rows
from benchmark_platform.ingest.persist import store_ingest
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
        result = fetcher.ingest(source, store)
        context.log.info(
            f"{source.id}: {len(result.documents)} documents, {len(result.rejections)} rejected "
            f"({fetcher.mode} from {store.root})"
        )
        for rejection in result.rejections[:20]:
            context.log.warning(f"rejected {rejection.locator}: {rejection.reason}")
        counts = store_ingest(database.db, spec.name, result, store)
        checks = [
            dg.AssetCheckResult(
                check_name=o.name,
                passed=o.passed,
                description=o.description,
                metadata={k: str(v) for k, v in o.metadata.items()},
            )
            for o in check_source(source_rows(database.db, source.id))
        ]
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(**counts),
                "tier": source.tier,
                "licence": source.licence,
                "adapter": source.adapter,
                "mode": fetcher.mode,
            },
            check_results=checks,
        )

    return dg.Definitions(assets=[source_documents], resources={"fetcher": SourceFetcher()})
