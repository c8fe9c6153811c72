"""Analysis: every statistic of the benchmark's evaluation (not partitioned: rankings span all disciplines),
stored in PostgreSQL and shown as Dagster metadata (tables as Markdown, plots as embedded PNGs)."""

import base64
import hashlib

import dagster as dg

from benchmark_platform.analysis import markdown_table
from benchmark_platform.analysis.persist import load_answers, load_configs, load_item_attributes, store_analysis
from benchmark_platform.analysis.run import OVERALL, analyse
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key
from benchmark_platform.evaluation import RESULT_COLUMNS, telemetry_summary
from benchmark_platform.spec import BenchmarkSpec

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


def _b64(png: bytes) -> str:
    return base64.b64encode(png).decode()


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    generator_families = {m.name: m.family for m in getattr(spec, "models", [])}  # the gateway's model configs
    settings = hashlib.sha256(spec.analysis.model_dump_json().encode()).hexdigest()[:12]

    @dg.asset(
        key=key(spec, "analysis"),
        group_name="analysis",
        code_version=f"analysis-1-{settings}",
        deps=[dg.AssetDep(key(spec, "evaluation_answers"), partition_mapping=dg.AllPartitionMapping())],
        description="Leaderboard and per-group accuracy with bootstrap 95% CIs, ranking stability, resolvable "
        "gaps and tiers, discrimination indices, self-preference, reasoning lift, tool-use deltas, "
        "closed-book slices, cost frontier, parameter scaling, and plots.",
    )
    def analysis(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        db = database.db
        answers = load_answers(db, spec.name, spec.release.include_manual_review, spec.release.require_review_approval)
        if answers.is_empty():
            raise dg.Failure(f"{spec.name}: no evaluation answers stored; materialise evaluation_answers first")
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
        context.log.info(f"analysing {answers.height} answers of {len(configs)} configurations on {items.height} items")
        report = analyse(answers.select(RESULT_COLUMNS), items, configs, spec.analysis, seed=spec.seed)
        # latencies stay in the evaluation's metadata: a rerun from the cache answers at once, and the stored
        # analyses (and so the release) must not change with it
        report.tables["telemetry"] = telemetry_summary(answers).drop("latency_p50_s", "latency_p95_s")
        counts = store_analysis(db, spec.name, report)
        board = report.accuracy.filter(grouping=OVERALL).sort("rank").drop("grouping", "group_value")
        metadata = {
            **counts_metadata(**counts),
            "leaderboard (%, bootstrap 95% CI)": dg.MetadataValue.md(markdown_table(board)),
            **{
                name: dg.MetadataValue.md(markdown_table(report.tables[name], digits=3))
                for name in SHOWN
                if name in report.tables
            },
            **{
                f"plot: {name}": dg.MetadataValue.md(f"![{name}](data:image/png;base64,{_b64(png)})")
                for name, png in sorted(report.plots.items())
            },
        }
        return dg.MaterializeResult(metadata=metadata)

    return dg.Definitions(assets=[analysis])
