"""Generation settings in a benchmark spec: deterministic question templates over structured facts."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class QuestionTemplate(BaseModel):
    """A parameterised question about one fact field; distractors are the same field's values for other entities."""

    model_config = ConfigDict(extra="forbid")

    id: str
    discipline: str
    field: str  # the fact field the question is about
    # 'value': the answer is this fact's value, distractors other entities' values of the field;
    # 'subject': the answer is this fact's entity, distractors entities with a different value
    ask: Literal["value", "subject"]
    question: str  # str.format over {subject} and {value}, e.g. 'In which state is the {subject} AVA?'
    explanation: str  # str.format over {subject}, {value} and {answer}
    difficulty: str = "L1"


class GenerationConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    options_per_item: int = 4
    templates: list[QuestionTemplate] = Field(default_factory=list)
