"""Analysis: every statistic of the benchmark's evaluation (not partitioned: rankings span all disciplines),
stored in PostgreSQL and shown as Dagster metadata (tables as Markdown, plots as embedded PNGs)."""

import base64
import hashlib

import dagster as dg

from benchmark_platform.analysis import NoAnswersError, analyse_spec, report_tables
from benchmark_platform.defs.common import DatabaseResource, counts_metadata, key
from benchmark_platform.spec import BenchmarkSpec


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
        metadata = {
            **counts_metadata(**counts),
            **{name: dg.MetadataValue.md(table) for name, table in report_tables(report).items()},
            **{
                f"plot: {name}": dg.MetadataValue.md(f"![{name}](data:image/png;base64,{_b64(png)})")
                for name, png in sorted(report.plots.items())
            },
        }
        return dg.MaterializeResult(metadata=metadata)

    return dg.Definitions(assets=[analysis])
