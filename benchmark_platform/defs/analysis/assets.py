"""Analysis: every statistic of the benchmark's evaluation (not partitioned: rankings span all disciplines),
stored in PostgreSQL and shown as Dagster metadata (tables as Markdown, plots as embedded PNGs)."""

import base64
import hashlib

import dagster as dg

from benchmark_platform.analysis import OVERALL, NoAnswersError, analyse_spec, markdown_table
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key
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
        try:
            done = analyse_spec(database.db, spec, context.log.info)
        except NoAnswersError as exc:  # a valid run: the release says there is no leaderboard
            context.log.warning(str(exc))
            return dg.MaterializeResult(metadata={"no_answers": str(exc), **counts_metadata(accuracy_rows=0)})
        report, counts = done.report, done.stored
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
