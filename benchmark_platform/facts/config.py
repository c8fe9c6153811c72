"""Fact-extraction settings in a benchmark spec: validation bounds, discipline lexicons, structured-field templates."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class FactTemplate(BaseModel):
    """Turns one field of a structured record into a fact sentence, e.g. '{name} AVA lies in {state}.'"""

    model_config = ConfigDict(extra="forbid")

    source: str
    discipline: str
    field: str  # the record field the fact states; its value's span in the document anchors the fact
    subject_field: str  # the record field naming the entity the fact is about
    entity_type: str
    template: str  # str.format over the record's fields


class FactsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_words: int = 5
    max_words: int = 50
    full_confidence_max_words: int = 30  # 31-50 words are kept with reduced confidence (OenoBench B.1)
    reduced_confidence: float = 0.7
    # discipline -> anchor terms; a prose sentence goes to the discipline with most hits, ties are dropped
    lexicons: dict[str, list[str]] = Field(default_factory=dict)
    templates: list[FactTemplate] = Field(default_factory=list)
