"""Facts: per discipline, atomic facts extracted from every stored document of the spec's sources."""

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.facts.extract import extract_prose, extract_structured
from benchmark_platform.facts.persist import load_source_texts, store_facts
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()

    @dg.asset(key=key(spec, "facts"), partitions_def=discipline_partitions(spec), group_name="facts",
              deps=[dg.AssetDep(key(spec, "source_documents"), partition_mapping=dg.AllPartitionMapping())],
              code_version="facts-basic-1",
              description="Atomic, source-anchored facts (document + character span) of one discipline.")
    def facts(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        texts = load_source_texts(database.db, [s.id for s in spec.sources])
        extraction = extract_prose(texts, spec.facts)
        for text in texts:
            structured = extract_structured(text, spec.facts.templates)
            extraction.facts += structured.facts
            extraction.rejected += structured.rejected
        mine = [f for f in extraction.facts if f.discipline == discipline]
        counts = store_facts(database.db, spec.name, discipline, mine)
        context.log.info(f"{discipline}: {len(mine)} facts from {len(texts)} documents")
        return dg.MaterializeResult(metadata={
            **counts_metadata(**counts, documents=len(texts)),
            "rejections (all disciplines)": dg.MetadataValue.json(dict(extraction.rejected.most_common())),
        })

    return dg.Definitions(assets=[facts])
