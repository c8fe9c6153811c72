"""A database prepared once: the wine snapshot's AVA and grape-list sources ingested, their facts extracted, anchored,
scored and selected (regions, grape_varieties). Tests then materialise only the `items` asset's partitions on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import dagster as dg
import pytest

from benchmark_platform.defs import anchors, centrality, facts, ingest, selection
from benchmark_platform.defs.common import DatabaseResource, EmbedderResource
from benchmark_platform.defs.generation import build_defs
from benchmark_platform.defs.llm import LLMGatewayResource
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.double import Script, ServerThread, scripted_servers
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database, migrate

SOURCES = ("ttb_ava_geojson", "wikipedia_grape_list")
DISCIPLINES = ("regions", "grape_varieties")


@pytest.fixture(scope="session")
def prepared(fresh_database) -> Database:
    db = Database(fresh_database("bp_generation"))
    migrate(db)
    spec = load_spec("wine")
    # the stages up to selection only, not the whole graph
    upstream = [stage.build_defs(spec) for stage in (ingest, facts, anchors, centrality, selection)]
    resources = {k: v for d in upstream for k, v in (d.resources or {}).items()}
    resources.update(database=DatabaseResource(url=db.url), embedder=EmbedderResource(),
                     llm=LLMGatewayResource(database=DatabaseResource(url=db.url)))
    graph = {a.key.path[-1]: a for d in upstream for a in d.assets if isinstance(a, dg.AssetsDefinition)}
    with dg.instance_for_test() as instance:
        for source in SOURCES:
            dg.materialize([graph["source_documents"], graph["fact_candidates"]], partition_key=source,
                           resources=resources, instance=instance)
        for discipline in DISCIPLINES:
            dg.materialize([graph[name] for name in ("facts", "anchors", "support_centrality", "selected_facts")],
                           partition_key=discipline,
                           resources=resources, instance=instance)
    return db


@pytest.fixture(scope="session")
def servers() -> Iterator[Callable[[Script], ServerThread]]:
    with scripted_servers() as start:
        yield start


def scripted_models(base_url: str, n: int, tag: str) -> list[ModelConfig]:
    """n generator configs on one scripted server; `tag` keeps their cache keys apart from other tests'."""
    return [ModelConfig(name=f"gen{i}", family=f"family{i}", base_url=base_url, model=f"{tag}-{i}")
            for i in range(n)]


def generate_items(db: Database, spec: BenchmarkSpec, discipline: str) -> dg.AssetMaterialization:
    """Materialise the spec's `items` asset for one partition; returns its materialisation (with metadata)."""
    resources = {"database": DatabaseResource(url=db.url), "embedder": EmbedderResource(),
                 "llm": LLMGatewayResource(database=DatabaseResource(url=db.url))}
    assets = [a for a in build_defs(spec).assets if isinstance(a, dg.AssetsDefinition)]
    result = dg.materialize(assets, partition_key=discipline, resources=resources)
    return result.asset_materializations_for_node(assets[0].node_def.name)[0]
