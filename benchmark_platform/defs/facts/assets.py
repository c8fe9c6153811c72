"""Facts: per source, candidates through the five filters (fact_candidates); per discipline, facts with
near-duplicates removed and a quality report (facts)."""

import hashlib
import json
import time

import dagster as dg

from benchmark_platform.defs.common import (
    SINGLE_RUN,
    TRIGGER_TAG,
    DatabaseResource,
    EmbedderResource,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    sensor_status,
    source_partitions,
    stage_pool,
    unbuilt_note,
)
from benchmark_platform.defs.inputs.versions import settings_hash
from benchmark_platform.defs.llm.resources import LLMGatewayResource, busiest_pool, llm_metadata
from benchmark_platform.facts import FactSet, build_facts, candidate_digests, extract_source
from benchmark_platform.spec import BenchmarkSpec


def _code_version(spec: BenchmarkSpec, stage: str) -> str:
    """Changes with the facts section of the spec (thresholds, lexicons, gazetteer files, templates)."""
    digest = hashlib.sha256(spec.facts.model_dump_json().encode() + settings_hash(spec.taxonomy, spec.seed).encode())
    for gazetteer in spec.facts.gazetteers:
        digest.update((spec.directory / gazetteer.path).read_bytes())
    return f"facts-{stage}-2-{digest.hexdigest()[:12]}"


def facts_version(fact_set: FactSet) -> str:
    """The discipline's facts as stored (ids, spans, texts, entities): its data version. Every discipline reads every
    source's candidates, so any new or changed source makes all of them stale; a discipline whose facts come back
    the same keeps its version, and what reads it stays current (issue 41)."""
    rows = sorted(
        (
            f.fact_id,
            c.document_id,
            c.span_start,
            c.span_end,
            c.text,
            c.confidence,
            c.method,
            c.attributes,
            [(m.entity_id, m.entity_type, m.surface, m.ner_label) for m in c.mentions],
        )
        for f in fact_set.facts
        if (c := f.candidate)
    )
    return "facts-" + settings_hash(rows)


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    if not spec.sources:
        return dg.Definitions()
    # the spec's validators checked that the sources and the model named here exist
    paraphrase_model = next((m for m in spec.models if m.name == spec.facts.paraphrase_model), None)
    candidates_key = key(spec, "fact_candidates")

    @dg.asset(
        key=candidates_key,
        partitions_def=source_partitions(spec),
        group_name="facts",
        deps=[key(spec, "source_documents")],
        # eager: a source's new ingest run re-extracts that source only (source partitions map one to one)
        automation_condition=dg.AutomationCondition.eager(),
        code_version=_code_version(spec, "candidates"),
        description="Atomic fact candidates of one source through the five filters of OenoBench B.1 (sentence "
        "and conjunction split, reference resolution, domain classification, length/predicate "
        "validation, on-topic), plus templated facts of structured records; every rejection "
        "stored with its stage and reason.",
    )
    def fact_candidates(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        source_id = context.partition_key
        started = time.perf_counter()

        def progress(done: int, total: int) -> None:
            elapsed = time.perf_counter() - started
            context.log.info(
                f"{source_id}: {done}/{total} prose documents in {elapsed:.1f} s "
                f"({done / elapsed:.1f}/s, ETA {elapsed / done * (total - done):.0f} s)"
            )

        done = extract_source(database.db, spec, source_id, progress)
        extraction, seconds = done.extraction, done.seconds
        context.log.info(
            f"{source_id}: {done.documents} documents, {extraction.sentences} sentences, "
            f"{len(extraction.candidates)} candidates, {len(extraction.rejections)} rejected "
            f"in {seconds:.1f} s"
        )
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(
                    documents=done.documents,
                    sentences=extraction.sentences,
                    sentences_per_s=round(extraction.sentences / seconds, 1) if seconds else 0.0,
                    candidates=len(extraction.candidates),
                    rejected=len(extraction.rejections),
                ),
                "rejected by stage": dg.MetadataValue.json(done.rejected_by_stage()),
                "candidates by discipline": dg.MetadataValue.json(done.candidates_by_discipline()),
            }
        )

    @dg.asset(
        key=key(spec, "facts"),
        partitions_def=discipline_partitions(spec),
        group_name="facts",
        deps=[dg.AssetDep(candidates_key, partition_mapping=dg.AllPartitionMapping())],
        code_version=_code_version(spec, "facts"),
        backfill_policy=SINGLE_RUN,
        pool=busiest_pool([paraphrase_model] if paraphrase_model else []) or stage_pool("facts"),
        description="Atomic, entity-linked facts of one discipline, each anchored to a document span; "
        "near-duplicates (cosine >= the spec's threshold) removed; quality report per source.",
    )
    def facts(
        context: dg.AssetExecutionContext,
        database: DatabaseResource,
        embedder: EmbedderResource,
        llm: LLMGatewayResource,
    ) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            built = build_facts(
                database.db,
                spec,
                discipline,
                embedder.embedder.encode,
                paraphrase_model,
                lambda models, requests: llm.run(models, requests, settings=spec.llm, run_id=context.run.run_id),
            )
            fact_set, counts, totals = built.fact_set, built.counts, built.gateway_totals
            context.log.info(
                f"{discipline}: {counts['facts']} facts from {built.candidates} candidates, "
                f"{counts['duplicates']} near-duplicates removed; fact text = {fact_set.text_mode}"
            )
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(candidates=built.candidates, **counts, guarded_pairs=fact_set.guarded_pairs),
                    "text mode": fact_set.text_mode,
                    "embedder": f"{embedder.embedder.name} {embedder.embedder.version}",
                    "paraphrase outcome": dg.MetadataValue.json(dict(fact_set.paraphrase_outcome)),
                    "quality report": dg.MetadataValue.md(_report_markdown(built.report)),
                    **(llm_metadata(totals[0]) if totals else {}),
                },
                data_version=dg.DataVersion(facts_version(fact_set)),
            )

        return per_partition(context, one)

    return dg.Definitions(assets=[fact_candidates, facts], sensors=[new_candidates_sensor(spec)])


def new_candidates_sensor(spec: BenchmarkSpec) -> dg.SensorDefinition:
    """Why a sensor and not an automation condition on `facts`: every discipline reads every source's candidates
    (AllPartitionMapping), so an eager condition would rebuild all disciplines after any source's extraction. The
    candidates' digest per discipline says which disciplines a new document touched; only those are rebuilt."""
    facts_key = key(spec, "facts")

    @dg.sensor(
        name=f"{spec.name}_new_fact_candidates",
        asset_selection=[facts_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        # on: the first tick records the digests as deployed and requests nothing (a built database stays quiet);
        # the cursor lives in the instance's Postgres storage, so a daemon restart does not re-request
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Rebuilds the facts of exactly the disciplines whose fact candidates changed (a new or "
        "changed document), one run per discipline and candidate set.",
    )
    def new_candidates(
        context: dg.SensorEvaluationContext, database: DatabaseResource
    ) -> dg.SensorResult | dg.SkipReason:
        now = candidate_digests(database.db, spec.name)
        if context.cursor is None:
            return dg.SensorResult(
                cursor=json.dumps(now, sort_keys=True), skip_reason=dg.SkipReason("candidates as deployed")
            )
        seen = json.loads(context.cursor)
        changed = sorted(d for d in now if d in spec.discipline_keys and seen.get(d) != now[d])
        requests = [
            dg.RunRequest(run_key=f"facts:{d}:{now[d]}", partition_key=d, tags={TRIGGER_TAG: "new_candidates"})
            for d in changed
        ]
        if requests:
            context.log.info(f"candidates changed in {changed}")
        return dg.SensorResult(run_requests=requests, cursor=json.dumps(now, sort_keys=True))

    return new_candidates


def _report_markdown(rows: list) -> str:
    lines = [
        "| source | tier | facts | 31-50 words | mean words | with entities | duplicates | rejected |",
        "|---|---|---|---|---|---|---|---|",
    ]
    lines += [
        f"| {r.source_id} | {r.tier} | {r.facts} | {r.reduced_confidence} | {r.words_mean} | "
        f"{r.with_entities} | {r.duplicates_removed} | {r.rejected} |"
        for r in rows
    ]
    return "\n".join(lines)
