"""The audit section of a benchmark spec: thresholds of every agent (OenoBench Tables 3-5), the judge panel, KINA's
rule screening (4.1, Table 2), calibration rubrics and the drop / relabel / disclose policy."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.facts.config import default_identifier_patterns


class RubricLink(BaseModel):
    """A human rubric an agent is calibrated against: the rating is a defect when it is below (`low`) or above
    (`high`) `cut` (gold sheets rate 0/1; the review app rates 1..5)."""

    model_config = ConfigDict(extra="forbid")
    rubric: str
    defect_if: Literal["low", "high"] = "low"
    cut: float = 0.5


def _default_rubrics() -> dict[str, list[RubricLink]]:
    low = RubricLink
    return {
        "structure": [low(rubric="answer_correct")],
        "A1_lexical_hygiene": [low(rubric="no_vague_language")],
        "A2_bias_stats": [low(rubric="distractors_plausible")],
        "A3_fact_echo": [RubricLink(rubric="verbatim_copy", defect_if="high"), low(rubric="source_faithful")],
        "B1_tri_judge_answer": [low(rubric="answer_correct"), low(rubric="factuality", cut=3)],
        "B2_closed_book_solvability": [low(rubric="needs_source")],
        "B3_ubiquity_risk": [low(rubric="not_ambiguous")],
        "B4_ambiguity": [low(rubric="not_ambiguous")],
        "B5_verifier_skip": [low(rubric="answer_correct")],
        "C1_distractor_difficulty": [low(rubric="distractors_plausible"), low(rubric="distractor_plausibility", cut=3)],
        "C2_category_leak": [
            RubricLink(rubric="wine_category_leak", defect_if="high"),
            low(rubric="distractors_plausible"),
        ],
        "C3_source_swap": [low(rubric="answer_correct")],
        "C4_difficulty_audit": [low(rubric="difficulty_match")],
        # no gold sheet rates salience yet: until one does (the review app's rubric), S1's kappa is undefined and it
        # stays critical, like every agent without a rating to disagree with
        "S1_salience": [low(rubric="salient")],
        "K4_judge_consensus": [low(rubric="representativeness", cut=3)],
    }


class KinaScreening(BaseModel):
    """KINA 4.1 stage 1 (rule-based screening) and stage 3 (three-judge consensus), plus the refinement loop."""

    model_config = ConfigDict(extra="forbid")
    uniqueness_cosine: float = 0.8  # an item at or above this cosine to another pool item is not unique
    flagships: list[str] = Field(default_factory=list)  # evaluation model names (evaluated or imported)
    min_flagships_wrong: int = 3  # of the flagships that answered
    min_flagships_answered: int = 5
    # a flagship with no recorded answer to an item counts as not answering it correctly (a bank whose recorded
    # answers have gaps: "drop what three of five flagships answer correctly"); off: the item is only warned
    unanswered_counts_wrong: bool = False
    flagship_rule: str = ""  # how the flagships were chosen, stated in the release's datasheet
    consensus_admit: int = 2  # judges (of the panel) that must vote to admit
    refinement: bool = False  # the two-agent diagnosis / revision loop on items the consensus returns
    refinement_model: str | None = None  # default: the first judge


class AuditConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # A. static
    fact_echo_fail: float = 0.65  # A3: longest-common-substring ratio at which a question copies its fact
    vague_terms: list[str] = Field(
        default_factory=lambda: [
            "some",
            "various",
            "many",
            "often",
            "generally",
            "typically",
            "arguably",
            "best",
            "famous",
            "world-class",
            "which of the following is true",
            "according to the text",
            "the passage",
        ]
    )
    # A1: phrases that contain a vague word but ask something precise: a count, an amount, the option that fits best
    precise_phrases: list[str] = Field(
        default_factory=lambda: [
            "how many",
            "how much",
            "how often",
            "best describes",
            "best explains",
            "best characterizes",
            "best summarizes",
            "best completes",
            "best expresses",
            "best represents",
            "best identifies",
            "best reflects",
            "best fits",
        ]
    )
    bias_alpha: float = 0.05  # A2 / D3: significance of chi-square and Mann-Whitney tests
    template_warn: float = 0.9  # A4: out-of-fold probability of template style at which an item warns
    human_reference: Path | None = None  # A4 negatives: JSONL with a "stem" per line; default: the corpus' LLM items
    # B. judges
    judges: list[str] = Field(default_factory=list)  # names in the spec's `models`; empty: LLM agents skip
    difficulty_judge: str | None = None  # C4; default the first judge
    international_grapes: list[str] = Field(
        default_factory=lambda: [
            "cabernet sauvignon",
            "merlot",
            "chardonnay",
            "pinot noir",
            "sauvignon blanc",
            "syrah",
            "shiraz",
            "riesling",
            "grenache",
            "garnacha",
            "tempranillo",
            "malbec",
            "pinot gris",
            "pinot grigio",
            "zinfandel",
            "chenin blanc",
            "semillon",
            "sémillon",
            "cabernet franc",
            "viognier",
            "gewurztraminer",
            "gewürztraminer",
            "muscat",
        ]
    )
    b1_dissent_escalate: float = 0.10  # B4 runs when the share of non-unanimous B1 verdicts exceeds this
    # C. deterministic
    category_terms: dict[str, list[str]] = Field(
        default_factory=lambda: {
            "sparkling": [
                "sparkling",
                "champagne",
                "cava",
                "prosecco",
                "crémant",
                "cremant",
                "franciacorta",
                "sekt",
                "spumante",
                "méthode traditionnelle",
                "traditional method",
            ],
            "fortified": ["fortified", "port", "sherry", "madeira", "marsala", "vin doux naturel"],
            "red": [
                "red wine",
                "cabernet sauvignon",
                "merlot",
                "pinot noir",
                "syrah",
                "shiraz",
                "malbec",
                "nebbiolo",
                "sangiovese",
                "tempranillo",
                "grenache",
                "zinfandel",
                "gamay",
                "barolo",
                "rioja",
            ],
            "white": [
                "white wine",
                "chardonnay",
                "sauvignon blanc",
                "riesling",
                "chenin blanc",
                "pinot grigio",
                "pinot gris",
                "viognier",
                "albariño",
                "gewürztraminer",
                "semillon",
                "chablis",
            ],
            "rosé": ["rosé", "rose wine", "rosado", "rosato"],
        }
    )
    # S1: an answer (or a stem) that is an identifier can only be memorised: reason -> regular expression
    identifier_patterns: dict[str, str] = Field(default_factory=default_identifier_patterns)
    distractor_cosine_fail: float = 0.95  # C1: a distractor this close to the key is a second defensible answer
    distractor_cosine_easy: float = 0.15  # C1: every distractor this far from the key makes the item trivial
    difficulty_fail_delta: int = 2  # C4: |judged tier - assigned tier| at which the item is relabelled
    # D. corpus statistics
    dedup_cosine: float = 0.92  # D2
    self_preference_warn_pp: float = 5.0  # D1: own-vs-other accuracy gap (percentage points)
    kina: KinaScreening | None = None  # KINA rule screening + consensus (None: not a KINA-style benchmark)
    # policy and calibration
    critical: list[str] = Field(
        default_factory=lambda: [
            "structure",
            "A1_lexical_hygiene",
            "A3_fact_echo",
            "B1_tri_judge_answer",
            "B3_ubiquity_risk",
            "C2_category_leak",
            "S1_salience",
            "G1_grounding",
            "D2_dedup_calibration",
            "K1_uniqueness",
            "K2_formatting",
            "K3_flagship_difficulty",
            "K4_judge_consensus",
        ]
    )
    kappa_advisory_below: float = 0.6  # an agent whose kappa on its primary rubric is lower only advises
    bootstrap_samples: int = 1000
    rubrics: dict[str, list[RubricLink]] = Field(default_factory=_default_rubrics)
    gold_sheets: list[str] = Field(default_factory=list)  # gold-label sheets used for calibration; empty: all

    @model_validator(mode="after")
    def _thresholds(self) -> AuditConfig:
        for name in ("fact_echo_fail", "template_warn", "dedup_cosine", "distractor_cosine_fail"):
            if not 0 < getattr(self, name) <= 1:
                raise ValueError(f"audit.{name} must be in (0, 1], got {getattr(self, name)}")
        if self.difficulty_fail_delta < 1:
            raise ValueError("audit.difficulty_fail_delta must be >= 1")
        return self
