"""Pure parts of the gateway: model configs, structured-output extraction, token buckets, breaker, retry delays."""

from __future__ import annotations

import asyncio
import random

import pytest
from pydantic import BaseModel, ValidationError

from benchmark_platform.llm.config import GatewaySettings, ModelConfig, Prices, ReasoningConfig, provider_limits
from benchmark_platform.llm.limits import CircuitBreaker, CircuitOpen, TokenBucket, parse_retry_after, retry_delay
from benchmark_platform.llm.structured import ExtractionError, extract


def test_model_config_defaults_and_validation():
    m = ModelConfig(
        name="gpt-mini",
        family="openai",
        base_url="https://openrouter.ai/api/v1",
        model="openai/gpt-5-mini",
        api_key_env="OPENROUTER_API_KEY",
        reasoning=ReasoningConfig(effort="high"),
    )
    assert m.provider == "openrouter.ai"
    assert m.request_params() == {"max_tokens": 1024, "temperature": 0.0, "reasoning": {"effort": "high"}}
    with pytest.raises(ValidationError, match="extra"):
        ModelConfig(name="x", family="f", base_url="http://h/v1", model="m", temprature=0.2)
    with pytest.raises(ValidationError, match="base_url"):
        ModelConfig(name="x", family="f", model="m")
    with pytest.raises(ValidationError, match="api_key_env"):
        ModelConfig(name="x", family="f", base_url="http://h/v1", model="m", api_key_env="sk-live-123")
    assert ModelConfig(name="local", family="gemma", backend="local_llama", model="g").provider == "local"
    flat = ReasoningConfig(effort="low", request_field="reasoning_effort").request_params()
    assert flat == {"reasoning_effort": "low"}


def test_providers_must_agree_on_limits():
    a = ModelConfig(name="a", family="f", base_url="http://h/v1", model="m1", max_concurrency=4)
    assert provider_limits([a, a.model_copy(update={"name": "b"})])["h"].max_concurrency == 4
    with pytest.raises(ValueError, match="'a' and 'c' share provider 'h'"):
        provider_limits([a, a.model_copy(update={"name": "c", "max_concurrency": 5})])


def test_prices_charge_reasoning_apart():
    p = Prices(input_per_m=1.0, output_per_m=10.0, reasoning_per_m=20.0)
    assert p.cost(1_000_000, 300_000, reasoning_tokens=100_000) == pytest.approx(1.0 + 2.0 + 2.0)


class Item(BaseModel):
    question: str
    options: list[str]


@pytest.mark.parametrize(
    ("text", "tier"),
    [
        ('Here it is:\n```json\n{"question": "Q?", "options": ["a", "b"]}\n```\nDone.', "fenced"),
        ('  {"question": "Q?", "options": ["a", "b"]}  ', "raw"),
        ('Sure! {"note": 1} then {"question": "Q?", "options": ["a", "b"]} hope it helps', "prefix"),
    ],
)
def test_extract_tiers(text, tier):
    item, used = extract(text, Item)
    assert (item.question, item.options, used) == ("Q?", ["a", "b"], tier)


def test_extract_failure_says_why_for_each_tier():
    with pytest.raises(ExtractionError) as e:
        extract('{"question": "Q?", "options": "not a list"}', Item)
    assert [r.split(":")[0] for r in e.value.reasons] == ["raw", "prefix"]
    with pytest.raises(ExtractionError, match="no JSON object"):
        extract("I cannot answer that.", Item)


def test_token_bucket_waits_and_refunds():
    async def main():
        bucket = TokenBucket(per_minute=6000)  # 100/s, holds 100
        await bucket.acquire(100)
        assert bucket.level <= 1
        await bucket.acquire(5)  # must wait for refill rather than go below zero
        assert bucket.level >= -1e-6
        bucket.refund(50)
        assert bucket.level >= 49
        await bucket.acquire(250)  # bigger than the bucket: waits for a full one, then owes the rest
        assert bucket.level < 0

    asyncio.run(main())


def test_breaker_opens_probes_and_closes():
    breaker = CircuitBreaker(failures=2, cooldown_s=0.0)
    breaker.failure()
    breaker.before_attempt()
    breaker.failure()
    breaker.before_attempt()  # cooldown over: this is the probe
    with pytest.raises(CircuitOpen):
        breaker.before_attempt()  # only one probe at a time
    breaker.success()
    breaker.before_attempt()
    assert breaker.times_opened == 1


def test_retry_delay_honours_retry_after_and_backs_off():
    s, rng = GatewaySettings(backoff_base_s=1.0, backoff_max_s=8.0), random.Random(0)
    assert 2.0 <= retry_delay(1, 2.0, s, rng) <= 2.1
    delays = [retry_delay(k, None, s, rng) for k in (1, 2, 3, 4, 5, 6)]
    assert all(c / 2 <= d <= c for d, c in zip(delays, [1, 2, 4, 8, 8, 8], strict=True))
    assert parse_retry_after("1") == 1.0 and parse_retry_after("Wed, 21 Oct 2026 07:28:00 GMT") is None
