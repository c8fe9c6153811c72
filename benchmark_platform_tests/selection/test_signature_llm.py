"""support_centrality with psi from a signature model: the scripted double server through the real gateway and
the real PostgreSQL; an answer that is not a valid signature fails the run naming the item and persists nothing."""

from __future__ import annotations

import json

import dagster as dg
import pytest
from pydantic import ValidationError

from benchmark_platform.anchors import load_anchor_set
from benchmark_platform.defs.anchors import build_defs as anchors_defs
from benchmark_platform.defs.centrality import build_defs as centrality_defs
from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm import LLMGatewayResource
from benchmark_platform.llm.config import ModelConfig
from benchmark_platform.llm.double import Rule, Script, scripted_servers
from benchmark_platform.selection.config import SelectionConfig
from benchmark_platform.spec import BenchmarkSpec, load_spec
from benchmark_platform_tests.selection.test_selection_assets import FACTS, fact_id, seeded_database


def _answer(alignment: float, method: str = "declaration analysis") -> str:
    return json.dumps(
        {
            "method_family": method,
            "core_principle": "appellation production rules",
            "answer_type": "proposition",
            "constraints": ["hectolitres"],
            "alignment": alignment,
        }
    )


UNCERTAIN = FACTS["business"][4]  # alignment 0.55: inside the uncertainty band, so re-checked once
OFF_TOPIC = ("zinfandel", "Fiddletown", "Disease poses")  # the negative item labels of business
BROKEN = FACTS["viticulture"][1]  # its answer is not JSON


@pytest.fixture(scope="module")
def db(migrated_database):
    return seeded_database(migrated_database, "bp_signature_llm")


@pytest.fixture(scope="module")
def server():
    script = Script(
        rules=[
            Rule(match=UNCERTAIN, reply=_answer(0.55)),
            *(Rule(match=m, reply=_answer(0.1, "viticulture")) for m in OFF_TOPIC),
            Rule(match=BROKEN, reply="I cannot answer in JSON, sorry."),
        ],
        default_reply="```json\n" + _answer(0.9) + "\n```",
    )
    with scripted_servers() as start:
        yield start(script)


def _spec(base_url: str, tag: str):
    spec = load_spec("wine")
    model = ModelConfig(name="signer", family="scripted", base_url=base_url, model=f"signature-{tag}")
    return spec.model_copy(update={"models": [model], "selection": SelectionConfig(signature_model="signer")})


def _materialize(spec, db, discipline):
    assets = [a for stage in (anchors_defs, centrality_defs) for a in stage(spec).assets]
    database = DatabaseResource(url=db.url)
    with dg.instance_for_test() as instance:
        return dg.materialize(
            assets,
            partition_key=discipline,
            instance=instance,
            raise_on_error=False,
            resources={"database": database, "llm": LLMGatewayResource(database=database)},
        )


def _metadata(result):
    (event,) = [
        e
        for e in result.get_asset_materialization_events()
        if e.asset_key == dg.AssetKey(["wine", "support_centrality"])
    ]
    return {k: getattr(v, "value", v) for k, v in event.materialization.metadata.items()}


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_signatures_come_from_the_model_through_the_gateway_and_its_cache(db, server):
    spec = _spec(server.base_url, "ok")
    first = _materialize(spec, db, "business")
    assert first.success
    meta = _metadata(first)
    rows = db.query(
        "SELECT item_id, role, method_family, raw_alignment, fallback, rechecked FROM item_signatures "
        "WHERE spec = 'wine' AND discipline = 'business'"
    )
    assert rows and not any(r["fallback"] for r in rows)
    assert (
        db.scalar("SELECT fallback_used FROM centrality_runs WHERE spec = 'wine' AND discipline = 'business'") is False
    )
    assert meta["fallback_signatures_used"] is False and meta["signature_source"] == "llm signer"
    by_id = {r["item_id"]: r for r in rows}
    uncertain = by_id[fact_id(UNCERTAIN)]
    assert uncertain["rechecked"] and uncertain["raw_alignment"] == pytest.approx(0.55)
    assert sum(r["rechecked"] for r in rows) == 1
    assert by_id[fact_id(FACTS["business"][0])]["method_family"] == "declaration analysis"
    # one call per scored row (facts, anchor items, labelled items) plus the one re-check, each sent once
    anchors = load_anchor_set(spec.anchors_dir / "business")
    scored = {*by_id, *(i.id for i in anchors.item_labels)}
    assert meta["llm_calls"] == len(scored) + 1 == meta["llm_provider_calls"] == meta["llm_ok"]
    assert meta["llm_cache_hits"] == 0 and meta["llm_invalid"] == 0
    calls = server.server.calls
    assert calls == meta["llm_provider_calls"]
    # a rerun is paid for by the cache: same signatures, no provider call
    second = _materialize(spec, db, "business")
    assert second.success
    again = _metadata(second)
    assert again["llm_cache_hits"] == again["llm_calls"] == meta["llm_calls"] and again["llm_provider_calls"] == 0
    assert server.server.calls == calls
    assert (
        db.query(
            "SELECT item_id, role, method_family, raw_alignment, fallback, rechecked FROM item_signatures "
            "WHERE spec = 'wine' AND discipline = 'business'"
        )
        == rows
    )


def test_an_invalid_signature_answer_fails_naming_the_item_and_persists_nothing(db, server):
    spec = _spec(server.base_url, "broken")
    result = _materialize(spec, db, "viticulture")
    assert not result.success
    failure = next(e for e in result.all_events if e.event_type_value == "STEP_FAILURE")
    error = failure.event_specific_data.error
    cause = error.cause or error
    assert "SignatureError" in (cause.cls_name or "") and fact_id(BROKEN) in cause.message
    assert "no valid signature" in cause.message
    for table in ("centrality_runs", "item_signatures", "centrality_scores", "centrality_pairs"):
        assert db.scalar(f"SELECT count(*) FROM {table} WHERE spec = 'wine' AND discipline = 'viticulture'") == 0


def test_an_unknown_signature_model_is_refused_when_the_spec_is_validated():
    spec = load_spec("wine")
    with pytest.raises(ValidationError, match="selection.signature_model: 'nobody' is not one of the spec's models"):
        BenchmarkSpec.model_validate(
            {**spec.model_dump(), "selection": {"signature_model": "nobody"}, "directory": spec.directory}
        )
