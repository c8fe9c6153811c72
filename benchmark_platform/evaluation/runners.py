"""Evaluators: single-letter answers through a chat model, option-likelihood scoring, a random baseline.

The model side is a protocol, so any client plugs in: the LLM gateway (benchmark_platform.llm)
adapts itself to `ChatModel` / `OptionScorer`; tests use scripted doubles. Every evaluator returns
the results frame of `results.py`, with telemetry columns where there is telemetry.
A failed model call raises: nothing partial is returned, and the gateway's cache makes a rerun free.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable, Sequence
from typing import Literal, Protocol

import numpy as np
import polars as pl
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.evaluation.answering import AnswerProtocol, parse_letter, render_question
from benchmark_platform.evaluation.items import EvalItem
from benchmark_platform.evaluation.results import RESULT_SCHEMA, validate_results

TELEMETRY_SCHEMA: dict[str, pl.DataType] = {
    "raw_text": pl.String(),
    "retried": pl.Boolean(),
    "input_tokens": pl.Int64(),
    "output_tokens": pl.Int64(),
    "reasoning_tokens": pl.Int64(),
    "latency_s": pl.Float64(),
    "cost_usd": pl.Float64(),
}


class ChatRequest(BaseModel):
    """One single-letter request. Sampling settings (temperature, top_p, reasoning) are the model config's, applied
    by the gateway; `sample` is the avg@k draw index (part of the gateway's cache key)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    messages: tuple[tuple[str, str], ...]  # (role, content)
    max_tokens: int
    stop: tuple[str, ...]
    sample: int = 0
    letter_logit_bias: dict[str, float] | None = None


class ChatReply(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str | None
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    reasoning_tokens: int = Field(0, ge=0)
    latency_s: float = Field(0.0, ge=0)
    cost_usd: float = Field(0.0, ge=0)


class ChatModel(Protocol):
    async def __call__(self, request: ChatRequest) -> ChatReply: ...


class OptionScorer(Protocol):
    """Total log-probability of each continuation after the prompt (lm-evaluation-harness loglikelihood)."""

    def __call__(self, prompt: str, continuations: Sequence[str]) -> Sequence[float]: ...


class ModelSlate(Protocol):
    """What evaluation needs from the LLM gateway: a way to ask, or to score with, a named model config."""

    def chat_model(self, name: str) -> ChatModel: ...

    def option_scorer(self, name: str) -> OptionScorer: ...


Progress = Callable[[int, int], None]  # (done, total)


async def evaluate_generative(
    items: Sequence[EvalItem],
    *,
    model: str,
    chat: ChatModel,
    k: int = 1,
    logit_bias: bool = False,
    protocol: AnswerProtocol = AnswerProtocol(),
    progress: Progress | None = None,
) -> pl.DataFrame:
    """avg@k single-letter answers of one model configuration: k rows per item, with telemetry."""
    total, done = len(items) * k, 0

    async def one(item: EvalItem, sample: int) -> dict[str, object]:
        nonlocal done
        replies = [await chat(_request(item, sample, logit_bias, protocol, retry=False))]
        prediction = parse_letter(replies[0].text, item.letters)
        if prediction is None and protocol.retry_once:
            replies.append(await chat(_request(item, sample, logit_bias, protocol, retry=True)))
            prediction = parse_letter(replies[1].text, item.letters)
        done += 1
        if progress is not None:
            progress(done, total)
        return {
            "model": model,
            "item_id": item.item_id,
            "discipline": item.discipline,
            "sample": sample,
            "prediction": prediction,
            "correct": prediction == item.answer,
            "raw_text": replies[-1].text,
            "retried": len(replies) > 1,
            "input_tokens": sum(r.input_tokens for r in replies),
            "output_tokens": sum(r.output_tokens for r in replies),
            "reasoning_tokens": sum(r.reasoning_tokens for r in replies),
            "latency_s": sum(r.latency_s for r in replies),
            "cost_usd": sum(r.cost_usd for r in replies),
        }

    rows = await asyncio.gather(*(one(item, s) for item in items for s in range(k)))
    frame = pl.DataFrame(rows, schema=RESULT_SCHEMA | TELEMETRY_SCHEMA, orient="row")
    return validate_results(frame, f"model {model}")


def _request(item: EvalItem, sample: int, logit_bias: bool, protocol: AnswerProtocol, *, retry: bool) -> ChatRequest:
    return ChatRequest(
        messages=(("system", protocol.system_prompt(item.letters, retry=retry)), ("user", render_question(item))),
        max_tokens=protocol.max_tokens,
        stop=protocol.stop,
        sample=sample,
        letter_logit_bias={c: protocol.letter_logit_bias for c in item.letters} if logit_bias else None,
    )


def evaluate_by_likelihood(
    items: Sequence[EvalItem],
    *,
    model: str,
    scorer: OptionScorer,
    normalise: Literal["none", "chars"] = "none",
    progress: Progress | None = None,
) -> pl.DataFrame:
    """Pick the option whose text is most likely after the question (`chars`: per character, like acc_norm)."""
    rows = []
    for done, item in enumerate(items, 1):
        continuations = [f" {option.strip()}" for option in item.options]
        scores = list(scorer(f"Question: {item.question.strip()}\nAnswer:", continuations))
        if len(scores) != len(continuations) or not all(np.isfinite(scores)):
            raise ValueError(f"model {model}, item {item.item_id}: scorer returned {scores!r}")
        if normalise == "chars":
            scores = [s / len(c) for s, c in zip(scores, continuations, strict=True)]
        prediction = item.letters[int(np.argmax(scores))]
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
        if progress is not None:
            progress(done, len(items))
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
