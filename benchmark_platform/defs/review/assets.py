"""Review assets, partitioned by discipline: allocation -> payout ledger (with audits) -> calibration and Table 5.

Ratings arrive through the review web app (`benchmark-platform review serve`); a sensor allocates new items approved
for review as they come and as reviewers free WIP slots; these assets allocate, settle what reviewers have rated, and
recalibrate the bonus from the logs. All SQL and policy live in benchmark_platform.review.
"""

import hashlib

import dagster as dg
import polars as pl

from benchmark_platform.defs.common import (
    SINGLE_RUN,
    DatabaseResource,
    counts_metadata,
    discipline_partitions,
    key,
    per_partition,
    sensor_status,
    stage_pool,
    unbuilt_note,
)
from benchmark_platform.defs.inputs.versions import settings_hash
from benchmark_platform.review import (
    EntryKind,
    assign_partition,
    calibrate,
    logs_from_pairs,
    pilot_from_logs,
    plan_assignments,
    rating_pairs,
    settle_partition,
    store_calibration,
    store_metrics,
    table5,
    validated_reviews,
)
from benchmark_platform.spec import BenchmarkSpec

CODE_VERSION = "review-2"
TRIGGER_TAG = "benchmark_platform/trigger"


def build_defs(spec: BenchmarkSpec) -> dg.Definitions:
    partitions = discipline_partitions(spec)
    common = {
        "partitions_def": partitions,
        "group_name": "review",
        "code_version": f"{CODE_VERSION}-{settings_hash(spec.review, spec.seed)}",
        "backfill_policy": SINGLE_RUN,
        "pool": stage_pool("review"),  # one pool for the four: each is a short transaction on the review tables
    }

    @dg.asset(key=key(spec, "review_assignments"), deps=[key(spec, "items")], **common)
    def review_assignments(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        """Two independent, conflict-free reviewers for every new item, under the WIP cap (double-blind handles)."""

        def one(d: str) -> dg.MaterializeResult:
            result = assign_partition(
                database.db, spec.name, d, spec.review.policy_for(d), spec.seed, spec.review.phase
            )
            for item_id, why in sorted(result.unassigned.items())[:20]:
                context.log.warning(f"item {item_id} not assigned: {why}")
            return dg.MaterializeResult(
                metadata=counts_metadata(
                    assigned_items=len(result.assignments) // 2, waiting_items=len(result.unassigned)
                )
            )

        return per_partition(context, one)

    @dg.asset(key=key(spec, "review_payout_ledger"), deps=[review_assignments], **common)
    def review_payout_ledger(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        """Settle every fully rated round: base wage, bonus-on-bar, audit sample top-up, joint penalties, whitelist."""

        def one(d: str) -> dg.MaterializeResult:
            outcomes = settle_partition(database.db, spec.name, d, spec.review.policy_for(d), spec.seed)
            totals = {kind.value: 0.0 for kind in EntryKind}
            for entry in (e for o in outcomes for e in o.ledger):
                totals[entry.kind.value] = round(totals[entry.kind.value] + entry.amount, 2)
            return dg.MaterializeResult(
                metadata=counts_metadata(
                    items_settled=sum(len(o.decisions) for o in outcomes),
                    audited=sum(len(o.audited) for o in outcomes),
                    **totals,
                )
            )

        return per_partition(context, one)

    @dg.asset(key=key(spec, "review_bonus_calibration"), deps=[review_payout_ledger], **common)
    def review_bonus_calibration(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        """Corollary 1 from the validated reviews of the partition (effort proxied by time on page).

        The recommended B (bonus_target) is stored, not applied: the team sets it in the spec's
        review.bonus_by_discipline, so what is paid stays in the one typed configuration.
        """

        def one(d: str) -> dg.MaterializeResult:
            rows = validated_reviews(database.db, spec.name, d)
            if not rows:
                context.log.info("no validated reviews yet: nothing to calibrate")
                return dg.MaterializeResult(metadata=counts_metadata(validated_reviews=0))
            pilot = pilot_from_logs(pl.DataFrame(rows), spec.review.hourly_rate)
            try:
                (cal,) = calibrate(pilot, spec.review.policy_for(d).tau, spec.review.target_effort_rate)
            except ValueError as exc:
                context.log.warning(f"cannot calibrate {d} yet: {exc}")
                return dg.MaterializeResult(metadata=counts_metadata(validated_reviews=len(rows)))
            store_calibration(database.db, spec.name, d, cal)
            return dg.MaterializeResult(
                metadata=counts_metadata(
                    validated_reviews=len(rows),
                    dp_min=cal.dp_min,
                    bonus_target=cal.bonus_target,
                    bonus_dominant=cal.bonus_dominant,
                    expected_bonus_per_task=cal.expected_bonus_at_target,
                )
            )

        return per_partition(context, one)

    @dg.asset(key=key(spec, "review_metrics"), deps=[review_payout_ledger], **common)
    def review_metrics(context: dg.AssetExecutionContext, database: DatabaseResource) -> dg.MaterializeResult:
        """KINA Table 5 per phase (caught-flaw, reviewer-asymmetric catch, audit-flagged rates) with Wilson CIs."""

        def one(d: str) -> dg.MaterializeResult:
            pairs = rating_pairs(database.db, spec.name, d)
            table = table5(logs_from_pairs(pairs))
            store_metrics(database.db, spec.name, d, table)
            return dg.MaterializeResult(
                metadata={"pairs": dg.MetadataValue.int(len(pairs)), "table5": dg.MetadataValue.md(_markdown(table))}
            )

        return per_partition(context, one)

    @dg.sensor(
        name=f"{spec.name}_review_assignment_sensor",
        asset_selection=[review_assignments],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Assigns reviewers to new items approved for review, and to waiting items when WIP slots free up.",
    )
    def review_assignment_sensor(
        context: dg.SensorEvaluationContext, database: DatabaseResource
    ) -> dg.SensorResult | dg.SkipReason:
        requests = []
        for d in spec.discipline_keys:
            plan = plan_assignments(database.db, spec.name, d, spec.review.policy_for(d), spec.seed)
            if plan.assignments:  # the run key names exactly these pairs: one run per new allocation, never a repeat
                pairs = "\n".join(sorted(f"{a.item_id}:{a.reviewer_id}" for a in plan.assignments))
                digest = hashlib.sha256(pairs.encode()).hexdigest()[:16]
                requests.append(
                    dg.RunRequest(run_key=f"review_assign:{d}:{digest}", partition_key=d, tags={TRIGGER_TAG: "review"})
                )
                context.log.info(f"{d}: {len(plan.assignments) // 2} items can be assigned")
        return dg.SensorResult(run_requests=requests) if requests else dg.SkipReason("no item can be assigned now")

    return dg.Definitions(
        assets=[review_assignments, review_payout_ledger, review_bonus_calibration, review_metrics],
        sensors=[review_assignment_sensor],
    )


def _markdown(table: pl.DataFrame) -> str:
    lines = ["| phase | metric | rate | 95% CI | n |", "|---|---|---|---|---|"]
    for r in table.iter_rows(named=True):
        rate = "n/a" if r["rate"] is None else f"{r['rate']:.3f}"
        ci = "" if r["rate"] is None else f"[{r['ci_low']:.3f}, {r['ci_high']:.3f}]"
        lines.append(f"| {r['phase']} | {r['metric']} | {rate} | {ci} | {r['n']} |")
    return "\n".join(lines)
