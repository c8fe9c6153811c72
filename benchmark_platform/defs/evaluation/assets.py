"""Evaluation: per discipline, the answers of the random baseline, of imported result files and of the model slate
(through the LLM gateway, when the spec has a slate), with per-answer telemetry.

The slate runs through the LLM gateway resource (`llm`, defs/llm): each partition's slate is one gateway session.
"""

import hashlib
import json

import dagster as dg

from benchmark_platform.analysis import evaluation_tables, telemetry_table
from benchmark_platform.defs.common import (
    MODEL_TAG,
    SINGLE_RUN,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.inputs.versions import RESULT_FILES
from benchmark_platform.defs.llm.resources import busiest_pool, gateway_sessions, llm_metadata
from benchmark_platform.evaluation import (
    AnswerProtocol,
    EvaluationRun,
    ResultsImportError,
    evaluate_discipline,
)
from benchmark_platform.spec import BenchmarkSpec


def _code_version(spec: BenchmarkSpec) -> str:
    """Changes when the protocol, its prompts or what the spec asks to evaluate change."""
    prompts = [AnswerProtocol().system_prompt("ABCD", retry=retry) for retry in (False, True)]
    payload = json.dumps(
        [AnswerProtocol().model_dump(), prompts, spec.evaluation.model_dump(mode="json"), spec.seed], sort_keys=True
    )
    return "evaluation-1-" + hashlib.sha256(payload.encode()).hexdigest()[:12]


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    slate = spec.evaluation.slate

    models = {m.name: m for m in spec.models}
    calls: dict[str, float] = {}  # expected calls per item: k samples, or one per option scored by likelihood
    for entry in slate:
        calls[entry.model] = calls.get(entry.model, 0.0) + (entry.k if entry.scoring == "generate" else 4.0)

    @dg.asset(
        key=key(spec, "evaluation_answers"),
        partitions_def=discipline_partitions(spec),
        group_name="evaluation",
        deps=[
            key(spec, "audit_findings"),
            key(spec, "selected_items"),
            *([key(spec, RESULT_FILES)] if spec.evaluation.imports else []),
        ],
        code_version=_code_version(spec),
        backfill_policy=SINGLE_RUN,
        pool=busiest_pool([models[name] for name in calls if name in models], calls)
        or stage_pool("evaluation_answers"),
        required_resource_keys={"database", "llm"} if slate else {"database"},
        description="Answers per item of the random baseline, imported runs and the model slate (avg@k, "
        "five-stop single-letter protocol), with tokens, latency and cost per answer.",
    )
    def evaluation_answers(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            try:
                done = evaluate_discipline(
                    context.resources.database.db,
                    spec,
                    discipline,
                    gateway_sessions(context, spec.llm),
                    context.run.tags.get(MODEL_TAG),  # set by the new-model sensor
                )
            except ResultsImportError as exc:
                raise dg.Failure(str(exc)) from exc
            items, runs = done.items, done.runs
            if not items:
                context.log.warning(f"{spec.name}/{discipline}: no items to evaluate")
                return dg.MaterializeResult(metadata=counts_metadata(items=0, configurations=0, answers=0))
            if done.only_model is not None:
                added = done.only_model
                context.log.info(f"{discipline}: {len(items)} items, new model {added}: {done.stored[added]} answers")
                return dg.MaterializeResult(
                    metadata={
                        **counts_metadata(items=len(items), answers=done.stored[added]),
                        **llm_metadata(done.gateway_totals),
                        "evaluated": dg.MetadataValue.text(f"only {added} (run tag {MODEL_TAG}); other runs kept"),
                        "telemetry per configuration": dg.MetadataValue.md(telemetry_table(runs[0].answers)),
                    }
                )
            context.log.info(f"{discipline}: {len(items)} items, answers per configuration {done.stored}")
            return dg.MaterializeResult(metadata=_metadata(spec, items, runs) | llm_metadata(done.gateway_totals))

        return per_partition(context, one)

    return dg.Definitions(assets=[evaluation_answers])


def _metadata(spec: BenchmarkSpec, items: list, runs: list[EvaluationRun]) -> dict[str, dg.MetadataValue]:
    answers, tables = evaluation_tables(spec, runs)
    return {
        **counts_metadata(items=len(items), configurations=len(runs), answers=answers),
        **{name: dg.MetadataValue.md(table) for name, table in tables.items()},
    }
