"""Audit: the calibration on gold labels (unpartitioned) and every agent over a discipline's items (partitioned);
findings are versioned and append-only, and the policy's actions are stored with each run for the release."""

import asyncio
import dataclasses
from collections import Counter

import dagster as dg

from benchmark_platform.audit import audit_discipline, calibrate_spec, calibration_report, code_version, judge_panel
from benchmark_platform.defs.audit.sensors import reaudit_sensor
from benchmark_platform.defs.common import (
    SINGLE_RUN,
    DatabaseResource,
    EmbedderResource,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    stage_pool,
)
from benchmark_platform.defs.inputs.versions import GOLD_LABELS, settings_hash
from benchmark_platform.defs.llm import busiest_pool, llm_metadata
from benchmark_platform.spec import BenchmarkSpec


def _rounded(row: tuple[object, ...]) -> tuple[object, ...]:
    return tuple(round(v, 6) if isinstance(v, float) else v for v in row)


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    panel = judge_panel(spec)

    @dg.asset(
        key=key(spec, "audit_calibration"),
        group_name="audit",
        deps=[key(spec, GOLD_LABELS)],
        code_version=code_version(spec),
        description="Cohen's kappa (bootstrap 95% CI) of each audit agent against its matching human rubric on "
        "the gold labels; agents under the threshold become advisory.",
    )
    def audit_calibration(database: DatabaseResource, embedder: EmbedderResource) -> dg.MaterializeResult:
        rows = asyncio.run(calibrate_spec(database.db, spec, embedder.embedder))
        return dg.MaterializeResult(
            metadata={
                **counts_metadata(rubric_pairs=len(rows), advisory=len({r.agent for r in rows if r.advisory})),
                "report": dg.MetadataValue.md(calibration_report(rows, spec)),
            },
            # the rows as stored (kappas to 6 places): new gold labels that leave them alone leave the audit current
            data_version=dg.DataVersion(
                "calibration-" + settings_hash(sorted(_rounded(dataclasses.astuple(r)) for r in rows))
            ),
        )

    @dg.asset(
        key=key(spec, "audit_findings"),
        partitions_def=discipline_partitions(spec),
        group_name="audit",
        deps=[
            key(spec, "items"),
            *([key(spec, "bank_items")] if spec.item_bank else []),
            key(spec, "audit_calibration"),
            key(spec, GOLD_LABELS),  # the human key vetoes (answer_correct ratings) drop items
        ],
        code_version=code_version(spec),
        backfill_policy=SINGLE_RUN,
        pool=busiest_pool(panel) or stage_pool("audit_findings"),
        required_resource_keys={"database", "embedder", *(["llm"] if panel else [])},
        description="Findings of each audit agent per item (pass/warn/fail; skipped agents say why), corpus "
        "verdicts, and the policy's drop / relabel / disclose actions with their reasons.",
    )
    def audit_findings(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
        def one(discipline: str) -> dg.MaterializeResult:
            db, embedder = context.resources.database.db, context.resources.embedder.embedder

            async def run():
                if not panel:
                    return await audit_discipline(db, spec, discipline, embedder, None, context.run.run_id), {}
                async with context.resources.llm.open(panel, spec.llm, context.run.run_id) as gateway:
                    done = await audit_discipline(db, spec, discipline, embedder, gateway, context.run.run_id)
                return done, llm_metadata(gateway.totals)

            done, llm_totals = asyncio.run(run())
            out = done.outcome
            failures = Counter(f.agent for f in out.findings if f.severity == "fail")
            actions = Counter(a.action for a in done.actions)
            context.log.info(
                f"{discipline}: {done.items} items, re-judged {len(out.rejudged_items)}; "
                f"actions {dict(actions)}; skipped {sorted(a for a, _ in out.skipped)}"
            )
            return dg.MaterializeResult(
                metadata={
                    **counts_metadata(
                        items=done.items,
                        findings=len(out.findings),
                        rejudged_items=len(out.rejudged_items),
                        dropped=actions["drop"],
                        relabelled=actions["relabel"],
                        disclosed=actions["disclose"],
                        audit_run_id=done.audit_run_id,
                    ),
                    **llm_totals,
                    "new_audit_run": done.new_run,
                    "failures_by_agent": dg.MetadataValue.json(dict(sorted(failures.items()))),
                    "skipped_agents": dg.MetadataValue.json({a: r for (a, _), r in sorted(out.skipped.items())}),
                    "corpus_verdicts": dg.MetadataValue.json({a: s for (a, _), (s, _) in sorted(out.corpus.items())}),
                    "invalid_judge_outputs": dg.MetadataValue.json(dict(out.invalid)),
                    # KINA 4.1 stage 1 on this subfield: audited, failed by K1 / K2 / K3, screened in
                    **({"kina_screening": dg.MetadataValue.json(done.kina_screening())} if spec.audit.kina else {}),
                },
                # an audit run is keyed by its inputs' digest and reused when they recur: the same run, the same data
                data_version=dg.DataVersion(f"audit-run-{done.audit_run_id}"),
            )

        return per_partition(context, one)

    return dg.Definitions(assets=[audit_calibration, audit_findings], sensors=[reaudit_sensor(spec)])
