"""The rubric sets reviewers score (KINA's six 1-5 rubrics, OenoBench's eight pass / warn / fail) and S_i.

A reviewer scores an item on each rubric of the spec's set that applies to the item's format. The principal's
validation (or the audit stage's adjudicated verdict) gives a reference score per rubric; a review is as good as its
per-rubric agreement with that reference. The validated score S_i is the weighted sum of these agreements over the
rubrics both scored, normalised by the weights, so S_i lies in [0, 1] and is monotone in review quality (Assumption 2
of KINA Appendix C): two lazy reviewers who wave a flawed item through both score low and neither clears tau.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from pydantic import BaseModel, ConfigDict

from benchmark_platform.review.config import RUBRIC_KEYS, ReviewPolicy, RubricSetName

ALL_FORMATS: Final[frozenset[str]] = frozenset({"mcq4", "pseudo_mcq10"})
FORMAT_NAMES: Final[dict[str, str]] = {"mcq4": "4-option items", "pseudo_mcq10": "10-option pseudo-MCQs"}


class Rubric(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    key: str
    title: str
    question: str  # what the reviewer checks, in one sentence
    guidance: dict[int, str]  # score -> what it means for this rubric
    formats: frozenset[str] = ALL_FORMATS  # item formats the rubric fits; elsewhere it is "not applicable"

    def applies_to(self, item_format: str) -> bool:
        return item_format in self.formats


class RubricSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    title: str
    scale: dict[int, str]  # score -> its label, worst first
    rubrics: tuple[Rubric, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(r.key for r in self.rubrics)

    @property
    def span(self) -> int:
        return max(self.scale) - min(self.scale)

    def applicable(self, item_format: str) -> tuple[Rubric, ...]:
        return tuple(r for r in self.rubrics if r.applies_to(item_format))

    def check_scores(self, scores: Mapping[str, object], item_format: str | None, where: str) -> dict[str, int]:
        """The scores as a dict if they rate exactly the rubrics that apply, each on the scale; else a plain error."""
        titles = {r.key: r.title for r in self.rubrics}
        where = f"{where}: " if where else ""
        expected = {r.key for r in (self.applicable(item_format) if item_format else self.rubrics)}
        unknown = sorted(set(scores) - set(titles))
        if unknown:
            raise ValueError(f"{where}{', '.join(unknown)} is not a rubric of {self.title}")
        missing = [titles[k] for k in self.keys if k in expected and k not in scores]
        if missing:
            raise ValueError(f"{where}please score {', '.join(missing)}")
        extra = [titles[k] for k in self.keys if k in scores and k not in expected]
        if extra:
            raise ValueError(f"{where}{', '.join(extra)} does not apply to this item's format")
        labels = ", ".join(f"{v} ({label})" for v, label in self.scale.items())
        for key, value in scores.items():
            if isinstance(value, bool) or not isinstance(value, int) or value not in self.scale:
                raise ValueError(f"{where}{titles[key]} must be one of {labels}, got {value!r}")
        return {k: int(v) for k, v in scores.items()}  # type: ignore[call-overload]


_FIVE = {1: "fails", 2: "serious problems", 3: "acceptable with fixes", 4: "minor issues", 5: "fully satisfies"}
KINA6 = RubricSet(
    name="kina6",
    title="KINA's six rubrics (1-5)",
    scale=_FIVE,
    rubrics=(
        Rubric(
            key="representativeness_depth",
            title="Representativeness and depth",
            question="Would this item be one of the 3 to 5 questions you would use to test the whole discipline?",
            guidance={
                1: "trivia or rote memory; outside the declared discipline",
                3: "on topic but peripheral, or recall rather than reasoning",
                5: "a core concept of the discipline, tested by reasoning rather than recall",
            },
        ),
        Rubric(
            key="factuality",
            title="Factuality",
            question="Is every statement, the keyed answer and the explanation true by established consensus?",
            guidance={
                1: "the keyed answer or a stated fact is wrong",
                3: "true, but a statement is imprecise or dated",
                5: "every statement and the key are correct",
            },
        ),
        Rubric(
            key="source_reliability",
            title="Source reliability",
            question="Is every claim traceable to the authoritative source shown, and does the source support it?",
            guidance={
                1: "no source, or the source contradicts the item",
                3: "sourced, but part of a claim is not in the source",
                5: "every claim is in an authoritative source",
            },
        ),
        Rubric(
            key="logical_rigor",
            title="Logical rigor",
            question="Is exactly one option defensible, with no ambiguity in the stem or the options?",
            guidance={
                1: "two options are defensible, or the stem is ambiguous",
                3: "one answer, but the wording needs tightening",
                5: "one unambiguous answer; the explanation shows why",
            },
        ),
        Rubric(
            key="distractor_plausibility",
            title="Distractor plausibility",
            question="Would a non-expert find each wrong option tempting, without any of them being right?",
            guidance={
                1: "wrong options are absurd or give the answer away",
                3: "some distractors are weak",
                5: "every distractor is plausible and clearly wrong",
            },
        ),
        Rubric(
            key="combinatorial_validity",
            title="Combinatorial validity",
            question="Does the stem state at least 6 statements, with no option a subset of another (KINA E.3.4)?",
            guidance={
                1: "fewer than 6 statements, or subset relations leak the answer",
                3: "6 or more statements, but an option pair overlaps",
                5: "6 or more statements; options mutually exclusive",
            },
            formats=frozenset({"pseudo_mcq10"}),
        ),
    ),
)

_PWF = {0: "fail", 1: "warn", 2: "pass"}
OENOBENCH8 = RubricSet(
    name="oenobench8",
    title="OenoBench's eight rubrics (pass / warn / fail)",
    scale=_PWF,
    rubrics=(
        Rubric(
            key="answer_correctness",
            title="Answer correctness",
            question="Is the marked answer correct?",
            guidance={0: "the key is wrong", 1: "correct only under one reading", 2: "the key is correct"},
        ),
        Rubric(
            key="distractor_plausibility",
            title="Distractor plausibility",
            question="Are the wrong options plausible to someone who does not know the answer?",
            guidance={0: "obviously wrong options", 1: "one weak distractor", 2: "all plausible"},
        ),
        Rubric(
            key="ambiguity",
            title="Ambiguity",
            question="Is exactly one option defensible?",
            guidance={0: "two or more defensible answers", 1: "defensible but loosely worded", 2: "unambiguous"},
        ),
        Rubric(
            key="source_faithfulness",
            title="Source faithfulness",
            question="Does the source fact support the question and its key, without distortion?",
            guidance={0: "contradicts or is absent from the source", 1: "partly supported", 2: "fully supported"},
        ),
        Rubric(
            key="needs_source",
            title="Needs source",
            question="Does answering require knowledge in the source rather than general world knowledge?",
            guidance={0: "answerable by anyone from the stem", 1: "common knowledge for a wine student", 2: "needs it"},
        ),
        Rubric(
            key="vague_language",
            title="Vague language",
            question="Is the wording free of vague or marketing language ('renowned', 'often', 'some say')?",
            guidance={0: "vague words decide the answer", 1: "a vague word, harmless", 2: "precise wording"},
        ),
        Rubric(
            key="label_correctness",
            title="Label correctness",
            question="Are the item's difficulty level and domain labels right (WSET Level 1-4 scale)?",
            guidance={0: "wrong by two levels or wrong domain", 1: "off by one level", 2: "labels are right"},
        ),
        Rubric(
            key="verbatim_copying",
            title="Verbatim copying",
            question="Is the stem paraphrased rather than copied from the source?",
            guidance={0: "copied verbatim", 1: "long copied phrases", 2: "paraphrased"},
        ),
    ),
)

RUBRIC_SETS: Final[dict[str, RubricSet]] = {s.name: s for s in (KINA6, OENOBENCH8)}
assert all(RUBRIC_SETS[name].keys == keys for name, keys in RUBRIC_KEYS.items()), "config and rubric sets disagree"

# KINA's set stays the default that the simulated round and older callers use
RUBRICS: Final[tuple[str, ...]] = KINA6.keys
SCORE_MIN: Final[int] = min(KINA6.scale)
SCORE_MAX: Final[int] = max(KINA6.scale)


def rubric_set(name: RubricSetName | str) -> RubricSet:
    return RUBRIC_SETS[name]


def check_rubric_scores(
    scores: Mapping[str, object], where: str, set_name: str = "kina6", item_format: str | None = None
) -> dict[str, int]:
    """``scores`` validated against the named set (only the rubrics that fit ``item_format``, when given)."""
    return RUBRIC_SETS[set_name].check_scores(scores, item_format, where)


def validated_score(review: Mapping[str, int], reference: Mapping[str, int], policy: ReviewPolicy) -> float:
    """S_i = sum_k w_k (1 - |r_ik - r*_k| / span) / sum_k w_k over the rubrics both the review and reference scored."""
    span = RUBRIC_SETS[policy.rubric_set].span
    shared = [k for k in RUBRIC_SETS[policy.rubric_set].keys if k in review and k in reference]
    total = sum(policy.weight(k) for k in shared)
    if total <= 0:
        raise ValueError("the review and its reference share no weighted rubric")
    agreement = sum(policy.weight(k) * (1.0 - abs(review[k] - reference[k]) / span) for k in shared)
    return agreement / total
