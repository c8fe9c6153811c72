"""What every stage's Dagster wiring shares: the database resource, partitions, asset keys and run metadata."""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

import dagster as dg

from benchmark_platform.embed import Embedder
from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database
from benchmark_platform.store.settings import DATABASE_URL_ENV


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
