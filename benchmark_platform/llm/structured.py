"""Structured output: find a JSON object in a model's text and validate it against a pydantic schema.

The three tiers of OenoBench B.3, tried in order: (1) a markdown-fenced block (```json ... ```), (2) the whole text as
raw JSON, (3) a prefix pattern: the first '{' or '[' from which a JSON value decodes (text before and after ignored).
A text that no tier turns into a valid instance is an `ExtractionError`; callers record it as a failure and persist
nothing from it.
"""

from __future__ import annotations

import json
import re
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

T = TypeVar("T", bound=BaseModel)
Tier = Literal["fenced", "raw", "prefix"]

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)
_DECODER = json.JSONDecoder()


class ExtractionError(ValueError):
    """No tier yielded a value valid under the schema; `reasons` says what each tier met."""

    def __init__(self, reasons: list[str]) -> None:
        super().__init__("; ".join(reasons))
        self.reasons = reasons


def _candidates(text: str) -> list[tuple[Tier, str]]:
    out: list[tuple[Tier, str]] = [("fenced", m.group(1).strip()) for m in _FENCE.finditer(text)]
    out.append(("raw", text.strip()))
    return out


def _prefix_values(text: str) -> list[object]:
    """Every JSON object or array that decodes from some '{' or '[' of the text, in order of position."""
    values = []
    for m in re.finditer(r"[\[{]", text):
        try:
            values.append(_DECODER.raw_decode(text, m.start())[0])
        except json.JSONDecodeError:
            continue
    return values


def extract(text: str, schema: type[T]) -> tuple[T, Tier]:
    """The first tier whose JSON validates under `schema`, and which tier it was."""
    reasons: list[str] = []
    for tier, candidate in _candidates(text):
        try:
            return schema.model_validate_json(candidate), tier
        except ValidationError as e:
            reasons.append(f"{tier}: {e.errors()[0]['msg']}")
    values = _prefix_values(text)
    for value in values:
        try:
            return schema.model_validate(value), "prefix"
        except ValidationError as e:
            reasons.append(f"prefix: {e.errors()[0]['msg']}")
    if not values:
        reasons.append("prefix: no JSON object or array in the text")
    raise ExtractionError(reasons)
