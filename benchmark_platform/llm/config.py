"""Typed configuration of models and of the gateway (part of the benchmark spec; `extra="forbid"` everywhere).

A model config names one way of asking one model: the endpoint (any OpenAI-compatible base URL, or the bundled
local llama.cpp model), the provider's model id, sampling and reasoning settings, prices and the provider's limits.
Limits (`max_concurrency`, `rpm`, `tpm`) belong to the provider: every config of one provider shares them, so
configs naming the same provider must state the same limits (checked by `provider_limits`).
"""

from __future__ import annotations

import re
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, PositiveInt, model_validator

LOCAL_PROVIDER = "local"


class Prices(BaseModel):
    """US dollars per million tokens. Reasoning tokens cost the output price unless priced apart."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_per_m: NonNegativeFloat = 0.0
    output_per_m: NonNegativeFloat = 0.0
    reasoning_per_m: NonNegativeFloat | None = None

    def cost(self, input_tokens: int, output_tokens: int, reasoning_tokens: int = 0) -> float:
        """Cost of one call; `output_tokens` includes the reasoning tokens, as OpenAI-style usage reports them."""
        reasoning_price = self.output_per_m if self.reasoning_per_m is None else self.reasoning_per_m
        visible = max(0, output_tokens - reasoning_tokens)
        return (
            input_tokens * self.input_per_m + visible * self.output_per_m + reasoning_tokens * reasoning_price
        ) / 1e6

    def max_price_out(self) -> float:
        return max(self.output_per_m, self.reasoning_per_m or 0.0)


class ReasoningConfig(BaseModel):
    """How much the model may think. `request_field` picks the wire form: OpenRouter's unified `reasoning` object
    (`{"effort": ..., "max_tokens": ..., "exclude": ...}`) or OpenAI's / vLLM's flat `reasoning_effort`."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    effort: Literal["minimal", "low", "medium", "high"] | None = None
    max_tokens: PositiveInt | None = None
    exclude: bool = False
    request_field: Literal["reasoning", "reasoning_effort"] = "reasoning"

    @model_validator(mode="after")
    def _one_form(self) -> ReasoningConfig:
        if self.request_field == "reasoning_effort" and (self.effort is None or self.max_tokens is not None):
            raise ValueError("request_field 'reasoning_effort' takes an effort and no max_tokens")
        if self.effort is not None and self.max_tokens is not None:
            raise ValueError("give either effort or max_tokens, not both")
        return self

    def request_params(self) -> dict[str, object]:
        if self.request_field == "reasoning_effort":
            return {"reasoning_effort": self.effort}
        body: dict[str, object] = {"exclude": self.exclude} if self.exclude else {}
        if self.effort is not None:
            body["effort"] = self.effort
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return {"reasoning": body or {"enabled": True}}


class ModelConfig(BaseModel):
    """One model configuration of a spec. `api_key_env` is the NAME of the environment variable holding the key."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:/-]*$")
    family: str = Field(min_length=1)  # vendor family, for self-preference analysis (e.g. 'openai', 'gemma')
    backend: Literal["openai_compatible", "local_llama"] = "openai_compatible"
    base_url: str | None = None  # e.g. https://openrouter.ai/api/v1; the resource fills it in for local_llama
    provider: str = ""  # limits, breaker and Dagster pool are per provider; default: the base URL's host
    api_key_env: str | None = Field(default=None, pattern=r"^[A-Z_][A-Z0-9_]*$")
    model: str = Field(min_length=1)  # the provider's model id
    prices: Prices = Field(default_factory=Prices)
    reasoning: ReasoningConfig | None = None
    temperature: float | None = Field(default=0.0, ge=0.0, le=2.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    max_tokens: PositiveInt = 1024
    json_mode: bool = True  # send response_format={"type": "json_object"} when a schema is asked for
    max_concurrency: PositiveInt = 8
    rpm: PositiveInt | None = None
    tpm: PositiveInt | None = None
    timeout_s: PositiveFloat = 120.0

    @model_validator(mode="before")
    @classmethod
    def _default_provider(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("provider"):
            if data.get("backend") == "local_llama":
                data = {**data, "provider": LOCAL_PROVIDER}
            elif isinstance(data.get("base_url"), str) and urlsplit(data["base_url"]).hostname:
                data = {**data, "provider": urlsplit(data["base_url"]).hostname}
        return data

    @model_validator(mode="after")
    def _endpoint(self) -> ModelConfig:
        if self.backend == "openai_compatible" and (
            not self.base_url or urlsplit(self.base_url).scheme not in ("http", "https")
        ):
            raise ValueError(f"model config {self.name!r}: base_url must be an http(s) URL, got {self.base_url!r}")
        return self

    def request_params(self) -> dict[str, object]:
        """Sampling and reasoning parameters sent with every request (and hashed into the cache key)."""
        params: dict[str, object] = {"max_tokens": self.max_tokens}
        if self.temperature is not None:
            params["temperature"] = self.temperature
        if self.top_p is not None:
            params["top_p"] = self.top_p
        if self.reasoning is not None:
            params.update(self.reasoning.request_params())
        return params


class ProviderLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_concurrency: PositiveInt
    rpm: PositiveInt | None = None
    tpm: PositiveInt | None = None


def provider_limits(models: list[ModelConfig]) -> dict[str, ProviderLimits]:
    """The limits of each provider, checking that its model configs agree on them."""
    limits: dict[str, ProviderLimits] = {}
    first: dict[str, str] = {}
    for m in models:
        lim = ProviderLimits(max_concurrency=m.max_concurrency, rpm=m.rpm, tpm=m.tpm)
        if m.provider in limits and limits[m.provider] != lim:
            raise ValueError(
                f"model configs {first[m.provider]!r} and {m.name!r} share provider {m.provider!r} "
                f"but state different limits ({limits[m.provider]} vs {lim})"
            )
        limits.setdefault(m.provider, lim)
        first.setdefault(m.provider, m.name)
    return limits


def pool_name(provider: str) -> str:
    """Dagster concurrency pool of a provider: steps that call it queue on this pool."""
    return "llm_" + re.sub(r"[^A-Za-z0-9_]", "_", provider)


class GatewaySettings(BaseModel):
    """Run-level behaviour of the gateway (one per spec)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    # per run (all gateways of one run id, e.g. its steps): a call that could cross it is not sent
    cost_cap_usd: NonNegativeFloat | None = None
    max_retries: int = Field(default=6, ge=0)
    backoff_base_s: PositiveFloat = 0.5
    backoff_max_s: PositiveFloat = 30.0
    breaker_failures: PositiveInt = 8  # consecutive failed attempts (5xx, timeouts, bad bodies) that open it
    breaker_cooldown_s: PositiveFloat = 30.0
    # cache and telemetry rows reach PostgreSQL this often (the journal already holds every answer): each flush's
    # statement costs the event loop a GIL hand-off and the database CPU; at 128 concurrent calls flushing every
    # 0.25 s cost 0.003 of the bound against every 1 s (bench, 4 runs each)
    cache_flush_rows: PositiveInt = 1024
    cache_flush_s: PositiveFloat = 1.0
