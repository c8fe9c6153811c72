"""Re-audit: a sensor asks the audit stage, per discipline, whether the latest audit run still matches the current
inputs (items with their linked and related facts, agent versions, settings, answers) and requests the audit of
exactly the disciplines where it does not. That run re-judges exactly the stale items and carries every other
finding over; answers landing alone re-run the answer-dependent pool agents (K3 flagship difficulty, D1
self-preference) while every item-level finding carries over. Findings stay append-only: a new audit run (version).

Why a sensor and not an automation condition on `items`: whether an audit is due depends on rows (new facts on the
same entity and attribute, answers), not only on upstream materialisations; and the run key is the inputs' digest,
so a failing audit is not retried in a loop (the same inputs are requested once; new inputs, a new request)."""

import dagster as dg

from benchmark_platform.audit import pending_audit
from benchmark_platform.defs.automation.requests import run_partitions
from benchmark_platform.defs.common import TRIGGER_TAG, DatabaseResource, key, sensor_status, unbuilt_note
from benchmark_platform.generation import generation_is_automatic
from benchmark_platform.spec import BenchmarkSpec

__all__ = ["ANSWERED_TAG", "STALE_TAG", "TRIGGER_TAG", "busy_disciplines", "reaudit_sensor"]

STALE_TAG = "benchmark_platform/stale_items"
ANSWERED_TAG = "benchmark_platform/answered_items"


ACTIVE = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
]


def _latest(instance: dg.DagsterInstance, asset: dg.AssetKey, partition: str) -> float:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=asset, asset_partitions=[partition]), limit=1
    ).records
    return records[0].timestamp if records else 0.0


def audit_inputs(spec: BenchmarkSpec) -> set[dg.AssetKey]:
    """The discipline stages an audit reads, and the audit itself: while one of them runs for a discipline, the
    discipline's inputs are still changing (or being audited)."""
    names = ["anchors", "facts", "support_centrality", "selected_facts", "items", "bank_items", "audit_findings"]
    return {key(spec, name) for name in names}


def busy_disciplines(instance: dg.DagsterInstance, spec: BenchmarkSpec) -> set[str]:
    """The disciplines an active (queued or running) run materialises one of the audit's inputs of: a run targets
    this spec's asset keys (another spec's run of a same-named partition does not count) and names the discipline as
    its partition or within its partition range (a single-run backfill's range: in the spec's partition order)."""
    inputs, order = audit_inputs(spec), spec.discipline_keys
    busy: set[str] = set()
    for run in instance.get_runs(dg.RunsFilter(statuses=ACTIVE)):
        if run.asset_selection is None:  # a whole job: counted if it may be this spec's (its jobs, or the asset job)
            if not run.job_name.startswith(f"{spec.name}_") and run.job_name != "__ASSET_JOB":
                continue
        elif not run.asset_selection & inputs:
            continue
        busy.update(run_partitions(run.tags, order))
    return busy


def upstream_settled(instance: dg.DagsterInstance, spec: BenchmarkSpec, discipline: str, busy: set[str]) -> bool:
    """No run of the audit's inputs for the discipline is queued or running (`busy`: busy_disciplines), and, where
    generation is automatic, its items were regenerated after its facts last changed. Without this, new facts would
    be audited twice: once as soon as the facts land (their items' links changed), again when the eager chain has
    regenerated the items."""
    if discipline in busy:
        return False
    if not spec.sources or not generation_is_automatic(spec):
        return True  # items that wait for a person: audit what there is
    return _latest(instance, key(spec, "items"), discipline) >= _latest(instance, key(spec, "facts"), discipline)


def reaudit_sensor(spec: BenchmarkSpec) -> dg.SensorDefinition:
    audit_key = key(spec, "audit_findings")

    @dg.sensor(
        name=f"{spec.name}_reaudit_stale_items",
        asset_selection=[audit_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        # on: one run per discipline and set of inputs at most; a fresh daemon over an audited database requests none
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Re-audits the items whose facts (linked, or new ones on the same entity and attribute) or "
        "content changed, or whose agents have a new version; new answers re-run K3 and D1.",
    )
    def reaudit(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult | dg.SkipReason:
        requests = []
        busy = busy_disciplines(context.instance, spec)  # one query of the active runs per tick
        for discipline in spec.discipline_keys:
            if not upstream_settled(context.instance, spec, discipline, busy):
                continue  # the automation is still regenerating this discipline: audit once, when it is done
            pending = pending_audit(database.db, spec, discipline)
            # a digest changed by corpus-level inputs only (no stale item, no item whose flagship answers changed)
            # waits for the next audit: it re-judges no item, and a fresh daemon over a built database stays quiet
            if pending is None or not (pending.stale_items or pending.answered_items):
                continue
            requests.append(
                dg.RunRequest(
                    run_key=f"reaudit:{discipline}:{pending.digest[:16]}",
                    partition_key=discipline,
                    tags={
                        TRIGGER_TAG: pending.trigger,
                        STALE_TAG: str(len(pending.stale_items)),
                        ANSWERED_TAG: str(len(pending.answered_items)),
                    },
                )
            )
            context.log.info(
                f"{discipline}: {len(pending.stale_items)} stale items, e.g. {pending.stale_items[:5]}; "
                f"{len(pending.answered_items)} items with new answers, e.g. {pending.answered_items[:5]}"
            )
        return dg.SensorResult(run_requests=requests) if requests else dg.SkipReason("nothing to re-audit")

    return reaudit
