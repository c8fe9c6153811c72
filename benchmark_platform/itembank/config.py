"""The item-bank section of a benchmark spec (a leaf: pydantic and the standard library only).

An item bank is one file of existing items (question, options, answer, category, source, optional licence,
explanation and metadata). `columns` names the file's columns; `categories` maps the file's categories to the spec's
taxonomy leaves (every category in the file must be mapped: an unmapped one is an error, never silently dropped).
`categories` may also be a table (`!include map.csv`: columns category, discipline, rationale): a row with an empty
discipline leaves that category's items out on purpose (`excluded`, counted by the import, never a partition's).
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator


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


class CategoryRow(BaseModel):
    """One row of a reviewable category table: where a file category goes, and why."""

    model_config = ConfigDict(extra="forbid")

    category: str = Field(min_length=1)
    discipline: str = ""  # a taxonomy leaf key; empty: no honest home, the category's items stay out
    rationale: str = Field(min_length=1)


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
    excluded: dict[str, str] = Field(default_factory=dict)  # file category -> why it has no home (left out)
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

    @model_validator(mode="before")
    @classmethod
    def _category_table(cls, data: object) -> object:
        """A table of CategoryRow -> `categories` (rows with a discipline) and `excluded` (rows without)."""
        if not isinstance(data, dict) or not isinstance(data.get("categories"), list):
            return data
        rows = [CategoryRow.model_validate(r) for r in data["categories"]]
        repeated = sorted({r.category for r in rows if [x.category for x in rows].count(r.category) > 1})
        if repeated:
            raise ValueError(f"categories: a category appears in more than one row: {repeated}")
        return {
            **data,
            "categories": {r.category: r.discipline for r in rows if r.discipline},
            "excluded": {**data.get("excluded", {}), **{r.category: r.rationale for r in rows if not r.discipline}},
        }


def bank_item_prefix(spec: str, bank_id: str) -> str:
    """What a bank item's id starts with, its upstream id following: `<bank id>-` in the spec named like the bank,
    else `<spec>.<bank id>-`, so two specs importing one bank file never share (and never move) an item row."""
    return f"{bank_id}-" if spec == bank_id else f"{spec}.{bank_id}-"
