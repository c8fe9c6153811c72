"""(Imported by this folder's tests and conftest.) A synthetic release the size of the full MMLU-Pro bank (12,032 items, 10 options each, 30 configurations, 14
disciplines) as the report sees it: the frames a ReleaseSummary carries. Texts have MMLU-Pro's lengths, one model
has no answers in one discipline (a missing heat-map cell), every tenth item is proven by a fact with a source URL.
Seeded: the same frames on every call."""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl

from benchmark_platform.release.datasheet import ReleaseSummary
from benchmark_platform.release.report import report_files

ITEMS, OPTIONS, MODELS = 12_032, 10, 30
DISCIPLINES = [f"discipline_{i:02d}" for i in range(14)]
MISSING = ("model_29", "discipline_13")  # no answers: the heat map must show this cell as missing
CANARY = "SYNTHETIC CANARY 0f3e"
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud market enzyme".split()


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def synthetic_summary(items: int = ITEMS, *, suspect: bool = True, counts: bool = True) -> ReleaseSummary:
    rng = random.Random(35)
    item_rows, options, facts, links, findings, answers = [], [], [], [], [], []
    for i in range(items):
        item_id = f"item{i:05d}"
        discipline = DISCIPLINES[i % len(DISCIPLINES)]
        answer = rng.randrange(OPTIONS)
        item_rows.append(
            {
                "item_id": item_id,
                "discipline": discipline,
                "format": "mcq10",
                "question": f"Question {i}: " + _text(rng, 45),
                "answer_index": answer,
                "explanation": _text(rng, 90),
                "difficulty": f"L{1 + i % 4}",
                "strategy": "template" if i % 3 else "distractor_mining",
                "generator": "deterministic",
            }
        )
        proved = i % 10 == 0
        if proved:
            fact_id = f"fact{i:05d}"
            facts.append(
                {
                    "fact_id": fact_id,
                    "discipline": discipline,
                    "text": f"Fact of item {i}: " + _text(rng, 12),
                    "source_id": f"source_{i % 3}",
                    "tier": 1 + i % 3,
                    "licence": "CC0-1.0",
                    "document_url": f"https://example.org/records/{i}",
                }
            )
            links.append({"item_id": item_id, "fact_id": fact_id, "role": "answer"})
        for p in range(OPTIONS):
            options.append(
                {
                    "item_id": item_id,
                    "position": p,
                    "text": _text(rng, 5),
                    "is_correct": p == answer,
                    "proving_fact_ids": [f"fact{i:05d}"] if proved and p == answer else [],
                }
            )
        for agent in ("A1_lexical_hygiene", "A2_bias_stats", "G1_grounding", "structure"):
            severity = "warn" if agent == "A2_bias_stats" and i % 7 == 0 else "fail" if i % 997 == 0 else "pass"
            findings.append(
                {"item_id": item_id, "agent": agent, "severity": severity, "payload": json.dumps({"i": i % 5})}
            )
        for m in range(MODELS):
            model = f"model_{m:02d}"
            if (model, discipline) == MISSING:
                continue
            skill = 0.3 + 0.6 * m / MODELS
            predicted = answer if rng.random() < skill else (None if rng.random() < 0.02 else (answer + 1) % OPTIONS)
            answers.append(
                {
                    "model": model,
                    "item_id": item_id,
                    "sample_index": 0,
                    "predicted_index": predicted,
                    "correct": predicted == answer,
                }
            )
    answers_frame = pl.DataFrame(answers).join(pl.DataFrame(item_rows).select("item_id", "discipline"), on="item_id")
    by_group = (
        answers_frame.group_by("model", "discipline")
        .agg(n_items=pl.len(), accuracy=pl.col("correct").mean() * 100)
        .with_columns(ci_low=pl.col("accuracy") - 2.5, ci_high=pl.col("accuracy") + 2.5)
        .select(
            grouping=pl.lit("discipline"),
            group_value="discipline",
            model="model",
            n_items="n_items",
            accuracy="accuracy",
            ci_low="ci_low",
            ci_high="ci_high",
        )
        .sort("group_value", "model")
    )
    board = (
        answers_frame.group_by("model")
        .agg(
            n_items=pl.len(),
            accuracy=pl.col("correct").mean() * 100,
            unparsed_answers=pl.col("predicted_index").is_null().sum(),
        )
        .with_columns(ci_low=pl.col("accuracy") - 0.8, ci_high=pl.col("accuracy") + 0.8)
        .sort("accuracy", "model", descending=[True, False])
        .with_row_index("rank", offset=1)
    )
    if counts:  # the columns branch i31 adds: the report shows them when present
        board = board.with_columns(
            answered=pl.col("n_items") - pl.col("unparsed_answers"),
            missing=pl.lit(items) - pl.col("n_items"),
            unparsed=pl.col("unparsed_answers"),
        )
    order = board["model"].to_list()
    pairs = pl.DataFrame(
        [
            {
                "better": a,
                "worse": b,
                "rank_better": i + 1,
                "rank_worse": j + 1,
                "gap": 1.0 * (j - i),
                "ci_low": 0.5 * (j - i) - 0.9,
                "ci_high": 1.5 * (j - i),
                "resolvable": j - i > 1,
            }
            for i, a in enumerate(order)
            for j, b in enumerate(order)
            if i < j
        ]
    )
    tables = {
        "items": pl.DataFrame(item_rows),
        "options": pl.DataFrame(options),
        "facts": pl.DataFrame(facts),
        "item_facts": pl.DataFrame(links),
        "audit_findings": pl.DataFrame(findings),
        "evaluation_answers": pl.DataFrame(answers),
        "leaderboard": board,
        "accuracy_by_group": by_group,
        "sources": pl.DataFrame(
            [
                {"source_id": f"source_{k}", "title": f"Source number {k}", "licence": "CC0-1.0", "tier": 1 + k}
                for k in range(3)
            ]
        ),
        "audit_actions": pl.DataFrame(
            [
                {"item_id": f"dropped{k:03d}", "discipline": DISCIPLINES[k % 14], "action": "drop", "reason": "fail"}
                for k in range(120)
            ]
        ),
        "analyses/pairwise_resolvability": pairs,
        "analyses/tiers": pl.DataFrame(
            {"model": order, "rank": range(1, len(order) + 1), "tier": [1 + k // 4 for k in range(len(order))]}
        ),
        "analyses/ranking_stability": pl.DataFrame(
            {
                "rho": [0.5, 0.25],
                "subsample_items": [items // 2, items // 4],
                "kendall_tau": [0.9, 0.8],
                "kendall_tau_sd": [0.05, 0.08],
                "rank1_retention": [0.85, 0.7],
            }
        ),
    }
    if suspect:
        tables["analyses/suspect_items"] = pl.DataFrame(
            {"item_id": [f"item{k:05d}" for k in range(0, items, 1000)], "reason": "most strong models disagree"}
        )
    return ReleaseSummary(
        "synthetic",
        "v9.9",
        "A synthetic release of MMLU-Pro's size.",
        "CC0-1.0",
        CANARY,
        [(d, f"root / {d}") for d in DISCIPLINES],
        tables,
        0,
    )


def write_report(summary: ReleaseSummary, folder: Path, datasheet_md: str = "# Datasheet\n\nSynthetic.\n") -> Path:
    """report/ written into folder (with a datasheet.md beside it, as in a release); returns report/index.html."""
    (folder / "datasheet.md").write_text(datasheet_md)
    for name, data in report_files(summary, datasheet_md).items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder / "report" / "index.html"
