"""The bundled local model (extra `local-llm`) answers real MMLU items by option likelihood through the gateway."""

from __future__ import annotations

import asyncio
import csv

import pytest

pytest.importorskip("llama_cpp", reason="the local-llm extra is not installed")

from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.gateway import ChatRequest, Gateway
from benchmark_platform.llm.local import MODEL_ID, LocalModelServer
from benchmark_platform.llm.mcq import McqItem, answer_all

pytestmark = pytest.mark.slow  # loads and runs the local model

N_ITEMS = 20


@pytest.fixture(scope="module")
def local_server():
    with LocalModelServer() as server:
        yield server


def mmlu_items(shared_data, subject: str, n: int) -> list[McqItem]:
    with (shared_data / "mmlu_hendrycks" / "test" / f"{subject}_test.csv").open(newline="") as f:
        rows = list(csv.reader(f))[:n]
    return [McqItem(r[0], tuple(r[1:5]), "ABCD".index(r[5].strip())) for r in rows]


def test_local_model_answers_mmlu_through_the_gateway(local_server, shared_data, db, tmp_path):
    items = mmlu_items(shared_data, "miscellaneous", N_ITEMS)
    model = ModelConfig(
        name="gemma-local",
        family="gemma",
        backend="local_llama",
        base_url=local_server.base_url,
        model=MODEL_ID,
        max_concurrency=1,
    )

    async def evaluate():
        async with Gateway([model], GatewaySettings(), db, run_id="mmlu-local", journal_dir=tmp_path) as gw:
            answers = await answer_all(gw, model.name, items)
        return answers, gw.totals

    answers, totals = asyncio.run(evaluate())
    assert all(a.predicted is not None for a in answers) and totals.status["ok"] == 4 * N_ITEMS
    accuracy = sum(a.predicted == it.answer_index for a, it in zip(answers, items, strict=True)) / N_ITEMS
    print(f"gemma-3-270m option-likelihood accuracy on {N_ITEMS} MMLU miscellaneous items: {accuracy:.2f}")
    assert 0.0 <= accuracy <= 1.0

    again, totals2 = asyncio.run(evaluate())
    assert totals2.cache_hits == 4 * N_ITEMS and totals2.provider_calls == 0
    assert [a.predicted for a in again] == [a.predicted for a in answers]


def test_local_model_prefers_the_true_continuation(local_server, db, tmp_path):
    item = McqItem("What is the capital of France?", ("London", "Paris", "Berlin", "Madrid"), 1)
    model = ModelConfig(
        name="gemma-local",
        family="gemma",
        backend="local_llama",
        base_url=local_server.base_url,
        model=MODEL_ID,
        max_concurrency=1,
    )

    async def go():
        async with Gateway([model], GatewaySettings(), db, run_id="sanity", journal_dir=tmp_path) as gw:
            [answer] = await answer_all(gw, model.name, [item])
            chat = await gw.complete(
                ChatRequest(model=model.name, max_tokens=8, messages=[{"role": "user", "content": "Name a colour."}])
            )
        return answer, chat

    answer, chat = asyncio.run(go())
    assert answer.predicted == 1
    assert chat.ok and chat.input_tokens > 0 and 0 < chat.output_tokens <= 8  # protocol level only: a base model
