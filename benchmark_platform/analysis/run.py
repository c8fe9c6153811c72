"""The analysis stage (unpartitioned): every statistic of the spec's stored evaluation answers (statistics.py's `analyse`),
stored in PostgreSQL in one transaction; and the Markdown tables the analysis and evaluation assets show."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import polars as pl

from benchmark_platform.analysis.accuracy import leaderboard
from benchmark_platform.analysis.irt import IrtFit, fit_digest, fit_irt, pool_accuracy_table
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.persist import (
    load_answers,
    load_configs,
    load_item_attributes,
    load_pool_fit,
    store_analysis,
    store_pool_fit,
)
from benchmark_platform.analysis.report import markdown_table
from benchmark_platform.analysis.statistics import ACCURACY_SCHEMA, OVERALL, AnalysisReport, analyse
from benchmark_platform.evaluation import (
    RESULT_COLUMNS,
    EvaluationRun,
    read_spec_imports,
    spec_item_disciplines,
    telemetry_summary,
)
from benchmark_platform.runtime import single_threaded_blas
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database

# the report's tables the analysis asset shows beside the leaderboard
SHOWN = (
    "ranking_stability",
    "tiers",
    "discrimination",
    "self_preference",
    "reasoning_lift",
    "tool_use",
    "closed_book",
    "cost_frontier",
    "scaling",
    "telemetry",
)


class NoAnswersError(LookupError):
    """Nothing to analyse: no stored evaluation answer on a released item (the stored analyses are cleared)."""


@dataclass(frozen=True)
class SpecAnalysis:
    report: AnalysisReport
    stored: dict[str, int]  # rows per analysis table


def analyse_spec(db: Database, spec: BenchmarkSpec, log: Callable[[str], None]) -> SpecAnalysis:
    """Replace the spec's analyses with those of its stored answers."""
    answers = load_answers(db, spec.name, spec.release.include_manual_review, spec.release.require_review_approval)
    if answers.is_empty():
        # a valid state (nothing released, or every discipline in manual review): an earlier run's analyses must not
        # be released beside it, so they are cleared before the caller is told
        store_analysis(db, spec.name, AnalysisReport(pl.DataFrame(schema=ACCURACY_SCHEMA)))
        raise NoAnswersError(
            f"{spec.name}: no evaluation answers on released items (no item released, or every discipline went to "
            "manual review): no leaderboard"
        )
    generator_families = {m.name: m.family for m in spec.models}  # the gateway's model configs
    items = load_item_attributes(
        db,
        spec.name,
        spec.leaves,
        generator_families,
        spec.analysis.closed_book_verdict,
        spec.release.include_manual_review,
        spec.release.require_review_approval,
    )
    configs = load_configs(db, spec.name, answers)
    log(f"analysing {answers.height} answers of {len(configs)} configurations on {items.height} items")
    report = analyse(answers.select(RESULT_COLUMNS), items, configs, spec.analysis, seed=spec.seed)
    # latencies stay in the evaluation's metadata: a rerun from the cache answers at once, and the stored
    # analyses (and so the release) must not change with it
    report.tables["telemetry"] = telemetry_summary(answers).drop("latency_p50_s", "latency_p95_s")
    pool = pool_accuracy(db, spec, answers, items.height, log)
    if pool is not None:
        log(f"full-pool accuracy estimated from the release for {pool.height} configurations")
        report.tables["pool_accuracy"] = pool
        report.accuracy = with_pool_estimate(report.accuracy, pool)
    return SpecAnalysis(report, store_analysis(db, spec.name, report))


def with_pool_estimate(accuracy: pl.DataFrame, pool: pl.DataFrame) -> pl.DataFrame:
    """The leaderboard rows (grouping overall) with each configuration's bank-level estimate beside them."""
    estimate = pool.select(
        "model",
        grouping=pl.lit(OVERALL),
        pool_accuracy_new="estimated_accuracy",
        pool_ci_low_new="ci_low",
        pool_ci_high_new="ci_high",
    )
    joined = accuracy.join(estimate, on=["grouping", "model"], how="left", maintain_order="left")
    return joined.with_columns(
        pl.coalesce(f"{c}_new", c).alias(c) for c in ("pool_accuracy", "pool_ci_low", "pool_ci_high")
    ).drop("pool_accuracy_new", "pool_ci_low_new", "pool_ci_high_new")


def pool_accuracy(
    db: Database, spec: BenchmarkSpec, answers: pl.DataFrame, released: int, log: Callable[[str], None]
) -> pl.DataFrame | None:
    """Issue 19: when the spec's imports answered a pool larger than the release (an item bank), every
    configuration's full-pool accuracy estimated from its released answers, with a CI (analysis/irt.py; the IRT
    model fitted on the imported models' answers over the pool, stratified by discipline). None otherwise."""
    results = read_spec_imports(spec.evaluation.imports, spec.directory)
    if results is None:
        return None
    # One BLAS thread: the fit's sums come out the same every run (the release is byte-reproducible), and it is faster
    with single_threaded_blas():
        table = pool_accuracy_table(results, answers, spec_item_disciplines(db, spec.name), fit=stored_fit(db, log))
    return table if table.height and int(table["pool_items"][0]) > released else None


def stored_fit(db: Database, log: Callable[[str], None]) -> Callable[[np.ndarray], IrtFit]:
    """fit_irt through the store: a pool whose answers did not change since the last build (a change of anchors,
    selection or audit) reads its fit, bit for bit, instead of fitting again (sql/0430); the log says which."""

    def fit(correct: np.ndarray) -> IrtFit:
        digest = fit_digest(correct)
        stored = load_pool_fit(db, digest)
        if stored is not None:
            log(
                f"pool IRT fit {digest[:12]}: read from the store ({correct.shape[0]} models x {correct.shape[1]} items)"
            )
            return stored
        fitted = fit_irt(correct)
        store_pool_fit(db, digest, fitted)
        log(f"pool IRT fit {digest[:12]}: fitted and stored ({correct.shape[0]} models x {correct.shape[1]} items)")
        return fitted

    return fit


def report_tables(report: AnalysisReport) -> dict[str, str]:
    """The analysis asset's tables as Markdown: the leaderboard, then the report's SHOWN tables."""
    board = report.accuracy.filter(grouping=OVERALL).sort("rank").drop("grouping", "group_value")
    return {
        "leaderboard (%, bootstrap 95% CI)": markdown_table(board),
        **{name: markdown_table(report.tables[name], digits=3) for name in SHOWN if name in report.tables},
    }


def evaluation_tables(spec: BenchmarkSpec, runs: list[EvaluationRun]) -> tuple[int, dict[str, str]]:
    """A discipline's evaluation runs: their answers and, as Markdown, each configuration's accuracy with its
    bootstrap CI and the model runs' telemetry (the evaluation asset's metadata)."""
    answers = pl.concat(
        [run.answers.select("model", "item_id", "discipline", "sample", "prediction", "correct") for run in runs]
    )
    board = leaderboard(
        ScoreMatrix.from_results(answers),
        B=spec.analysis.bootstrap_samples,
        seed=spec.seed,
        min_answered_share=spec.analysis.min_answered_share,
    )
    tables = {"accuracy (%, bootstrap 95% CI)": markdown_table(board.drop("n_items"))}
    telemetry = [run.answers for run in runs if run.kind == "model"]
    if telemetry:
        tables["telemetry per configuration"] = telemetry_table(pl.concat(telemetry))
    return answers.height, tables


def telemetry_table(answers: pl.DataFrame) -> str:
    """Tokens, latency and cost per configuration of model answers, as Markdown."""
    return markdown_table(telemetry_summary(answers), digits=4)
