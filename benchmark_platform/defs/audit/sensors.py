"""Re-audit: a sensor compares each discipline's items (content and linked facts) and the tracked agents' current
versions with the latest audit run, and requests the audit of exactly the disciplines with stale items; that run
re-judges exactly the stale items and carries every other finding over. New facts linked to items, edited facts,
new items and a new agent version all show up as stale items."""

import hashlib

import dagster as dg

from benchmark_platform.audit.stage import stale_items
from benchmark_platform.defs.common import DatabaseResource, key
from benchmark_platform.spec import BenchmarkSpec

TRIGGER_TAG = "benchmark_platform/trigger"
STALE_TAG = "benchmark_platform/stale_items"


def reaudit_sensor(spec: BenchmarkSpec) -> dg.SensorDefinition:
    audit_key = key(spec, "audit_findings")

    @dg.sensor(
        name=f"{spec.name}_reaudit_stale_items",
        asset_selection=[audit_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Re-audits the items whose facts or content changed, or whose agents have a new version.",
    )
    def reaudit(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult | dg.SkipReason:
        requests = []
        for discipline in spec.discipline_keys:
            stale = stale_items(database.db, spec, discipline)
            if stale:
                digest = hashlib.sha256("\n".join(stale).encode()).hexdigest()[:16]
                requests.append(
                    dg.RunRequest(
                        run_key=f"reaudit:{discipline}:{digest}",
                        partition_key=discipline,
                        tags={TRIGGER_TAG: "stale_items", STALE_TAG: str(len(stale))},
                    )
                )
                context.log.info(f"{discipline}: {len(stale)} stale items, e.g. {stale[:5]}")
        return dg.SensorResult(run_requests=requests) if requests else dg.SkipReason("no stale items")

    return reaudit
