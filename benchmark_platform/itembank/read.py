"""Read and validate a whole item-bank file before anything is written.

Every problem stops the import with one `ItemBankError` naming the file, the row (JSONL/CSV: the 1-based line;
Parquet: the 1-based record) and the field; a valid file gives one `BankItem` per row with its provenance.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark_platform.itembank.config import ItemBankConfig

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class ItemBankError(ValueError):
    """Bad item-bank input: `path`, `row` (0 when the file as a whole is wrong) and `field` locate it."""

    def __init__(self, path: Path, row: int, field_name: str | None, message: str) -> None:
        self.path, self.row, self.field, self.message = path, row, field_name, message
        where = f"{path}:{row}" if row else str(path)
        super().__init__(f"{where}: {f'field {field_name!r}: ' if field_name else ''}{message}")


@dataclass(frozen=True)
class BankItem:
    item_id: str  # `<bank id>-<upstream id>`: stable across re-imports
    upstream_id: str
    row: int
    discipline: str  # the taxonomy leaf the category maps to
    category: str
    question: str
    options: tuple[str, ...]
    answer_index: int
    source: str
    licence: str
    explanation: str
    stratum_key: str
    metadata: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class BankFile:
    path: Path
    sha256: str
    items: tuple[BankItem, ...]
    # rows of categories the spec leaves out on purpose (item_bank.excluded): upstream id -> category
    excluded: Mapping[str, str] = field(default_factory=dict)

    def for_discipline(self, discipline: str) -> list[BankItem]:
        return [item for item in self.items if item.discipline == discipline]

    def item_ids(self, bank_id: str) -> set[str]:
        """Every row's item id, also of rows left out on purpose: answers to those are not answers to unknown items."""
        return {item.item_id for item in self.items} | {f"{bank_id}-{upstream}" for upstream in self.excluded}


def bank_path(config: ItemBankConfig, base_dir: Path) -> Path:
    return config.path if config.path.is_absolute() else base_dir / config.path


def _format(config: ItemBankConfig, path: Path) -> str:
    if config.format:
        return config.format
    suffix = path.suffix.lower().lstrip(".")
    if suffix in {"jsonl", "csv", "parquet"}:
        return suffix
    raise ItemBankError(path, 0, None, "unknown format: name the file .jsonl, .csv or .parquet, or set `format`")


def _decode(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ItemBankError(
            path, line, None, f"not UTF-8 (byte {data[exc.start]:#04x} at offset {exc.start})"
        ) from None


def _jsonl_rows(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    # split on newlines only: questions may contain U+0085 or U+2028, which str.splitlines would cut
    for line_no, line in enumerate(_decode(path, data).split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ItemBankError(path, line_no, None, f"invalid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ItemBankError(path, line_no, None, f"expected a JSON object, got {type(record).__name__}")
        yield line_no, record


def _csv_rows(path: Path, data: bytes, json_columns: set[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(io.StringIO(_decode(path, data), newline=""))
    if not reader.fieldnames:
        raise ItemBankError(path, 1, None, "missing header row")
    start = reader.line_num + 1  # a record may span lines (quoted newlines): its row is the line it starts on
    for record in reader:
        row_start, start = start, reader.line_num + 1
        if None in record:
            raise ItemBankError(path, row_start, None, "more fields than the header names")
        row = dict(record)
        for column in json_columns & row.keys():
            if row[column] in (None, ""):
                row[column] = None
                continue
            try:
                row[column] = json.loads(row[column])
            except json.JSONDecodeError as exc:
                raise ItemBankError(path, row_start, column, f"not a JSON value ({exc.msg})") from None
        yield row_start, row


def _parquet_rows(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    import polars as pl

    try:
        frame = pl.read_parquet(io.BytesIO(data))
    except Exception as exc:
        raise ItemBankError(path, 0, None, f"not a readable Parquet file ({exc})") from None
    yield from enumerate(frame.iter_rows(named=True), 1)


def _text(path: Path, row: int, name: str, value: Any, *, required: bool = True) -> str:
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ItemBankError(path, row, name, "empty")
        return ""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if not isinstance(value, str):
        raise ItemBankError(path, row, name, f"expected text, got {type(value).__name__}")
    return value


def _family(source: str) -> str:
    return source.split("-", 1)[0]


def read_item_bank(config: ItemBankConfig, base_dir: Path) -> BankFile:
    """The whole bank, validated: required columns, non-empty texts, >= 2 distinct-position options, an answer inside
    the options, a mapped category and unique ids. Raises ItemBankError at the first problem."""
    path = bank_path(config, base_dir)
    if not path.is_file():
        raise ItemBankError(path, 0, None, "no such file")
    data = path.read_bytes()
    kind = _format(config, path)
    cols = config.columns
    json_columns = {cols.options, *([cols.metadata] if cols.metadata else [])}
    rows = (
        _jsonl_rows(path, data)
        if kind == "jsonl"
        else _csv_rows(path, data, json_columns)
        if kind == "csv"
        else _parquet_rows(path, data)
    )
    required = [cols.id, cols.question, cols.options, cols.answer, cols.category]
    optional = [c for c in (cols.source, cols.licence, cols.explanation, cols.metadata) if c]
    seen: dict[str, int] = {}
    items: list[BankItem] = []
    excluded: dict[str, str] = {}
    for row, record in rows:
        for name in required + optional:
            if name not in record:
                raise ItemBankError(path, row, name, "missing column")
        upstream = _text(path, row, cols.id, record[cols.id])
        if upstream in seen:
            raise ItemBankError(path, row, cols.id, f"duplicate id {upstream!r} (first at row {seen[upstream]})")
        seen[upstream] = row
        question = _text(path, row, cols.question, record[cols.question])
        options = record[cols.options]
        if not isinstance(options, (list, tuple)) or len(options) < 2:
            raise ItemBankError(path, row, cols.options, "expected a list of at least two option texts")
        if len(options) > len(LETTERS):
            raise ItemBankError(path, row, cols.options, f"{len(options)} options, more than {len(LETTERS)}")
        options = tuple(_text(path, row, f"{cols.options}[{i}]", o) for i, o in enumerate(options))
        answer = record[cols.answer]
        if config.answer_format == "letter":
            if not isinstance(answer, str) or answer.strip().upper() not in LETTERS[: len(options)]:
                raise ItemBankError(
                    path, row, cols.answer, f"{answer!r} is not one of the option letters A-{LETTERS[len(options) - 1]}"
                )
            answer_index = LETTERS.index(answer.strip().upper())
        else:
            try:
                answer_index = int(answer)
            except (TypeError, ValueError):
                raise ItemBankError(path, row, cols.answer, f"{answer!r} is not an option index") from None
            if not 0 <= answer_index < len(options):
                raise ItemBankError(path, row, cols.answer, f"index {answer_index} outside 0..{len(options) - 1}")
        category = _text(path, row, cols.category, record[cols.category])
        if category in config.excluded:
            excluded[upstream] = category
            continue
        if category not in config.categories:
            raise ItemBankError(
                path,
                row,
                cols.category,
                f"unknown category {category!r} (item_bank.categories maps {sorted(config.categories)})",
            )
        source = _text(path, row, cols.source, record[cols.source], required=False) if cols.source else ""
        metadata = record[cols.metadata] if cols.metadata else None
        if metadata is not None and not isinstance(metadata, dict):
            raise ItemBankError(path, row, cols.metadata, f"expected a mapping, got {type(metadata).__name__}")
        stratum = {"category": category, "source": source, "source_family": _family(source)}[config.stratum_key]
        items.append(
            BankItem(
                item_id=f"{config.id}-{upstream}",
                upstream_id=upstream,
                row=row,
                discipline=config.categories[category],
                category=category,
                question=question,
                options=options,
                answer_index=answer_index,
                source=source,
                licence=(_text(path, row, cols.licence, record[cols.licence], required=False) if cols.licence else "")
                or config.licence,
                explanation=_text(path, row, cols.explanation, record[cols.explanation], required=False)
                if cols.explanation
                else "",
                stratum_key=stratum or category,
                metadata=metadata or {},
            )
        )
    if not items:
        raise ItemBankError(path, 0, None, "no items")
    return BankFile(path, hashlib.sha256(data).hexdigest(), tuple(items), excluded)
