"""A database prepared once: the wine snapshot's AVA, grape-list and rulebook sources ingested, their facts
extracted, anchored, scored and selected (regions, grape_varieties). Tests then materialise only the `items` asset's partitions on it."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from itertools import combinations

import dagster as dg
import pytest

from benchmark_platform.defs import anchors, centrality, facts, ingest, selection
from benchmark_platform.defs.common import DatabaseResource, EmbedderResource
from benchmark_platform.defs.generation import build_defs
from benchmark_platform.defs.llm import LLMGatewayResource
from benchmark_platform.generation.build import _Context
from benchmark_platform.generation.model import Fact
from benchmark_platform.generation.persist import load_pool, load_selected
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.double import Rule, Script, ServerThread, scripted_servers
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform.store import Database

SOURCES = ("ttb_ava_geojson", "wikipedia_grape_list", "inao_cahiers")
DISCIPLINES = ("regions", "grape_varieties")


@pytest.fixture(scope="session")
def prepared(built_once) -> Database:
    """Built once per test run (both xdist workers use generation modules); each process gets its own copy."""
    return Database(built_once("generation", _prepare))


def _prepare(url: str) -> None:
    spec = load_spec("wine")
    # the stages up to selection only, not the whole graph
    upstream = [stage.build_defs(spec) for stage in (ingest, facts, anchors, centrality, selection)]
    resources = {k: v for d in upstream for k, v in (d.resources or {}).items()}
    resources.update(
        database=DatabaseResource(url=url),
        embedder=EmbedderResource(),
        llm=LLMGatewayResource(database=DatabaseResource(url=url)),
    )
    graph = {a.key.path[-1]: a for d in upstream for a in d.assets if isinstance(a, dg.AssetsDefinition)}
    with dg.instance_for_test() as instance:
        for source in SOURCES:
            dg.materialize(
                [graph["source_documents"], graph["fact_candidates"]],
                partition_key=source,
                resources=resources,
                instance=instance,
            )
        for discipline in DISCIPLINES:
            dg.materialize(
                [graph[name] for name in ("facts", "anchors", "support_centrality", "selected_facts")],
                partition_key=discipline,
                resources=resources,
                instance=instance,
            )


@pytest.fixture(scope="session")
def servers() -> Iterator[Callable[[Script], ServerThread]]:
    with scripted_servers() as start:
        yield start


def scripted_models(base_url: str, n: int, tag: str) -> list[ModelConfig]:
    """n generator configs on one scripted server; `tag` keeps their cache keys apart from other tests'."""
    return [ModelConfig(name=f"gen{i}", family=f"family{i}", base_url=base_url, model=f"{tag}-{i}") for i in range(n)]


def generate_items(db: Database, spec: BenchmarkSpec, discipline: str) -> dg.AssetMaterialization:
    """Materialise the spec's `items` asset for one partition; returns its materialisation (with metadata)."""
    resources = {
        "database": DatabaseResource(url=db.url),
        "embedder": EmbedderResource(),
        "llm": LLMGatewayResource(database=DatabaseResource(url=db.url)),
    }
    assets = [a for a in build_defs(spec).assets if isinstance(a, dg.AssetsDefinition)]
    result = dg.materialize(assets, partition_key=discipline, resources=resources)
    return result.asset_materializations_for_node(assets[0].node_def.name)[0]


def pseudo_groups(db: Database, spec: BenchmarkSpec, discipline: str) -> list[list[Fact]]:
    """The fact groups the orchestrator hands to pseudo-MCQ slots, in the order it hands them out."""
    ctx = _Context(
        load_selected(db, spec.name, discipline),
        load_pool(db, spec.name, discipline),
        spec.generation,
        EmbedderResource().embedder,
    )
    return list(ctx.stream("pseudo_ok"))


def pseudo_reply(group: list[Fact], variant: str = "valid", answer_at: int = 3) -> str:
    """A model's pseudo-MCQ over `group`: statements 1-3 true, ten 3-statement options with the correct one at
    `answer_at`; the variants break one KINA rule each."""
    ids = [f.fact_id for f in group]
    statements = [
        {
            "fact_id": f.fact_id,
            "text": f.text if i < 3 else f"It is not the case that {f.text}",
            "true": i < 3,
            "correction": "" if i < 3 else f"the fact states: {f.text}",
        }
        for i, f in enumerate(group)
    ]
    truth = [1, 2, 3]
    wrong = [list(c) for c in combinations(range(1, len(group) + 1), 3) if list(c) != truth][:9]
    options = [*wrong[:answer_at], truth, *wrong[answer_at:]]
    if variant == "proper_subset":
        options[0] = [1, 2]  # inside the true set {1, 2, 3}
    elif variant == "nine_options":
        options = options[1:]
    elif variant == "two_correct":
        options[0] = truth
    answer = options.index(truth) + 1 if variant != "two_correct" else answer_at + 1
    return json.dumps(
        {
            "statements": statements,
            "answer": answer,
            "options": [
                {
                    "statements": o,
                    "sources": [ids[n - 1] for n in o],
                    "explanation": "Correct: exactly the true statements."
                    if o == truth
                    else f"Incorrect: it lists statements {o}, but only 1, 2 and 3 are true.",
                }
                for o in options
            ],
        }
    )


def pseudo_rules(db: Database, spec: BenchmarkSpec, disciplines: Iterable[str], variant: str = "valid") -> list[Rule]:
    """Replies to every pseudo-MCQ prompt the orchestrator can send for these disciplines (keyed on the group's first
    fact, which only that group starts with)."""
    return [
        Rule(match=f"FACT GROUP:\n[{group[0].fact_id}]", reply=pseudo_reply(group, variant))
        for discipline in disciplines
        for group in pseudo_groups(db, spec, discipline)
    ]
