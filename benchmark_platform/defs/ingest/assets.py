"""Ingest: one partition per source; each run stores exactly what the source's snapshot holds."""

from __future__ import annotations

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key, source_partitions
from benchmark_platform.ingest.documents import read_source
from benchmark_platform.ingest.persist import store_source_documents
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()
    sources = {source.id: source for source in spec.sources}

    @dg.asset(key=key(spec, "source_documents"), partitions_def=source_partitions(spec), group_name="ingest",
              description="Documents exactly as each source served them, with URL, retrieval time, tier, licence "
                          "and content hash.")
    def source_documents(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        source = sources[context.partition_key]
        documents = read_source(source, spec.snapshot_dir)
        counts = store_source_documents(database.db, spec.name, source, documents)
        context.log.info(f"{source.id}: stored {counts['documents']} documents")
        return dg.MaterializeResult(metadata={**counts_metadata(**counts), "tier": source.tier,
                                              "licence": source.licence})

    return dg.Definitions(assets=[source_documents])
