"""Evaluators: single-letter answers through a chat model, option-likelihood scoring, a random baseline.

The model side is the `ModelSlate` protocol, batch-shaped so a whole evaluation is one gateway batch (one cache
lookup, the provider's full concurrency): `GatewaySlate` (gateway.py) adapts the LLM gateway to it; tests use
scripted doubles. Every evaluator returns the results frame of `results.py`, with telemetry where there is some.
A failed model call raises: nothing partial is returned, and the gateway's cache makes a rerun free.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal, Protocol

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.evaluation.answering import AnswerProtocol, parse_letter, render_question
from benchmark_platform.evaluation.items import EvalItem
from benchmark_platform.evaluation.results import RESULT_SCHEMA, validate_results

# Frozen, so one shared default instance is safe (a call in the signature would be evaluated once anyway).
DEFAULT_PROTOCOL = AnswerProtocol()

TELEMETRY_SCHEMA: dict[str, pl.DataType] = {
    "raw_text": pl.String(),
    "retried": pl.Boolean(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "reasoning_tokens": pl.Int64(),
    "latency_s": pl.Float64(),
    "cost_usd": pl.Float64(),
}


class AnswerRequest(BaseModel):
    """One single-letter request. Sampling settings (temperature, top_p, reasoning) are the model config's, applied
    by the gateway; `sample` is the avg@k draw index (part of the gateway's cache key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int
    stop: tuple[str, ...]
    sample: int = 0
    letter_logit_bias: dict[str, float] | None = None


class AnswerReply(BaseModel):
    """The reply and what producing it took. `cost_usd` is the answer's cost (the same when replayed from the
    cache, so reruns store the same numbers), not what this run paid: that is the gateway's telemetry."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | None
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    reasoning_tokens: int = Field(0, ge=0)
    latency_s: float = Field(0.0, ge=0)
    cost_usd: float = Field(0.0, ge=0)


class ModelSlate(Protocol):
    """What evaluation needs from the LLM gateway, per named model config."""

    async def answer(self, model: str, requests: Sequence[AnswerRequest]) -> list[AnswerReply]:
        """One reply per request, in order; raises when a request could not be answered."""
        ...

    async def loglikelihoods(self, model: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """Total log-probability of each (context, continuation) pair's continuation (lm-evaluation-harness style)."""
        ...

    def family(self, model: str) -> str | None:
        """The model config's vendor family (for self-preference)."""
        ...


async def evaluate_generative(
    items: Sequence[EvalItem],
    *,
    model: str,
    slate: ModelSlate,
    k: int = 1,
    logit_bias: bool = False,
    protocol: AnswerProtocol = DEFAULT_PROTOCOL,
) -> pl.DataFrame:
    """avg@k single-letter answers of one model configuration: k rows per item, with telemetry.

    All first attempts go as one batch; the unparsed ones are retried once, as a second batch (stop 5)."""
    draws = [(item, sample) for item in items for sample in range(k)]
    first = await slate.answer(model, [_request(i, s, logit_bias, protocol, retry=False) for i, s in draws])
    replies = [[reply] for reply in first]
    unparsed = [
        n
        for n, ((item, _), r) in enumerate(zip(draws, first, strict=True))
        if parse_letter(r.text, item.letters) is None
    ]
    if unparsed and protocol.retry_once:
        second = await slate.answer(model, [_request(*draws[n], logit_bias, protocol, retry=True) for n in unparsed])
        for n, reply in zip(unparsed, second, strict=True):
            replies[n].append(reply)
    rows = []
    for (item, sample), tries in zip(draws, replies, strict=True):
        prediction = parse_letter(tries[-1].text, item.letters)
        rows.append(
            {
                "model": model,
                "item_id": item.item_id,
                "discipline": item.discipline,
                "sample": sample,
                "prediction": prediction,
                "correct": prediction == item.answer,
                "raw_text": tries[-1].text,
                "retried": len(tries) > 1,
                "input_tokens": sum(r.input_tokens for r in tries),
                "output_tokens": sum(r.output_tokens for r in tries),
                "reasoning_tokens": sum(r.reasoning_tokens for r in tries),
                "latency_s": sum(r.latency_s for r in tries),
                "cost_usd": sum(r.cost_usd for r in tries),
            }
        )
    frame = pl.DataFrame(rows, schema=RESULT_SCHEMA | TELEMETRY_SCHEMA, orient="row")
    return validate_results(frame, f"model {model}")


def _request(item: EvalItem, sample: int, logit_bias: bool, protocol: AnswerProtocol, *, retry: bool) -> AnswerRequest:
    return AnswerRequest(
        messages=(("system", protocol.system_prompt(item.letters, retry=retry)), ("user", render_question(item))),
        max_tokens=protocol.max_tokens,
        stop=protocol.stop,
        sample=sample,
        letter_logit_bias={c: protocol.letter_logit_bias for c in item.letters} if logit_bias else None,
    )


async def evaluate_by_likelihood(
    items: Sequence[EvalItem],
    *,
    model: str,
    slate: ModelSlate,
    normalise: Literal["none", "chars"] = "none",
) -> pl.DataFrame:
    """Pick the option whose text is most likely after the question (`chars`: per character, like acc_norm)."""
    contexts = [f"Question: {item.question.strip()}\nAnswer:" for item in items]
    continuations = [[f" {option.strip()}" for option in item.options] for item in items]
    pairs = [(context, c) for context, options in zip(contexts, continuations, strict=True) for c in options]
    scores = await slate.loglikelihoods(model, pairs)
    if len(scores) != len(pairs) or not all(np.isfinite(scores)):
        raise ValueError(f"model {model}: {len(scores)} finite log-likelihoods expected {len(pairs)}")
    rows, start = [], 0
    for item, options in zip(items, continuations, strict=True):
        mine = scores[start : start + len(options)]
        start += len(options)
        if normalise == "chars":
            mine = [s / len(c) for s, c in zip(mine, options, strict=True)]
        prediction = item.letters[int(np.argmax(mine))]
        rows.append(
            {
                "model": model,
                "item_id": item.item_id,
                "discipline": item.discipline,
                "sample": 0,
                "prediction": prediction,
                "correct": prediction == item.answer,
            }
        )
    return validate_results(pl.DataFrame(rows, schema=RESULT_SCHEMA, orient="row"), f"model {model}")


def random_baseline(
    items: Sequence[EvalItem], *, seed: int, k: int = 1, model: str = "random-baseline"
) -> pl.DataFrame:
    """Uniform random letters; each item's draws depend only on (seed, item_id), not on item order."""
    rows = []
    for item in items:
        key = int.from_bytes(hashlib.blake2b(item.item_id.encode(), digest_size=8).digest(), "big")
        draws = np.random.default_rng([seed, key]).integers(0, len(item.options), size=k)
        for sample, draw in enumerate(draws):
            letter = item.letters[int(draw)]
            rows.append(
                {
                    "model": model,
                    "item_id": item.item_id,
                    "discipline": item.discipline,
                    "sample": sample,
                    "prediction": letter,
                    "correct": letter == item.answer,
                }
            )
    return validate_results(pl.DataFrame(rows, schema=RESULT_SCHEMA, orient="row"), f"model {model}")


def telemetry_summary(answers: pl.DataFrame) -> pl.DataFrame:
    """Per model: answers, parse rate, retries, token totals, latency p50/p95, cost."""
    return (
        answers.group_by("model")
        .agg(
            answers=pl.len(),
            parse_rate=pl.col("prediction").is_not_null().mean(),
            retried=pl.col("retried").sum(),
            input_tokens=pl.col("input_tokens").sum(),
            output_tokens=pl.col("output_tokens").sum(),
            reasoning_tokens=pl.col("reasoning_tokens").sum(),
            latency_p50_s=pl.col("latency_s").quantile(0.5, interpolation="linear"),
            latency_p95_s=pl.col("latency_s").quantile(0.95, interpolation="linear"),
            cost_usd=pl.col("cost_usd").sum(),
        )
        .sort("model")
    )
