"""Evaluators: the five-stop single-letter protocol with a scripted model, option likelihood, random baseline."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path

import pytest

from benchmark_platform.evaluation.answering import AnswerProtocol, parse_letter
from benchmark_platform.evaluation.importers import read_mmlu_pro_items
from benchmark_platform.evaluation.items import EvalItem
from benchmark_platform.evaluation.runners import (
    AnswerReply,
    AnswerRequest,
    evaluate_by_likelihood,
    evaluate_generative,
    random_baseline,
    telemetry_summary,
)

REGIONS = ("Burgundy", "Loire", "Rhône", "Alsace")
ITEMS = [
    EvalItem(item_id="q1", discipline="regions", question="Where is Chablis?", options=REGIONS, answer="A"),
    EvalItem(item_id="q2", discipline="regions", question="Where is Vouvray?", options=REGIONS, answer="B"),
    EvalItem(item_id="q3", discipline="regions", question="Where is Condrieu?", options=REGIONS, answer="C"),
]


class ScriptedSlate:
    """Fixed replies per (question, retry?), scripted log-likelihoods, and a record of every batch."""

    def __init__(
        self,
        replies: dict[tuple[str, bool], str | None] | None = None,
        fail_on: str | None = None,
        logliks: list[float] | None = None,
    ) -> None:
        self.replies, self.fail_on, self.logliks, self.batches = replies or {}, fail_on, logliks, []

    async def answer(self, model: str, requests: Sequence[AnswerRequest]) -> list[AnswerReply]:
        self.batches.append(list(requests))
        replies = []
        for request in requests:
            system, user = request.messages[0][1], request.messages[1][1]
            if self.fail_on and self.fail_on in user:
                raise RuntimeError("provider gave up after retries")
            retry = system.startswith("You MUST")
            replies.append(
                AnswerReply(
                    text=self.replies[(user.splitlines()[0], retry)],
                    input_tokens=40,
                    output_tokens=1,
                    latency_s=0.4 if retry else 0.2,
                    cost_usd=1e-5,
                )
            )
        return replies

    async def loglikelihoods(self, model: str, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.batches.append(list(pairs))
        return self.logliks[: len(pairs)]

    def family(self, model: str) -> str | None:
        return "scripted"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("B", "B"),
        (" c\n", "C"),
        ("(D)", "D"),
        ("Answer: A", "A"),
        ("The answer is B.", "B"),
        ("", None),
        (None, None),
        ("Z", None),
        ("Loire", None),
        ("E", None),
    ],
)
def test_parse_letter_first_standalone_option_letter(text: str | None, expected: str | None) -> None:
    assert parse_letter(text, "ABCD") == expected


def test_protocol_is_the_five_stops() -> None:
    protocol = AnswerProtocol()
    assert protocol.max_tokens == 5 and protocol.stop == ("\n\n", ".", " ", ":")
    assert "exactly one letter — A, B, C or D — and nothing else" in protocol.system_prompt("ABCD")
    assert "A, B, C, D, E, F, G, H, I or J" in protocol.system_prompt("ABCDEFGHIJ", retry=True)


def test_generative_evaluation_retries_once_then_records_unparsed() -> None:
    slate = ScriptedSlate(
        {
            ("Where is Chablis?", False): "A",
            ("Where is Vouvray?", False): "Loire",
            ("Where is Vouvray?", True): "B",
            ("Where is Condrieu?", False): "Rhône",
            ("Where is Condrieu?", True): "Rhône",
        }
    )
    frame = asyncio.run(evaluate_generative(ITEMS, model="m", slate=slate, logit_bias=True))
    assert frame.select("item_id", "prediction", "correct", "retried").rows() == [
        ("q1", "A", True, False),
        ("q2", "B", True, True),
        ("q3", None, False, True),
    ]
    assert [len(batch) for batch in slate.batches] == [3, 2]  # one batch of first attempts, one of retries
    first = slate.batches[0][0]
    assert first.max_tokens == 5 and first.stop == ("\n\n", ".", " ", ":")
    assert first.letter_logit_bias == {"A": 5.0, "B": 5.0, "C": 5.0, "D": 5.0}
    assert first.messages[1][1].endswith("A. Burgundy\nB. Loire\nC. Rhône\nD. Alsace")
    summary = telemetry_summary(frame).row(0, named=True)
    assert summary["answers"] == 3 and summary["parse_rate"] == pytest.approx(2 / 3) and summary["retried"] == 2
    assert summary["input_tokens"] == 200 and summary["cost_usd"] == pytest.approx(5e-5)
    assert summary["latency_p50_s"] == pytest.approx(0.6) and summary["latency_p95_s"] == pytest.approx(0.6)


def test_avg_at_k_keeps_one_row_per_sample_and_sends_the_sample_index() -> None:
    slate = ScriptedSlate({(item.question, False): item.answer for item in ITEMS})
    frame = asyncio.run(evaluate_generative(ITEMS, model="m", slate=slate, k=4))
    assert frame.height == 12 and frame["correct"].all()
    assert [r.sample for r in slate.batches[0]] == [0, 1, 2, 3] * 3


def test_a_failed_call_fails_the_whole_evaluation() -> None:
    slate = ScriptedSlate({(item.question, False): item.answer for item in ITEMS}, fail_on="Vouvray")
    with pytest.raises(RuntimeError, match="gave up"):
        asyncio.run(evaluate_generative(ITEMS, model="m", slate=slate))


def test_likelihood_scoring_with_and_without_length_normalisation() -> None:
    # " Loire" wins on raw log-likelihood for both items; per character " Burgundy" wins the first
    slate = ScriptedSlate(logliks=[-4.0, -3.0, -9.0, -8.9] * 2)
    raw = asyncio.run(evaluate_by_likelihood(ITEMS[:2], model="local", slate=slate))
    assert raw["prediction"].to_list() == ["B", "B"] and raw["correct"].to_list() == [False, True]
    assert slate.batches[0][:2] == [
        ("Question: Where is Chablis?\nAnswer:", " Burgundy"),
        ("Question: Where is Chablis?\nAnswer:", " Loire"),
    ]
    per_char = asyncio.run(
        evaluate_by_likelihood(
            ITEMS[:1], model="local", normalise="chars", slate=ScriptedSlate(logliks=[-6.0, -6.0, -9.0, -6.5])
        )
    )
    assert per_char["prediction"].to_list() == ["A"]  # -6/9 beats -6/6
    with pytest.raises(ValueError, match="model local: 1 finite log-likelihoods expected 4"):
        asyncio.run(evaluate_by_likelihood(ITEMS[:1], model="local", slate=ScriptedSlate(logliks=[0.0])))


def test_random_baseline_is_seeded_order_free_and_near_chance(shared_data: Path) -> None:
    items = [
        EvalItem(
            item_id=r["item_id"],
            discipline=r["discipline"],
            question=r["question"],
            options=tuple(r["options"]),
            answer=r["answer"],
        )
        for r in read_mmlu_pro_items(shared_data / "mmlu_pro_outputs").iter_rows(named=True)
    ]
    first = random_baseline(items, seed=7, k=2)
    again = random_baseline(items[::-1], seed=7, k=2)
    assert first.sort("item_id", "sample").equals(again.sort("item_id", "sample"))
    assert not first.equals(random_baseline(items, seed=8, k=2))
    chance = sum(2 / len(item.options) for item in items) / (2 * len(items))  # some items have fewer than 10 options
    assert first["correct"].mean() == pytest.approx(chance, abs=0.006)
    assert first.group_by("item_id").len()["len"].unique().to_list() == [2]


def test_items_must_offer_their_answer() -> None:
    with pytest.raises(ValueError, match="item q9: answer 'E' is not one of ABCD"):
        EvalItem(item_id="q9", discipline="d", question="?", options=("a", "b", "c", "d"), answer="E")
