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

from benchmark_platform.automation.persist import record_leaf
from benchmark_platform.defs.automation.requests import partition_run_requests
from benchmark_platform.defs.common import MODEL_TAG, DatabaseResource, key
from benchmark_platform.spec import BenchmarkSpec, load_spec


def spec_file(spec: BenchmarkSpec) -> Path:
    return spec.directory / "spec.yaml"


def taxonomy_partitions(spec: BenchmarkSpec) -> dg.DynamicPartitionsDefinition:
    return dg.DynamicPartitionsDefinition(name=f"{spec.name}_taxonomy")


def taxonomy_automation(spec: BenchmarkSpec) -> tuple[dg.JobDefinition, dg.SensorDefinition]:
    partitions = taxonomy_partitions(spec)

    @dg.op(name=f"{spec.name}_register_leaf")
    def register_leaf(context: dg.OpExecutionContext, database: DatabaseResource) -> None:
        leaf = context.partition_key
        paths = dict(load_spec(spec_file(spec)).leaves)
        if leaf not in paths:
            raise dg.Failure(f"{spec_file(spec)}: taxonomy has no leaf {leaf!r} any more")
        record_leaf(database.db, spec.name, leaf, paths[leaf])
        context.log.info(f"{spec.name}: leaf {leaf} registered at {' > '.join(paths[leaf])}")

    @dg.job(
        name=f"{spec.name}_register_taxonomy_leaf",
        partitions_def=partitions,
        description="Record one taxonomy leaf (partition) in the disciplines table.",
    )
    def register_job() -> None:
        register_leaf()

    @dg.sensor(
        name=f"{spec.name}_taxonomy_sensor",
        job=register_job,
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Re-reads the spec's taxonomy; new leaves become partitions of the taxonomy set.",
    )
    def taxonomy_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
        leaves = [leaf for leaf, _ in load_spec(spec_file(spec)).leaves]
        digest = hashlib.sha256(json.dumps(leaves).encode()).hexdigest()
        if context.cursor == digest:
            return dg.SkipReason("taxonomy unchanged")
        known = set(context.instance.get_dynamic_partitions(partitions.name))
        added = [leaf for leaf in leaves if leaf not in known]
        removed = sorted(known - set(leaves))
        changes = ([partitions.build_add_request(added)] if added else []) + (
            [partitions.build_delete_request(removed)] if removed else []
        )
        context.log.info(f"{spec.name} taxonomy: {len(added)} new leaves, {len(removed)} removed")
        return dg.SensorResult(
            cursor=digest,
            dynamic_partitions_requests=changes,
            run_requests=[dg.RunRequest(partition_key=leaf, run_key=f"leaf:{leaf}:{digest[:16]}") for leaf in added],
        )

    return register_job, taxonomy_sensor


def new_model_evaluation(spec: BenchmarkSpec) -> dg.SensorDefinition:
    evaluation_key = key(spec, "evaluation_answers")

    @dg.sensor(
        name=f"{spec.name}_new_model_sensor",
        asset_selection=[evaluation_key],
        minimum_interval_seconds=spec.automation.sensor_interval_s,
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="A model added to the spec's slate is evaluated on every discipline, once.",
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
