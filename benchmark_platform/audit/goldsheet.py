"""The stratified gold sheet (OenoBench 4.2): N items drawn across discipline x strategy x difficulty, written as the
CSV that `audit import-gold` reads back once raters have filled in the rubric columns.

Allocation is proportional with largest remainders in integer arithmetic (no float decides a count); within a
stratum the items are drawn by a seeded shuffle of their sorted ids, so the same seed gives the same sheet.
"""

from __future__ import annotations

import csv
import json
import random
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmark_platform.audit.agents import LETTERS
from benchmark_platform.audit.calibration import SHEET_RUBRICS
from benchmark_platform.audit.config import AuditConfig

IDENTITY_COLUMNS = (
    "item_id",
    "discipline",
    "strategy",
    "difficulty",
    "generator",
    "question_text",
    "options",
    "correct_answer",
    "source_facts",
    "reviewer",
)


@dataclass(frozen=True)
class GoldCandidate:
    item_id: str
    discipline: str
    strategy: str | None
    difficulty: str | None
    generator: str | None
    question: str
    options: tuple[str, ...]
    answer_index: int
    facts: tuple[str, ...]

    @property
    def stratum(self) -> tuple[str, str, str]:
        return (self.discipline, self.strategy or "", self.difficulty or "")


def allocate(sizes: dict[tuple[str, str, str], int], n: int) -> dict[tuple[str, str, str], int]:
    """Items per stratum: proportional to its size, largest remainders first (ties by stratum), never above it."""
    total = sum(sizes.values())
    if n >= total:
        return dict(sizes)
    quota = {s: n * size // total for s, size in sizes.items()}
    left = n - sum(quota.values())
    by_remainder = sorted(sizes, key=lambda s: (-(n * sizes[s] % total), s))
    for s in by_remainder[:left]:
        quota[s] += 1
    return quota


def stratified_sample(candidates: Sequence[GoldCandidate], n: int, seed: int) -> list[GoldCandidate]:
    """n candidates (all if fewer) stratified by discipline x strategy x difficulty, sorted by stratum then id."""
    if n < 1:
        raise ValueError(f"a gold sheet needs at least one item, got --n {n}")
    strata: dict[tuple[str, str, str], list[GoldCandidate]] = defaultdict(list)
    for c in sorted(candidates, key=lambda c: c.item_id):
        strata[c.stratum].append(c)
    quota = allocate({s: len(items) for s, items in strata.items()}, n)
    chosen = []
    for s in sorted(strata):
        pool = list(strata[s])
        random.Random(f"{seed}|{'|'.join(s)}").shuffle(pool)
        chosen += sorted(pool[: quota[s]], key=lambda c: c.item_id)
    return chosen


def sheet_rubrics(config: AuditConfig) -> list[str]:
    """The rubric columns the spec's calibration reads from a gold sheet: the rubrics its agents are linked to that a
    sheet can carry, in the sheet's order."""
    linked = {link.rubric for links in config.rubrics.values() for link in links}
    return [r for r in SHEET_RUBRICS if r in linked]


def write_gold_sheet(path: Path, items: Sequence[GoldCandidate], rubrics: Sequence[str]) -> None:
    """The sheet as UTF-8 CSV: identity columns, then one blank column per rubric for the raters."""
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([*IDENTITY_COLUMNS, *rubrics])
        for c in items:
            writer.writerow(
                [
                    c.item_id,
                    c.discipline,
                    c.strategy or "",
                    c.difficulty or "",
                    c.generator or "",
                    c.question,
                    json.dumps(list(c.options), ensure_ascii=False),
                    LETTERS[c.answer_index],
                    " ".join(f"[{n}] {fact}" for n, fact in enumerate(c.facts, 1)),
                    "",
                    *([""] * len(rubrics)),
                ]
            )
