"""The LLM gateway as the evaluation's `ModelSlate`: each evaluation is one `complete_many` batch.

Stops 1, 2, 3 and 5 of the five-stop protocol go through (system prompt, max_tokens, stop sequences, parse +
retry). Stop 4, a letter logit bias, is not sent: OpenAI-compatible APIs key `logit_bias` by token id, which
differs per tokenizer, so it would need a per-model token map in the spec; the short max_tokens covers it.
An answer's cost is priced from its tokens with the model config's prices, so a rerun served from the cache
stores the same cost; what a run actually paid is in the gateway's own telemetry (llm_calls).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from benchmark_platform.evaluation.runners import AnswerReply, AnswerRequest
from benchmark_platform.llm import CallResult, ChatRequest, Gateway, ScoreRequest


def _check(model: str, results: list[CallResult]) -> None:
    failed = [r for r in results if not r.ok]
    if failed:
        raise RuntimeError(
            f"model {model}: {len(failed)} of {len(results)} calls failed, e.g. {failed[0].status}: {failed[0].error}"
        )


class GatewaySlate:
    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway

    async def answer(self, model: str, requests: Sequence[AnswerRequest]) -> list[AnswerReply]:
        results = await self.gateway.complete_many(
            [
                ChatRequest(
                    model=model,
                    messages=[{"role": role, "content": text} for role, text in r.messages],
                    sample_index=r.sample,
                    max_tokens=r.max_tokens,
                    stop=r.stop,
                )
                for r in requests
            ]
        )
        _check(model, results)
        prices = self.gateway.models[model].prices
        return [
            AnswerReply(
                text=r.text,
                input_tokens=r.input_tokens,
                output_tokens=r.output_tokens,
                reasoning_tokens=r.reasoning_tokens,
                latency_s=r.latency_ms / 1000,
                cost_usd=prices.cost(r.input_tokens, r.output_tokens, r.reasoning_tokens),
            )
            for r in results
        ]

    async def loglikelihoods(self, model: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        results = await self.gateway.complete_many(
            [ScoreRequest(model=model, context=context, continuation=continuation) for context, continuation in pairs]
        )
        _check(model, results)
        return [float(cast(float, r.logprob)) for r in results]  # _check passed: every result has its logprob

    def family(self, model: str) -> str | None:
        return self.gateway.models[model].family
