"""Selection (foundation): greedy embedding coverage of each discipline's facts -> selected_facts."""

import dagster as dg

from benchmark_platform.defs.common import DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.selection.baseline import greedy_coverage
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import insert_rows


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()

    @dg.asset(key=key(spec, "selected_facts"), partitions_def=discipline_partitions(spec), group_name="selection",
              deps=[key(spec, "facts")], code_version="greedy-coverage-1",
              description="The facts chosen for generation: a greedy cover of the discipline's fact embeddings.")
    def selected_facts(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        discipline = context.partition_key
        db = database.db
        facts = db.query("SELECT fact_id, text FROM facts WHERE spec = %s AND discipline = %s ORDER BY fact_id",
                         (spec.name, discipline))
        vectors = StaticEmbedder().encode([f["text"] for f in facts])
        picks = greedy_coverage(vectors, spec.selection.facts_per_discipline)
        with db.transaction() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM selected_facts WHERE spec = %s AND discipline = %s", (spec.name, discipline))
            insert_rows(conn, "selected_facts", ("spec", "discipline", "fact_id", "rank", "gain"),
                        [(spec.name, discipline, facts[p.index]["fact_id"], rank, p.gain)
                         for rank, p in enumerate(picks)])
        coverage = sum(p.gain for p in picks)
        return dg.MaterializeResult(metadata=counts_metadata(candidates=len(facts), selected=len(picks),
                                                             coverage=coverage))

    return dg.Definitions(assets=[selected_facts])
