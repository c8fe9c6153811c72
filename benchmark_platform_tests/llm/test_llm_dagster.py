"""The gateway as a Dagster resource: cost and token totals land in an LLM-using asset's metadata."""

import uuid

import dagster as dg
import pytest

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.llm import LLMGatewayResource, llm_metadata, provider_pools
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, Prices, pool_name
from benchmark_platform.llm.double import Rule, Script
from benchmark_platform.llm.gateway import ChatRequest, MissingApiKey


def test_asset_metadata_carries_cost_and_tokens(serve, db, monkeypatch):
    tag = uuid.uuid4().hex
    server = serve(Script(rules=[Rule(match=tag, reply="B")]))
    monkeypatch.setenv("SCRIPTED_API_KEY", "sk-test-secret")
    model = ModelConfig(
        name="scripted",
        family="test",
        base_url=server.base_url,
        model="scripted-1",
        api_key_env="SCRIPTED_API_KEY",
        prices=Prices(input_per_m=3.0, output_per_m=15.0),
    )
    requests = [
        ChatRequest(model="scripted", messages=[{"role": "user", "content": f"{tag} item {i}"}]) for i in range(12)
    ]

    @dg.asset(pool=pool_name(model.provider))
    def answers(context: dg.AssetExecutionContext, llm: LLMGatewayResource) -> dg.MaterializeResult:
        results, totals = llm.run([model], requests, settings=GatewaySettings(), run_id=context.run.run_id)
        return dg.MaterializeResult(metadata={"answered": sum(r.ok for r in results), **llm_metadata(totals)})

    resources = {"llm": LLMGatewayResource(database=DatabaseResource(url=db.url))}
    first = dg.materialize([answers], resources=resources)
    meta = first.asset_materializations_for_node("answers")[0].metadata
    assert meta["answered"].value == 12 and meta["llm_provider_calls"].value == 12
    assert meta["llm_input_tokens"].value > 0 and meta["llm_output_tokens"].value == 12
    expected = (meta["llm_input_tokens"].value * 3.0 + 12 * 15.0) / 1e6
    assert meta["llm_cost_usd"].value == pytest.approx(expected, rel=1e-3)

    second = dg.materialize([answers], resources=resources)
    meta2 = second.asset_materializations_for_node("answers")[0].metadata
    assert meta2["llm_cache_hits"].value == 12 and meta2["llm_cost_usd"].value == 0.0
    assert meta2["llm_cost_saved_usd"].value == pytest.approx(expected, rel=1e-3)
    assert server.server.calls == 12
    stored = db.query(
        "SELECT request::text AS r, response::text AS s FROM llm_call_cache WHERE request::text LIKE %s", (f"%{tag}%",)
    )
    assert len(stored) == 12 and not any("sk-test-secret" in row["r"] + row["s"] for row in stored)


def test_missing_api_key_names_the_variable_not_a_value(db, monkeypatch):
    monkeypatch.delenv("NOPE_API_KEY", raising=False)
    model = ModelConfig(
        name="remote", family="x", base_url="http://127.0.0.1:9/v1", model="m", api_key_env="NOPE_API_KEY"
    )
    llm = LLMGatewayResource(database=DatabaseResource(url=db.url))
    with pytest.raises(MissingApiKey, match="remote \\(NOPE_API_KEY\\)"):
        llm.run([model], [], settings=GatewaySettings(), run_id="t")


def test_pools_and_shares_per_provider(db):
    a = ModelConfig(
        name="a", family="x", base_url="https://openrouter.ai/api/v1", model="m1", max_concurrency=32, rpm=600
    )
    b = a.model_copy(update={"name": "b", "model": "m2"})
    assert provider_pools([a, b]) == {"a": "llm_openrouter_ai", "b": "llm_openrouter_ai"}
    shared = LLMGatewayResource(database=DatabaseResource(url=db.url), steps_per_provider=4)._share(a)
    assert (shared.max_concurrency, shared.rpm, shared.tpm) == (8, 150, None)
