"""Generation: questions from a discipline's selected facts (deterministic templates on the embedded default)."""

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.generation.persist import load_selected_structured, load_structured_pool, store_items
from benchmark_platform.generation.templates import PROMPT_VERSION, generate_from_templates
from benchmark_platform.spec import BenchmarkSpec


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()

    @dg.asset(key=key(spec, "items"), partitions_def=discipline_partitions(spec), group_name="generation",
              deps=[key(spec, "selected_facts")], code_version=PROMPT_VERSION,
              description="Multiple-choice items generated from the discipline's selected facts, each linked to them.")
    def items(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        selected = load_selected_structured(database.db, spec.name, discipline)
        pool = load_structured_pool(database.db, spec.name, discipline)
        generated, skipped = generate_from_templates(
            spec.name, spec.seed, [t for t in spec.generation.templates if t.discipline == discipline],
            selected, pool, spec.generation.options_per_item)
        counts = store_items(database.db, spec.name, discipline, generated)
        context.log.info(f"{discipline}: {len(generated)} items from {len(selected)} selected facts")
        return dg.MaterializeResult(metadata={**counts_metadata(**counts, selected_facts=len(selected)),
                                              "skipped": dg.MetadataValue.json(skipped)})

    return dg.Definitions(assets=[items])
