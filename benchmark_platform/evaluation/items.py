"""The item an evaluator answers: a question, its options and the correct letter."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class EvalItem(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    item_id: str
    discipline: str
    question: str
    options: tuple[str, ...] = Field(min_length=2, max_length=len(LETTERS))
    answer: str = Field(min_length=1, max_length=1)

    @property
    def letters(self) -> str:
        return LETTERS[: len(self.options)]

    @model_validator(mode="after")
    def _answer_is_an_option(self) -> EvalItem:
        if self.answer not in self.letters:
            raise ValueError(f"item {self.item_id}: answer {self.answer!r} is not one of {self.letters}")
        return self
