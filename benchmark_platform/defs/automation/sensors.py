"""Event-driven automation: sensors for events outside the asset graph's own edges.

The other triggers live with their stages: new facts re-audit their items (defs/audit/sensors.py compares items and
their facts with the latest audit run), changed anchor files re-import the discipline's anchors (defs/anchors), and
`support_centrality` re-scores a discipline declaratively (AutomationCondition.eager) once its anchors or facts update.

- a taxonomy change adds partitions: the spec's taxonomy file is re-read each tick; new leaves join the dynamic
  partitions `<spec>_taxonomy` and are registered in the `disciplines` table (removed leaves leave the set);
- a new model in the slate evaluates only that model: the slate the code location loaded is compared with the one
  recorded in the cursor (which survives reloads), and each added model gets its own requests on `evaluation_answers`
  (run key per model and partition range, tagged with the model); the gateway's cache answers the other models.

Why the stage assets keep the static discipline partitions of defs/common.py: the spec the code location loaded
decides the quotas, templates and thresholds of every leaf, and a release must rebuild byte for byte from it; a
partition key that exists before the code that serves it would run with no spec behind it. The dynamic set is the
instance's live view of the taxonomy file: it shows a new subfield at once, records it in `disciplines`, and the
static partitions pick it up when the code location reloads (`dagster dev` reload, or a deploy).
"""

import hashlib
import json
from pathlib import Path

import dagster as dg

from benchmark_platform.automation import record_leaves
from benchmark_platform.defs.automation.requests import partition_run_requests
from benchmark_platform.defs.common import MODEL_TAG, DatabaseResource, key, sensor_status, unbuilt_note
from benchmark_platform.spec import BenchmarkSpec, load_spec


def spec_file(spec: BenchmarkSpec) -> Path:
    return spec.directory / "spec.yaml"


def taxonomy_partitions(spec: BenchmarkSpec) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"{spec.name}_taxonomy")


def taxonomy_sensor(spec: BenchmarkSpec) -> dg.SensorDefinition:
    partitions = taxonomy_partitions(spec)

    @dg.sensor(
        name=f"{spec.name}_taxonomy_sensor",
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        # on: it launches no run (the leaves are recorded here, in one statement), so it cannot flood the queue
        default_status=sensor_status(spec),
        description=unbuilt_note(spec)
        + "Re-reads the spec's taxonomy; new leaves become partitions of the taxonomy set and are "
        "recorded in the disciplines table (no run: one upsert of every leaf when the taxonomy changed).",
    )
    def taxonomy(context: dg.SensorEvaluationContext, database: DatabaseResource) -> dg.SensorResult | dg.SkipReason:
        leaves = load_spec(spec_file(spec)).leaves
        digest = hashlib.sha256(json.dumps([leaf for leaf, _ in leaves]).encode()).hexdigest()
        if context.cursor == digest:
            return dg.SkipReason("taxonomy unchanged")
        known = set(context.instance.get_dynamic_partitions(partitions.name))
        added = [leaf for leaf, _ in leaves if leaf not in known]
        removed = sorted(known - {leaf for leaf, _ in leaves})
        changes = ([partitions.build_add_request(added)] if added else []) + (
            [partitions.build_delete_request(removed)] if removed else []
        )
        # every leaf, not only the added ones: a moved leaf's path is updated too (an idempotent upsert)
        record_leaves(database.db, spec.name, leaves)
        context.log.info(f"{spec.name} taxonomy: {len(added)} new leaves, {len(removed)} removed; leaves recorded")
        return dg.SensorResult(cursor=digest, dynamic_partitions_requests=changes)

    return taxonomy


def new_model_evaluation(spec: BenchmarkSpec) -> dg.SensorDefinition:
    evaluation_key = key(spec, "evaluation_answers")

    @dg.sensor(
        name=f"{spec.name}_new_model_sensor",
        asset_selection=[evaluation_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=sensor_status(spec),
        description=unbuilt_note(spec) + "A model added to the spec's slate is evaluated on every discipline, once.",
    )
    def new_models(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        slate = [entry.model for entry in spec.evaluation.slate]
        if context.cursor is None:  # first tick: the slate as deployed is the regular pipeline's business
            return dg.SensorResult(cursor=json.dumps(slate), skip_reason=dg.SkipReason(f"slate of {len(slate)} models"))
        known = json.loads(context.cursor)
        added = [model for model in slate if model not in known]
        if not added:
            return dg.SensorResult(cursor=json.dumps(slate), skip_reason=dg.SkipReason("no new model"))
        requests = [
            request
            for model in added
            for request in partition_run_requests(
                context, evaluation_key, spec.discipline_keys, f"model:{model}", tags={MODEL_TAG: model}
            )
        ]
        return dg.SensorResult(cursor=json.dumps(slate), run_requests=requests)

    return new_models


def automation_condition_sensor(spec: BenchmarkSpec) -> dg.AutomationConditionSensorDefinition:
    """The assets' automation conditions (eager extraction, re-scoring, re-selection, generation within the LLM
    cap), evaluated on purpose: Dagster's default sensor for them is off, so the eager edges would never fire.
    Each tick submits what became due as one backfill: one run per contiguous range of disciplines under the stages'
    single-run policy (per source for source-partitioned assets); `eager` requests a partition once per upstream
    update, so a failed run is not retried until its inputs change again."""
    return dg.AutomationConditionSensorDefinition(
        f"{spec.name}_automation_condition_sensor",
        target=dg.AssetSelection.all(),
        default_status=sensor_status(spec),
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        description=unbuilt_note(spec)
        + "Evaluates the assets' automation conditions; on by default (see README, Automation).",
    )
