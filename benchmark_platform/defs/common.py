"""What every stage's Dagster wiring shares: the database resource, partitions, asset keys and run metadata."""

from __future__ import annotations

import time
from collections.abc import Callable
from functools import cache
from typing import Any, Literal

import dagster as dg

from benchmark_platform.embed import Embedder
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import DATABASE_URL_ENV, Database


class DatabaseResource(dg.ConfigurableResource):
    """The system of record. Its URL comes from the environment (a connection string may hold a secret)."""

    url: str

    @property
    def db(self) -> Database:
        return Database(self.url)


class EmbedderResource(dg.ConfigurableResource):
    """The sentence embedder: the shipped static MiniLM distillation by default, or the full model (extra `embed-full`)."""

    model: Literal["static", "full"] = "static"

    @property
    def embedder(self) -> Embedder:
        return _load_embedder(self.model)


@cache
def _load_embedder(model: str) -> Embedder:
    from benchmark_platform.embed import SentenceTransformerEmbedder, StaticEmbedder

    return StaticEmbedder() if model == "static" else SentenceTransformerEmbedder()


def default_resources() -> dict[str, Any]:
    return {"database": DatabaseResource(url=dg.EnvVar(DATABASE_URL_ENV)), "embedder": EmbedderResource()}


@cache
def _discipline_partitions(keys: tuple[str, ...]) -> dg.StaticPartitionsDefinition:
    return dg.StaticPartitionsDefinition(list(keys))


def discipline_partitions(spec: BenchmarkSpec) -> dg.StaticPartitionsDefinition:
    """Partitions = the leaves of the spec's taxonomy (one object per spec, so Dagster sees one definition)."""
    return _discipline_partitions(tuple(spec.discipline_keys))


@cache
def _source_partitions(ids: tuple[str, ...]) -> dg.StaticPartitionsDefinition:
    return dg.StaticPartitionsDefinition(list(ids))


def source_partitions(spec: BenchmarkSpec) -> dg.StaticPartitionsDefinition:
    return _source_partitions(tuple(source.id for source in spec.sources))


TRIGGER_TAG = "benchmark_platform/trigger"  # which sensor rule requested a run (run tags say why it ran)
MODEL_TAG = "benchmark_platform/model"  # a run evaluating one newly added slate model (set by the new-model sensor)


def key(spec: BenchmarkSpec, name: str) -> dg.AssetKey:
    """Asset keys are prefixed by the spec, so several specs' graphs can live in one Dagster instance."""
    return dg.AssetKey([spec.name, name])


def counts_metadata(**counts: int | float) -> dict[str, dg.MetadataValue]:
    return {
        name: (dg.MetadataValue.int(v) if isinstance(v, int) else dg.MetadataValue.float(float(v)))
        for name, v in counts.items()
    }


def stage_pool(name: str) -> str:
    """The Dagster concurrency pool of a stage asset that calls no LLM provider (`stage_<asset>`, shared by every
    spec in the instance; limits in defs/automation/concurrency.py)."""
    return f"stage_{name}"


# every discipline-partitioned stage asset: a range of partitions (a backfill, a sensor's range request) is one run
# whose step loops over the keys with `per_partition` (one materialisation event per key, each with its own metadata)
SINGLE_RUN = dg.BackfillPolicy.single_run()


def per_partition(
    context: dg.AssetExecutionContext, materialize: Callable[[str], dg.MaterializeResult]
) -> dg.MaterializeResult:
    """Run a stage's per-partition wrapper (`materialize(partition_key)`, calling the stage's core for one key) for
    every partition key of the run, in order.

    One key (a `make run` partition, a sensor's request) returns its result unchanged, so its metadata reads as
    before. Several keys (a range run of a single-run backfill): Dagster records one materialisation event per key;
    each gets that key's own metadata (`add_asset_metadata(..., partition_key=k)`), and every event also carries the
    run's `run_partitions`, `run_partition_range` and `run_totals` (the sum of each count over the keys: integer
    metadata, ids excepted). Dagster records one data version per output: it is kept when every key gave the same
    one (e.g. an item bank's file hash) and left to Dagster otherwise. A key that raises fails the run: the keys
    before it are stored (each stage replaces its partition's rows, so a rerun repeats nothing twice) but, as
    Dagster fails the whole step, only a rerun records their materialisations."""
    keys = list(context.partition_keys)
    if len(keys) == 1:
        return materialize(keys[0])
    started = time.perf_counter()
    totals: dict[str, int] = {}
    versions = set()
    for n, partition_key in enumerate(keys, 1):
        result = materialize(partition_key)
        metadata = dict(result.metadata or {})
        context.add_asset_metadata(metadata, partition_key=partition_key)
        for name, value in metadata.items():
            count = value.value if isinstance(value, dg.IntMetadataValue) else value
            if isinstance(count, int) and not isinstance(count, bool) and not name.endswith("_id"):
                totals[name] = totals.get(name, 0) + count
        versions.add(result.data_version)
        elapsed = time.perf_counter() - started
        context.log.info(
            f"{n}/{len(keys)} partitions ({partition_key} done) in {elapsed:.0f} s, "
            f"ETA {elapsed / n * (len(keys) - n):.0f} s"
        )
    return dg.MaterializeResult(
        metadata={
            "run_partitions": dg.MetadataValue.int(len(keys)),
            "run_partition_range": dg.MetadataValue.text(f"{keys[0]}...{keys[-1]}"),
            "run_totals": dg.MetadataValue.json(totals),
        },
        data_version=versions.pop() if len(versions) == 1 else None,
    )


def sensor_status(spec: BenchmarkSpec) -> dg.DefaultSensorStatus:
    """A spec's event sensors are on by default, unless the spec says nobody builds it (`automation.sensors_running:
    false`, e.g. `kina`, the empty shell): then they are off, so `make dev` ticks and records nothing for it."""
    return dg.DefaultSensorStatus.RUNNING if spec.automation.sensors_running else dg.DefaultSensorStatus.STOPPED


def unbuilt_note(spec: BenchmarkSpec) -> str:
    """What an off-by-default sensor says first in the UI, so nobody wonders why it does not tick."""
    if spec.automation.sensors_running:
        return ""
    return f"Off by default: nobody builds {spec.name} (automation.sensors_running: false); turn it on here if you do. "
