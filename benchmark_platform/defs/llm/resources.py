"""The LLM gateway as a Dagster resource, the metadata helper for LLM-using assets, and the per-provider pools.

An asset that calls models:

    @dg.asset(pool=pool_name(provider), ...)
    def judged(context, llm: LLMGatewayResource):
        results, totals = llm.run(models, requests, settings=spec_settings, run_id=context.run.run_id, schema=Verdict)
        ...persist the results whose .ok is true...
        return dg.MaterializeResult(metadata={**counts, **llm_metadata(totals)})

API keys: each model config names its environment variable (`api_key_env`); the resource reads the value at run
time, hands it to the gateway only, and never logs it or puts it in config. Pools: Dagster lets `steps_per_provider`
steps of one provider's pool run at once (`dagster instance concurrency set llm_<provider> N`, or the instance's
`concurrency.pools.default_limit`); each step then takes that share of the provider's concurrency, rpm and tpm.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import dagster as dg
import uvloop
from pydantic import BaseModel

from benchmark_platform.defs.common import DatabaseResource, counts_metadata
from benchmark_platform.llm import (
    CallResult,
    ChatRequest,
    Gateway,
    GatewayTotals,
    MissingApiKey,
    OpenGateway,
    ScoreRequest,
)
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, pool_name


class LLMGatewayResource(dg.ConfigurableResource):
    database: DatabaseResource
    steps_per_provider: int = 1  # the limit of each provider's Dagster pool

    def _share(self, model: ModelConfig) -> ModelConfig:
        n = self.steps_per_provider
        if n == 1:
            return model
        return model.model_copy(
            update={
                "max_concurrency": max(1, model.max_concurrency // n),
                "rpm": model.rpm and max(1, model.rpm // n),
                "tpm": model.tpm and max(1, model.tpm // n),
            }
        )

    @asynccontextmanager
    async def open(
        self, models: Sequence[ModelConfig], settings: GatewaySettings, run_id: str
    ) -> AsyncIterator[Gateway]:
        """A gateway for these models; starts the bundled local model server if a config asks for it."""
        async with AsyncExitStack() as stack:
            configs = [self._share(m) for m in models]
            if any(m.backend == "local_llama" for m in configs):
                try:
                    from benchmark_platform.llm import LocalModelServer
                except ImportError as e:  # pragma: no cover - depends on the install
                    raise RuntimeError("a model config uses the local model: install the `local-llm` extra") from e
                server = await asyncio.to_thread(lambda: LocalModelServer().__enter__())
                stack.push(lambda *exc: server.__exit__(*exc))
                configs = [
                    m.model_copy(update={"base_url": server.base_url}) if m.backend == "local_llama" else m
                    for m in configs
                ]
            missing = sorted(
                {
                    f"{m.name} ({m.api_key_env})"
                    for m in configs
                    if m.api_key_env and not dg.EnvVar(m.api_key_env).get_value()
                }
            )
            if missing:
                raise MissingApiKey(
                    f"API key variables not set for model configs: {', '.join(missing)}; export them (or remove the "
                    "models from the spec)"
                )
            keys = {m.api_key_env: dg.EnvVar(m.api_key_env).get_value() or "" for m in configs if m.api_key_env}
            gateway = await stack.enter_async_context(
                Gateway(configs, settings, self.database.db, run_id=run_id, api_keys=keys)
            )
            yield gateway

    def run(
        self,
        models: Sequence[ModelConfig],
        requests: Sequence[ChatRequest | ScoreRequest],
        *,
        settings: GatewaySettings,
        run_id: str,
        schema: type[BaseModel] | None = None,
    ) -> tuple[list[CallResult], GatewayTotals]:
        """One batch from synchronous asset code."""

        async def main() -> tuple[list[CallResult], GatewayTotals]:
            async with self.open(models, settings, run_id) as gateway:
                results = await gateway.complete_many(requests, schema)
            return results, gateway.totals

        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            return runner.run(main())


def gateway_sessions(context: dg.AssetExecutionContext, settings: GatewaySettings) -> OpenGateway:
    """Sessions of the `llm` resource for this run, as the stages' run modules take them."""
    return lambda models: context.resources.llm.open(models, settings, context.run.run_id)


def llm_metadata(totals: GatewayTotals | None) -> dict[str, Any]:
    """Calls, cache hits and misses, tokens, cost and latency for `MaterializeResult(metadata=...)` (none: no call)."""
    if totals is None:
        return {}
    values = totals.as_dict()
    return {
        **counts_metadata(**{k: v for k, v in values.items() if not isinstance(v, bool)}),
        **{k: dg.MetadataValue.bool(v) for k, v in values.items() if isinstance(v, bool)},
    }


def busiest_pool(models: Sequence[ModelConfig], calls: Mapping[str, float] | None = None) -> str | None:
    """The Dagster pool (`llm_<provider>`) an LLM-using asset queues on: that of the provider expected to carry most
    of its calls (`calls`: model name -> expected calls, equal when omitted; ties: the first provider by name); None
    when it calls no model.

    Dagster gives a step one pool. With one provider (the usual case, e.g. every model through OpenRouter) this is
    exactly that provider's pool, shared with every other asset that calls it. With several, every partition holds
    the same pool, so parallel partitions exclude one another as under a pool named after the provider set, and
    they also queue with the other assets of the provider carrying most of the load, which a set-named pool (a pool
    of its own) would not. The other providers' calls from the step are bounded by the step's share of their limits
    (`LLMGatewayResource.steps_per_provider`) and the gateway's 429 handling only.
    """
    load: dict[str, float] = defaultdict(float)
    for m in models:
        load[m.provider] += 1.0 if calls is None else calls.get(m.name, 0.0)
    return pool_name(max(sorted(load), key=lambda p: load[p])) if load else None


def provider_pools(models: Sequence[ModelConfig]) -> dict[str, str]:
    """Model config name -> the Dagster pool of its provider."""
    return {m.name: pool_name(m.provider) for m in models}
