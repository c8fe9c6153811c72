"""Multiple-choice answers by option likelihood (lm-evaluation-harness style), through the gateway.

Each option's text is scored as the continuation of "Question: ...\\nAnswer:"; the answer is the option with the
highest log-likelihood (`acc`) or the highest log-likelihood per character (`acc_norm`). Needs an endpoint that
serves `/completions` with `echo` and `logprobs` (the local model, llama.cpp, vLLM).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmark_platform.llm.gateway import CallResult, Gateway, ScoreRequest


@dataclass(frozen=True)
class McqItem:
    question: str
    options: tuple[str, ...]
    answer_index: int


@dataclass(frozen=True)
class McqAnswer:
    predicted: int | None  # None when an option could not be scored
    predicted_norm: int | None
    logprobs: tuple[float | None, ...]


def context(question: str) -> str:
    return f"Question: {question.strip()}\nAnswer:"


def requests(model: str, item: McqItem) -> list[ScoreRequest]:
    return [
        ScoreRequest(model=model, context=context(item.question), continuation=f" {option.strip()}")
        for option in item.options
    ]


def choose(item: McqItem, results: Sequence[CallResult]) -> McqAnswer:
    logprobs = tuple(r.logprob if r.ok else None for r in results)
    if any(lp is None for lp in logprobs):
        return McqAnswer(None, None, logprobs)
    scores = [float(lp) for lp in logprobs if lp is not None]  # all of them: a None returned above
    per_char = [s / len(f" {o.strip()}") for s, o in zip(scores, item.options, strict=True)]
    return McqAnswer(
        max(range(len(scores)), key=scores.__getitem__), max(range(len(per_char)), key=per_char.__getitem__), logprobs
    )


async def answer_all(gateway: Gateway, model: str, items: Sequence[McqItem]) -> list[McqAnswer]:
    """Score every option of every item in one gateway batch."""
    batch = [r for item in items for r in requests(model, item)]
    results = await gateway.complete_many(batch)
    out, at = [], 0
    for item in items:
        out.append(choose(item, results[at : at + len(item.options)]))
        at += len(item.options)
    return out
