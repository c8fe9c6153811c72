"""Read and validate a whole item-bank file before anything is written.

Every problem stops the import with one `ItemBankError` naming the file, the row (JSONL/CSV: the 1-based line;
Parquet: the 1-based record) and the field; a valid file gives one `BankItem` per row with its provenance.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmark_platform.itembank.config import ItemBankConfig, bank_item_prefix

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


class ItemBankError(ValueError):
    """Bad item-bank input: `path`, `row` (0 when the file as a whole is wrong) and `field` locate it."""

    def __init__(self, path: Path, row: int, field_name: str | None, message: str, stage: str = "") -> None:
        self.path, self.row, self.field, self.message = path, row, field_name, message
        where = f"{path}:{row}" if row else str(path)
        prefix = f"{stage}: " if stage else ""  # the stage that read the file, e.g. bank_items[geography]
        super().__init__(f"{prefix}{where}: {f'field {field_name!r}: ' if field_name else ''}{message}")

    def in_stage(self, stage: str) -> ItemBankError:
        return ItemBankError(self.path, self.row, self.field, self.message, stage)


@dataclass(frozen=True)
class BankItem:
    item_id: str  # `bank_item_prefix(spec, bank id)` + upstream id: stable across re-imports, unique per spec
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
    difficulty: str | None = None  # the author's label (columns.difficulty)


@dataclass(frozen=True)
class BankFile:
    path: Path
    sha256: str
    items: tuple[BankItem, ...]
    # rows of categories the spec leaves out on purpose (item_bank.excluded): upstream id -> category
    excluded: Mapping[str, str] = field(default_factory=dict)
    prefix: str = ""  # what every item id of this bank starts with (bank_item_prefix)

    def for_discipline(self, discipline: str) -> list[BankItem]:
        return [item for item in self.items if item.discipline == discipline]

    def item_ids(self) -> set[str]:
        """Every row's item id, also of rows left out on purpose: answers to those are not answers to unknown items."""
        return {item.item_id for item in self.items} | {f"{self.prefix}{upstream}" for upstream in self.excluded}


def bank_path(config: ItemBankConfig, base_dir: Path) -> Path:
    return config.path if config.path.is_absolute() else base_dir / config.path


def _format(config: ItemBankConfig, path: Path) -> str:
    if config.format:
        return config.format
    suffix = path.suffix.lower().lstrip(".")
    if suffix in {"jsonl", "csv", "parquet"}:
        return suffix
    raise ItemBankError(path, 0, None, "unknown format: name the file .jsonl, .csv or .parquet, or set `format`")


# a multi-byte UTF-8 sequence: in a file declared in a single-byte encoding, text of another encoding (a lead byte
# followed by its continuation bytes reads as e.g. "Ã©" in cp1252, which no real text contains)
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")


def _decode(path: Path, data: bytes, encoding: str = "utf-8") -> str:
    """The file's text in its declared encoding (UTF-8 with or without a BOM by default). A byte the encoding does not
    define stops the import naming its line: a cp1252 file declared UTF-8 (or a file mixing encodings) is refused,
    never read as mojibake."""
    if encoding != "utf-8" and (utf8 := _UTF8_SEQUENCE.search(data)) is not None:
        # a single-byte encoding decodes anything: UTF-8 sequences in it are another encoding's text (mojibake)
        line = data[: utf8.start()].count(b"\n") + 1
        raise ItemBankError(
            path,
            line,
            None,
            f"not cleanly {encoding}: bytes {utf8.group().hex(' ')} at offset {utf8.start()} are UTF-8 "
            "(the file mixes encodings); save it in one encoding and declare it in item_bank.encoding",
        )
    try:
        return data.decode("utf-8-sig" if encoding == "utf-8" else encoding)
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        label = "UTF-8" if encoding == "utf-8" else encoding
        hint = " (set item_bank.encoding, e.g. cp1252, or save the file as UTF-8)" if encoding == "utf-8" else ""
        raise ItemBankError(
            path, line, None, f"not {label} (byte {data[exc.start]:#04x} at offset {exc.start}){hint}"
        ) from None


def decode_text(path: Path, data: bytes, encoding: str = "utf-8") -> str:
    """`_decode` for other files a spec names next to its bank (e.g. model answers): same rule, same error."""
    return _decode(path, data, encoding)


def _jsonl_rows(path: Path, text: str) -> Iterator[tuple[int, dict[str, Any]]]:
    # split on newlines only: questions may contain U+0085 or U+2028, which str.splitlines would cut
    for line_no, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ItemBankError(path, line_no, None, f"invalid JSON ({exc.msg})") from None
        if not isinstance(record, dict):
            raise ItemBankError(path, line_no, None, f"expected a JSON object, got {type(record).__name__}")
        yield line_no, record


def csv_records(path: Path, text: str) -> Iterator[tuple[int, dict[str, str | None]]]:
    """(the line a record starts on, the record) of a CSV text with a header; a malformed file (a field over the csv
    module's limit, an unclosed quote, more fields than the header) stops with one ItemBankError naming the line."""
    reader = csv.DictReader(io.StringIO(text, newline=""))
    start = 1
    try:
        if not reader.fieldnames:
            raise ItemBankError(path, 1, None, "missing header row")
        start = reader.line_num + 1  # a record may span lines (quoted newlines): its row is the line it starts on
        for record in reader:
            row_start, start = start, reader.line_num + 1
            if None in record:
                raise ItemBankError(path, row_start, None, "more fields than the header names")
            yield row_start, record
    except csv.Error as exc:
        limit = csv.field_size_limit()
        reason = f"a field longer than {limit // 1024} KiB" if "field larger than field limit" in str(exc) else exc
        raise ItemBankError(path, start, None, f"unreadable CSV ({reason})") from None


def _csv_rows(path: Path, text: str, json_columns: set[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for row_start, record in csv_records(path, text):
        row: dict[str, Any] = dict(record)
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


def parse_key(value: Any, n_options: int, answer_format: str) -> int | str:
    """The 0-based option a key names, or what is wrong with it. A letter key is exactly one letter of the options
    (surrounding spaces and case aside: "", "CD", "A)" are errors, never a guess); an index key is exactly one
    integer in 0..n-1 (an int, or a text of digits)."""
    if answer_format == "letter":
        letters = LETTERS[:n_options]
        text = value.strip().upper() if isinstance(value, str) else None
        if text is None or len(text) != 1 or text not in letters:
            return f"{value!r} is not exactly one of the option letters A-{letters[-1]}"
        return letters.index(text)
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        return f"{value!r} is not an option index 0-{n_options - 1}"
    text = str(value).strip()
    if not text.isascii() or not text.isdigit() or not 0 <= int(text) < n_options:
        return f"{value!r} is not an option index 0-{n_options - 1}"
    return int(text)


def read_item_bank(config: ItemBankConfig, base_dir: Path, spec: str | None = None) -> BankFile:
    """The whole bank, validated: required columns, non-empty texts, >= 2 distinct-position options, an answer inside
    the options, a mapped category and unique ids. Raises ItemBankError at the first problem. Item ids start with
    `bank_item_prefix(spec, config.id)` (`<bank id>-` without a spec)."""
    path = bank_path(config, base_dir)
    if not path.is_file():
        raise ItemBankError(path, 0, None, "no such file")
    data = path.read_bytes()
    kind = _format(config, path)
    cols = config.columns
    json_columns = {cols.options, *([cols.metadata] if cols.metadata else [])}
    rows = (
        _jsonl_rows(path, _decode(path, data, config.encoding))
        if kind == "jsonl"
        else _csv_rows(path, _decode(path, data, config.encoding), json_columns)
        if kind == "csv"
        else _parquet_rows(path, data)
    )
    required = [cols.id, cols.question, cols.options, cols.answer, cols.category]
    optional = [c for c in (cols.source, cols.licence, cols.explanation, cols.metadata, cols.difficulty) if c]
    optional += cols.keep
    prefix = bank_item_prefix(spec, config.id) if spec else f"{config.id}-"
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
        answer_index = parse_key(record[cols.answer], len(options), config.answer_format)
        if isinstance(answer_index, str):
            raise ItemBankError(path, row, cols.answer, answer_index)
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
        kept = {name: record[name] for name in cols.keep if record[name] not in (None, "")}
        if kept and set(kept) & set(metadata or {}):
            clash = sorted(set(kept) & set(metadata or {}))
            raise ItemBankError(path, row, cols.metadata, f"names {clash}, also kept columns (columns.keep)")
        difficulty = (
            _text(path, row, cols.difficulty, record[cols.difficulty], required=False) if cols.difficulty else ""
        )
        stratum = {"category": category, "source": source, "source_family": _family(source)}[config.stratum_key]
        items.append(
            BankItem(
                item_id=f"{prefix}{upstream}",
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
                metadata={**(metadata or {}), **kept},
                difficulty=difficulty or None,
            )
        )
    if not items:
        raise ItemBankError(path, 0, None, "no items")
    return BankFile(path, hashlib.sha256(data).hexdigest(), tuple(items), excluded, prefix)
