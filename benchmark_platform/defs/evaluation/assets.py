"""Evaluation: per discipline, the answers of the random baseline, of imported result files and of the model slate
(through the LLM gateway, when the spec has a slate), with per-answer telemetry.

The slate runs through the LLM gateway resource (`llm`, defs/llm): each partition's slate is one gateway session.
"""

import asyncio
import hashlib
import json

import dagster as dg
import polars as pl

from benchmark_platform.analysis import ScoreMatrix, leaderboard, markdown_table
from benchmark_platform.defs.common import MODEL_TAG, DatabaseResource, counts_metadata, discipline_partitions, key
from benchmark_platform.defs.llm.resources import LLMGatewayResource, busiest_pool, llm_metadata
from benchmark_platform.evaluation import (
    AnswerProtocol,
    EvalItem,
    ModelSlate,
    evaluate_by_likelihood,
    evaluate_generative,
    random_baseline,
    telemetry_summary,
)
from benchmark_platform.evaluation.config import SlateEntry
from benchmark_platform.evaluation.gateway import GatewaySlate
from benchmark_platform.evaluation.importers import read_results_import
from benchmark_platform.evaluation.persist import (
    EvaluationRun,
    load_eval_items,
    spec_item_disciplines,
    store_runs,
    stored_models,
)
from benchmark_platform.itembank.run import load_bank
from benchmark_platform.llm.gateway import GatewayTotals
from benchmark_platform.spec import BenchmarkSpec

BASELINE = "random-baseline"


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
        deps=[key(spec, "audit_findings"), key(spec, "selected_items")],
        code_version=_code_version(spec),
        pool=busiest_pool([models[name] for name in calls if name in models], calls),
        required_resource_keys={"database", "llm"} if slate else {"database"},
        description="Answers per item of the random baseline, imported runs and the model slate (avg@k, "
        "five-stop single-letter protocol), with tokens, latency and cost per answer.",
    )
    def evaluation_answers(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        database: DatabaseResource = context.resources.database
        discipline, db = context.partition_key, database.db
        items = load_eval_items(
            db, spec.name, discipline, spec.release.include_manual_review, spec.release.require_review_approval
        )
        if not items:  # nothing released in the discipline (no item, or manual review): nothing stale kept
            store_runs(db, spec.name, discipline, [])
            context.log.warning(f"{spec.name}/{discipline}: no items to evaluate")
            return dg.MaterializeResult(metadata=counts_metadata(items=0, configurations=0, answers=0))
        # a run the new-model sensor started (tag MODEL_TAG) evaluates that slate entry only and keeps the others'
        # stored runs, unless the partition has no baseline yet (then everything runs)
        added = context.run.tags.get(MODEL_TAG)
        entries = [e for e in slate if e.model == added]
        if entries and BASELINE in stored_models(db, spec.name, discipline):
            runs, totals = asyncio.run(_slate_runs(spec, entries, items, context.resources.llm, context.run.run_id))
            stored = store_runs(db, spec.name, discipline, runs, only_these=True)
            context.log.info(f"{discipline}: {len(items)} items, new model {added}: {stored[added]} answers")
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(items=len(items), answers=stored[added]),
                    **llm_metadata(totals),
                    "evaluated": dg.MetadataValue.text(f"only {added} (run tag {MODEL_TAG}); other runs kept"),
                    "telemetry per configuration": dg.MetadataValue.md(
                        markdown_table(telemetry_summary(runs[0].answers), digits=4)
                    ),
                }
            )
        k = spec.evaluation.random_baseline_samples
        runs = [
            EvaluationRun(
                BASELINE,
                "baseline",
                {"k": k, "seed": spec.seed},
                random_baseline(items, seed=spec.seed, k=k, model=BASELINE),
            )
        ]
        runs += _imported_runs(spec, discipline, spec_item_disciplines(db, spec.name), {i.item_id for i in items})
        gateway_totals = {}
        if slate:
            slate_runs, totals = asyncio.run(_slate_runs(spec, slate, items, context.resources.llm, context.run.run_id))
            runs += slate_runs
            gateway_totals = llm_metadata(totals)
        stored = store_runs(db, spec.name, discipline, runs)
        context.log.info(f"{discipline}: {len(items)} items, answers per configuration {stored}")
        return dg.MaterializeResult(metadata=_metadata(spec, items, runs) | gateway_totals)

    return dg.Definitions(assets=[evaluation_answers])


async def _slate_runs(
    spec: BenchmarkSpec, entries: list[SlateEntry], items: list[EvalItem], llm: LLMGatewayResource, run_id: str
) -> tuple[list[EvaluationRun], GatewayTotals]:
    runs = []
    async with llm.open(spec.models, spec.llm, run_id) as gateway:
        slate: ModelSlate = GatewaySlate(gateway)
        for entry in entries:
            if entry.scoring == "likelihood":
                answers = await evaluate_by_likelihood(items, model=entry.model, slate=slate)
            else:
                answers = await evaluate_generative(
                    items, model=entry.model, slate=slate, k=entry.k, logit_bias=entry.logit_bias
                )
            settings = entry.model_dump(mode="json") | {"family": slate.family(entry.model)}
            runs.append(EvaluationRun(entry.model, "model", settings, answers))
    return runs, gateway.totals


def _imported_runs(
    spec: BenchmarkSpec, discipline: str, known: dict[str, str], released: set[str]
) -> list[EvaluationRun]:
    """Each import's answers on this discipline's released items; a file naming items the spec lacks is an error."""
    runs = []
    for entry in spec.evaluation.imports:
        frame = read_results_import(entry, spec.directory)
        ids = set(known)
        if entry.item_bank and spec.item_bank is not None:  # the whole bank, also disciplines not imported yet
            ids |= {item.item_id for item in load_bank(spec.item_bank, spec.directory).items}
        unknown = frame.filter(~pl.col("item_id").is_in(list(ids)))
        if unknown.height:
            raise dg.Failure(
                f"evaluation.imports {entry.path}: {unknown['item_id'].n_unique()} item ids are not "
                f"items of spec {spec.name}, e.g. {unknown['item_id'][0]!r}"
            )
        mine = sorted(released)
        frame = frame.filter(pl.col("item_id").is_in(mine)).with_columns(discipline=pl.lit(discipline))
        for (model,), answers in frame.group_by("model", maintain_order=True):
            runs.append(EvaluationRun(model, "imported", entry.model_dump(mode="json"), answers))
    return runs


def _metadata(spec: BenchmarkSpec, items: list, runs: list[EvaluationRun]) -> dict[str, dg.MetadataValue]:
    answers = pl.concat(
        [run.answers.select("model", "item_id", "discipline", "sample", "prediction", "correct") for run in runs]
    )
    board = leaderboard(ScoreMatrix.from_results(answers), B=spec.analysis.bootstrap_samples, seed=spec.seed)
    metadata = {
        **counts_metadata(items=len(items), configurations=len(runs), answers=answers.height),
        "accuracy (%, bootstrap 95% CI)": dg.MetadataValue.md(markdown_table(board.drop("n_items"))),
    }
    telemetry = [run.answers for run in runs if run.kind == "model"]
    if telemetry:
        summary = telemetry_summary(pl.concat(telemetry))
        metadata["telemetry per configuration"] = dg.MetadataValue.md(markdown_table(summary, digits=4))
    return metadata
