"""Generation settings in a benchmark spec (OenoBench 3.4, B.3, B.4; KINA 4, E.2).

Five strategies with per-strategy quotas; LLM generators (model config names) with a hard per-generator cap and
shares adapted to their audit pass rates; difficulty tiers L1-L4 and a cognitive dimension; deterministic templates;
KINA's 10-option pseudo-MCQ; the closed-book gate with its corpus cap.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, PositiveInt, field_validator, model_validator

Strategy = Literal["fact_to_question", "distractor_mining", "template", "scenario", "comparative"]
STRATEGIES: tuple[Strategy, ...] = ("fact_to_question", "distractor_mining", "template", "scenario", "comparative")
# strategies that run without any model: templates, and distractor mining rendered as a cloze over the fact
DETERMINISTIC_STRATEGIES: tuple[Strategy, ...] = ("template", "distractor_mining")
DETERMINISTIC = "deterministic"  # the generator name recorded for items made without a model

Difficulty = Literal["L1", "L2", "L3", "L4"]
DIFFICULTIES: tuple[Difficulty, ...] = ("L1", "L2", "L3", "L4")
Cognitive = Literal["recall", "comprehension", "application", "analysis", "synthesis"]


def _shares_sum_to_one(shares: dict[str, float], what: str) -> dict[str, float]:
    if any(v < 0 for v in shares.values()) or abs(sum(shares.values()) - 1.0) > 1e-6:
        raise ValueError(f"{what} must be non-negative and sum to 1, got {shares}")
    return shares


class QuestionTemplate(BaseModel):
    """A parameterised question about one structured-fact field (pure entity substitution, no LLM).

    `ask`: 'value' -- the answer is the fact's value, distractors other entities' values of the field;
    'subject' -- the answer is the fact's entity, distractors entities with a different value;
    'negative' -- which entity does NOT have the value: the answer is an entity with another value, distractors
    three entities sharing the fact's value;
    'highest' / 'lowest' -- a comparison across entities: the answer is the fact's entity, distractors entities whose
    (single, numeric) value of the field is lower / higher;
    'true_statement' / 'false_statement' -- which of four statements about the fact's subject is true (false): each
    one of the subject's facts of `field` or `fields`, or such a fact with another value of its field that its own
    facts of that field rule out (templates.statement_item).
    """

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    discipline: str  # the pillar the template is written for (a taxonomy leaf)
    field: str  # the fact field (attributes.field) it applies to, in any partition
    entity_type: str | None = None  # restricts it to facts about entities of this type
    values: list[str] = Field(default_factory=list)  # restricts it to facts with one of these values (empty: any)
    ask: Literal["value", "subject", "negative", "highest", "lowest", "true_statement", "false_statement"]
    fields: list[str] = Field(default_factory=list)  # statement asks: further fields whose facts are statements
    question: str  # str.format over {subject} and {value}
    explanation: str  # str.format over {subject}, {value} and {answer}
    difficulty: Difficulty = "L1"
    cognitive: Cognitive = "recall"
    # 'highest' / 'lowest' only: the key's value must be at least `min_ratio` times every other option's (lowest:
    # at most 1/min_ratio), and at least `min_share_of_largest` of the field's largest value (no contest between
    # tiny values); compared exactly on the values' decimal digits
    min_ratio: float | None = Field(default=None, ge=1.0)
    min_share_of_largest: float | None = Field(default=None, ge=0.0, le=1.0)


class PseudoMcqConfig(BaseModel):
    """KINA's pseudo-MCQ: a stem of statements, 10 options each a combination of them (KINA 4, E.2.3, E.3.4)."""

    model_config = ConfigDict(extra="forbid")

    share_of_templates: float = Field(default=0.2, ge=0.0, le=1.0)  # template slots rendered in this format
    # scenario slots a generator writes in this format (with generators configured; see plan.py for why scenario)
    share_of_scenarios: float = Field(default=0.2, ge=0.0, le=1.0)
    statements: int = Field(default=6, ge=6)
    true_statements: PositiveInt = 3
    options: Literal[10] = 10
    max_size_spread: int = Field(default=2, ge=0)  # largest minus smallest option size ("balanced sizes")

    @model_validator(mode="after")
    def _enough_combinations(self) -> PseudoMcqConfig:
        from math import comb

        if not 0 < self.true_statements < self.statements:
            raise ValueError("true_statements must be between 1 and statements - 1")
        if comb(self.statements, self.true_statements) < self.options:
            raise ValueError(f"C({self.statements}, {self.true_statements}) < {self.options}: too few combinations")
        return self


class GateConfig(BaseModel):
    """Closed-book gate (OenoBench B.4): a model per difficulty answers without the facts; L4 is skipped."""

    model_config = ConfigDict(extra="forbid")

    models: dict[Literal["L1", "L2", "L3"], str] = Field(default_factory=dict)  # tier -> model config name
    max_solvable_share: float = Field(default=0.5, ge=0.0, le=1.0)  # corpus cap; the excess goes to the reserve


class GenerationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    options_per_item: int = Field(default=4, ge=2)
    items_per_discipline: PositiveInt | None = None  # default: one per selected fact
    # OenoBench 3.4's realised strategy mix (pydantic copies a mutable default for every instance)
    strategy_shares: dict[Strategy, float] = {
        "fact_to_question": 0.584,
        "distractor_mining": 0.124,
        "template": 0.119,
        "scenario": 0.098,
        "comparative": 0.075,
    }
    generators: list[str] = Field(default_factory=list)  # model config names; empty: deterministic strategies only
    generator_cap: float = Field(default=0.21, gt=0.0, le=1.0)  # hard per-generator share of a discipline's items
    # of LLM-written items (templates state their own)
    difficulty_shares: dict[Difficulty, float] = {"L1": 0.3, "L2": 0.3, "L3": 0.25, "L4": 0.15}
    cognitive: dict[Strategy, Cognitive] = {
        "fact_to_question": "recall",
        "distractor_mining": "comprehension",
        "template": "recall",
        "scenario": "application",
        "comparative": "analysis",
    }
    scenario_types: dict[str, list[str]] = Field(default_factory=dict)  # discipline -> professional decisions
    default_scenario_types: list[str] = Field(default_factory=lambda: ["a professional decision in the field"])
    pseudo_mcq: PseudoMcqConfig = Field(default_factory=PseudoMcqConfig)
    gate: GateConfig = Field(default_factory=GateConfig)
    templates: list[QuestionTemplate] = Field(default_factory=list)

    @field_validator("strategy_shares")
    @classmethod
    def _strategy_shares(cls, v: dict[str, float]) -> dict[str, float]:
        return _shares_sum_to_one(v, "generation.strategy_shares")

    @field_validator("difficulty_shares")
    @classmethod
    def _difficulty_shares(cls, v: dict[str, float]) -> dict[str, float]:
        return _shares_sum_to_one(v, "generation.difficulty_shares")

    @field_validator("cognitive")
    @classmethod
    def _every_strategy_has_a_dimension(cls, v: dict[str, str]) -> dict[str, str]:
        missing = [s for s in STRATEGIES if s not in v]
        if missing:
            raise ValueError(f"generation.cognitive: no cognitive dimension for {missing}")
        return v

    @field_validator("templates")
    @classmethod
    def _unique_templates(cls, v: list[QuestionTemplate]) -> list[QuestionTemplate]:
        ids = [t.id for t in v]
        if len(set(ids)) != len(ids):
            raise ValueError(f"generation.templates: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
        return v

    @model_validator(mode="after")
    def _generators(self) -> GenerationConfig:
        if len(set(self.generators)) != len(self.generators):
            raise ValueError("generation.generators: a model is listed twice")
        if DETERMINISTIC in self.generators:
            raise ValueError(f"generation.generators: {DETERMINISTIC!r} is reserved for items made without a model")
        return self

    def scenario_types_for(self, discipline: str) -> list[str]:
        return self.scenario_types.get(discipline) or self.default_scenario_types
