"""The item-bank section of a benchmark spec (a leaf: pydantic and the standard library only).

An item bank is one file of existing items (question, options, answer, category, source, optional licence,
explanation and metadata). `columns` names the file's columns; `categories` maps the file's categories to the spec's
taxonomy leaves (every category in the file must be mapped: an unmapped one is an error, never silently dropped).
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class BankColumns(BaseModel):
    """Column names in the bank file; `None` for an optional column the file does not have."""

    model_config = ConfigDict(extra="forbid")

    id: str = "id"  # the upstream id, unique in the file
    question: str = "question"
    options: str = "options"  # a list of option texts (CSV: a JSON array in one cell)
    answer: str = "answer"  # the key: a letter (A, B, ...) or a 0-based index, see `answer_format`
    category: str = "category"
    source: str | None = "source"  # where the item came from upstream (e.g. MMLU-Pro's `src`)
    licence: str | None = None  # per-row licence; default the bank's `licence`
    explanation: str | None = None
    metadata: str | None = None  # a mapping (CSV: a JSON object) kept with the row's provenance
    difficulty: str | None = None  # the author's difficulty label (any text), released as the item's difficulty
    # further plain columns kept with the row's provenance (released in data/item_provenance's `metadata`)
    keep: list[str] = Field(default_factory=list)


class ItemBankConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")  # prefixes item ids: `<id>-<upstream id>`
    path: Path  # relative to the spec's directory
    format: Literal["jsonl", "csv", "parquet"] | None = None  # default: from the file's suffix
    licence: str
    attribution: str  # who made the items and where they were published
    columns: BankColumns = Field(default_factory=BankColumns)
    answer_format: Literal["letter", "index"] = "letter"
    # the text encoding of a JSONL or CSV bank (a Python codec name: utf-8, cp1252, latin-1, ...); a file that does
    # not decode cleanly in it is refused with the first bad byte's line, never read as mojibake
    encoding: str = "utf-8"
    categories: dict[str, str] = Field(min_length=1)  # file category -> taxonomy leaf key
    # the candidate stratum key the anchors' stratum map h sees: the category, the source, or the source's family
    # (the text before the first '-', e.g. MMLU-Pro's 'ori_mmlu' for 'ori_mmlu-high_school_biology')
    stratum_key: Literal["category", "source", "source_family"] = "source_family"

    @field_validator("encoding")
    @classmethod
    def _known_encoding(cls, name: str) -> str:
        try:
            return codecs.lookup(name).name
        except LookupError:
            raise ValueError(f"unknown text encoding {name!r} (e.g. utf-8, cp1252, latin-1)") from None


def bank_item_prefix(spec: str, bank_id: str) -> str:
    """What a bank item's id starts with, its upstream id following: `<bank id>-` in the spec named like the bank,
    else `<spec>.<bank id>-`, so two specs importing one bank file never share (and never move) an item row."""
    return f"{bank_id}-" if spec == bank_id else f"{spec}.{bank_id}-"
