"""The evaluation stage for one partition: the random baseline, the spec's imported result files and its model slate
(through the LLM gateway), stored per configuration; or, for a run the new-model sensor started, that model only."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from benchmark_platform.evaluation.config import SlateEntry
from benchmark_platform.evaluation.gateway import GatewaySlate
from benchmark_platform.evaluation.importers import read_results_import
from benchmark_platform.evaluation.items import EvalItem
from benchmark_platform.evaluation.persist import (
    EvaluationRun,
    load_eval_items,
    spec_item_disciplines,
    store_runs,
    stored_models,
)
from benchmark_platform.evaluation.runners import (
    ModelSlate,
    evaluate_by_likelihood,
    evaluate_generative,
    random_baseline,
)
from benchmark_platform.itembank import load_bank
from benchmark_platform.llm import GatewayTotals, OpenGateway
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database

BASELINE = "random-baseline"


class ResultsImportError(ValueError):
    """An imported result file names items the spec does not have."""


@dataclass(frozen=True)
class DisciplineEvaluation:
    items: list[EvalItem]
    runs: list[EvaluationRun]
    stored: dict[str, int]  # answers stored per configuration
    gateway_totals: GatewayTotals | None = None
    only_model: str | None = None  # set when the run evaluated this newly added slate model alone


def evaluate_discipline(
    db: Database, spec: BenchmarkSpec, discipline: str, open_gateway: OpenGateway, added_model: str | None
) -> DisciplineEvaluation:
    """Replace the discipline's evaluation runs. `added_model` (a new-model run's tag) evaluates that slate entry only
    and keeps the other stored runs, unless the partition has no baseline yet (then everything runs)."""
    slate = spec.evaluation.slate
    items = load_eval_items(
        db, spec.name, discipline, spec.release.include_manual_review, spec.release.require_review_approval
    )
    if not items:  # nothing released in the discipline (no item, or manual review): nothing stale kept
        store_runs(db, spec.name, discipline, [])
        return DisciplineEvaluation(items, [], {})
    entries = [e for e in slate if e.model == added_model]
    if entries and BASELINE in stored_models(db, spec.name, discipline):
        runs, totals = asyncio.run(slate_runs(spec, entries, items, open_gateway))
        stored = store_runs(db, spec.name, discipline, runs, only_these=True)
        return DisciplineEvaluation(items, runs, stored, totals, only_model=added_model)
    k = spec.evaluation.random_baseline_samples
    runs = [
        EvaluationRun(
            BASELINE,
            "baseline",
            {"k": k, "seed": spec.seed},
            random_baseline(items, seed=spec.seed, k=k, model=BASELINE),
        )
    ]
    runs += imported_runs(spec, discipline, spec_item_disciplines(db, spec.name), {i.item_id for i in items})
    gateway_totals = None
    if slate:
        model_runs, gateway_totals = asyncio.run(slate_runs(spec, slate, items, open_gateway))
        runs += model_runs
    stored = store_runs(db, spec.name, discipline, runs)
    return DisciplineEvaluation(items, runs, stored, gateway_totals)


async def slate_runs(
    spec: BenchmarkSpec, entries: Sequence[SlateEntry], items: list[EvalItem], open_gateway: OpenGateway
) -> tuple[list[EvaluationRun], GatewayTotals]:
    """The slate entries' answers, in one gateway session."""
    runs = []
    async with open_gateway(spec.models) as gateway:
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


def imported_runs(
    spec: BenchmarkSpec, discipline: str, known: Mapping[str, str], released: set[str]
) -> list[EvaluationRun]:
    """Each import's answers on this discipline's released items; a file naming items the spec lacks is an error."""
    runs = []
    for entry in spec.evaluation.imports:
        frame = read_results_import(entry, spec.directory)
        ids = set(known)
        if entry.item_bank and spec.item_bank is not None:  # the whole bank, also disciplines not imported yet
            ids |= load_bank(spec.item_bank, spec.directory, spec.name).item_ids()
        unknown = frame.filter(~pl.col("item_id").is_in(list(ids)))
        if unknown.height:
            raise ResultsImportError(
                f"evaluation.imports {entry.path}: {unknown['item_id'].n_unique()} item ids are not "
                f"items of spec {spec.name}, e.g. {unknown['item_id'][0]!r}"
            )
        mine = sorted(released)
        frame = frame.filter(pl.col("item_id").is_in(mine)).with_columns(discipline=pl.lit(discipline))
        for (model,), answers in frame.group_by("model", maintain_order=True):
            runs.append(EvaluationRun(str(model), "imported", entry.model_dump(mode="json"), answers))
    return runs
