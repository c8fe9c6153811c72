"""Tables: CSV files (one document per row, or per file) and legacy Excel .xls sheets (one document per sheet).

A CSV row document's raw bytes are exactly that row's bytes in the served file (found by tracking which physical
lines the csv reader consumed), and its URL is the file URL with an RFC 7111 fragment (`#row=N`, the header being
row 1) unless a column holds the record's own canonical URL (e.g. the Wikipedia page an infobox row was read from).
Values pass through the cleaners named in the spec; a row a cleaner refuses becomes a rejection naming row and column.
.xls is read with xlrd (pure Python, BIFF only since 2.0, cell types kept): a sheet's rows are selected by a
pattern on their first cell and named by the spec, since customs sheets carry multi-row headers and footnotes.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator
from typing import Any, Literal

import xlrd
from pydantic import Field, model_validator

from benchmark_platform.ingest.adapters.base import Record, SourceBase, field_lines
from benchmark_platform.ingest.cleaners import VALUE_CLEANERS, squash
from benchmark_platform.ingest.fetch import Fetched, Fetcher

CleanerName = Literal[tuple(VALUE_CLEANERS)]  # type: ignore[valid-type]  # the names cleaners.py registers


class _Cleaning(SourceBase):
    cleaners: dict[str, CleanerName] = Field(default_factory=dict)  # column -> cleaner; others are squashed
    required: list[str] = Field(default_factory=list)  # columns that may not be empty
    title_template: str = ""  # e.g. "{Owner_Name}"; default: the first column's value

    def _clean(self, row: dict[str, str]) -> dict[str, Any]:
        """Cleaned fields; raises ValueError naming the column."""
        fields: dict[str, Any] = {}
        for column, value in row.items():
            value = squash(value)
            if not value:
                if column in self.required:
                    raise ValueError(f"column {column!r} is empty")
                fields[column] = ""
                continue
            cleaner = VALUE_CLEANERS[self.cleaners.get(column, "strip")]
            try:
                fields[column] = cleaner(value)
            except ValueError as exc:
                raise ValueError(f"column {column!r}: {exc}") from None
        return fields

    def _title(self, fields: dict[str, Any]) -> str:
        if self.title_template:
            return squash(self.title_template.format_map({k: v for k, v in fields.items()}))
        return str(next(iter(fields.values()), ""))

    def _check_columns(self, header: list[str]) -> str | None:
        used = {*self.cleaners, *self.required, *re.findall(r"{(\w+)}", self.title_template)}
        missing = sorted(used - set(header))
        return f"columns {missing} not in the header {header}" if missing else None


class CsvSource(_Cleaning):
    adapter: Literal["csv"]
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    columns: list[str] = Field(default_factory=list)  # names for a headerless file; empty = first row is header
    documents: Literal["row", "file"] = "row"
    url_column: str | None = None  # a column holding each record's canonical URL
    text_columns: list[str] = Field(default_factory=list)  # rendered in the text; empty = all

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        for url in self.request_urls():
            yield from self._read_file(fetcher.get(url))

    def _read_file(self, fetched: Fetched) -> Iterator[Record]:
        url, decoded = fetched.url, fetched.decoded()
        if decoded.encoding.startswith("utf-16"):
            yield self.reject(url, "UTF-16 CSV is not supported; expected an 8-bit encoding")
            return
        rows = _rows_with_spans(fetched.body, decoded.encoding, self.delimiter)
        header = self.columns
        if not header:
            first = next(rows, None)
            if first is None:
                yield self.reject(url, "empty file")
                return
            header = [squash(name) for name in first[1]]
        if problem := self._check_columns(header + ([self.url_column] if self.url_column else [])):
            yield self.reject(url, problem)
            return
        parsed: list[tuple[int, dict[str, Any], int, int]] = []
        first_seen: dict[bytes, int] = {}
        for row_number, values, start, end in rows:
            locator = f"{url}#row={row_number}"
            if (earlier := first_seen.setdefault(fetched.body[start:end], row_number)) != row_number:
                yield self.reject(
                    locator,
                    f"row {row_number} repeats row {earlier} byte for byte",
                    fetched.body[start:end].decode(decoded.encoding, "replace"),
                )
                continue
            if len(values) != len(header):
                yield self.reject(
                    locator,
                    f"{len(values)} fields where the header has {len(header)}",
                    fetched.body[start:end].decode(decoded.encoding, "replace"),
                )
                continue
            try:
                fields = self._clean(dict(zip(header, values, strict=True)))
            except ValueError as exc:
                yield self.reject(
                    locator, f"row {row_number}: {exc}", fetched.body[start:end].decode(decoded.encoding, "replace")
                )
                continue
            parsed.append((row_number, fields, start, end))
        if self.documents == "file":
            if parsed:
                text = "\n\n".join(self._text(fields) for _, fields, _, _ in parsed)
                yield self.document(
                    fetched,
                    text=text,
                    title=self.title,
                    metadata={"rows": [f for _, f, _, _ in parsed], "encoding": decoded.encoding},
                )
            return
        for row_number, fields, start, end in parsed:
            canonical = str(fields.get(self.url_column, "")) if self.url_column else ""
            yield self.document(
                fetched,
                text=self._text(fields),
                title=self._title(fields),
                url=canonical or f"{url}#row={row_number}",
                span=(start, end),
                locator=f"row={row_number}",
                metadata={"fields": fields, "row": row_number, "encoding": decoded.encoding},
            )

    def _text(self, fields: dict[str, Any]) -> str:
        shown = self.text_columns or [c for c in fields if c != self.url_column]
        return field_lines({c: fields.get(c) for c in shown})


def _rows_with_spans(body: bytes, encoding: str, delimiter: str) -> Iterator[tuple[int, list[str], int, int]]:
    """(RFC 7111 row number, values, start byte, end byte without the line break) of every non-blank record."""
    lines = body.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    consumed = 0

    def physical_lines() -> Iterator[str]:
        nonlocal consumed
        while consumed < len(lines):
            consumed += 1
            yield lines[consumed - 1].decode(encoding)

    first_line, row_number = 0, 0
    for values in csv.reader(physical_lines(), delimiter=delimiter):
        start, end = offsets[first_line], offsets[consumed]
        first_line = consumed
        if not values:
            continue
        row_number += 1
        while end > start and body[end - 1 : end] in (b"\n", b"\r"):
            end -= 1
        yield row_number, values, start, end


class XlsSource(_Cleaning):
    adapter: Literal["xls"]
    sheet: str | int = 0
    columns: list[str] = Field(min_length=1)  # names of the sheet's columns, left to right
    row_pattern: str  # a regex the first cell of every data row matches (e.g. a département code)

    @model_validator(mode="after")
    def _pattern_compiles(self) -> XlsSource:
        re.compile(self.row_pattern)
        return self

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        for url in self.request_urls():
            fetched = fetcher.get(url)
            try:
                book = xlrd.open_workbook(file_contents=fetched.body, on_demand=True)
                sheet = (
                    book.sheet_by_name(self.sheet) if isinstance(self.sheet, str) else book.sheet_by_index(self.sheet)
                )
            except (
                xlrd.XLRDError,
                ValueError,
                IndexError,
                AssertionError,
                EOFError,
            ) as exc:  # xlrd's errors on bad bytes
                yield self.reject(url, f"not a readable .xls workbook: {type(exc).__name__}: {exc}")
                continue
            yield from self._read_sheet(fetched, sheet)

    def _read_sheet(self, fetched: Fetched, sheet: xlrd.sheet.Sheet) -> Iterator[Record]:
        url, pattern = fetched.url, re.compile(self.row_pattern)
        if sheet.ncols < len(self.columns):
            yield self.reject(f"{url}#sheet={sheet.name}", f"{sheet.ncols} columns, the spec names {len(self.columns)}")
            return
        rows, notes = [], []
        for r in range(sheet.nrows):
            cells = [_cell(sheet.cell(r, c)) for c in range(sheet.ncols)]
            if pattern.match(cells[0]):
                try:
                    rows.append(self._clean(dict(zip(self.columns, cells, strict=False))))
                except ValueError as exc:
                    yield self.reject(f"{url}#sheet={sheet.name}&row={r + 1}", f"row {r + 1}: {exc}", " | ".join(cells))
            elif cells[0] and not any(cells[1:]):
                notes.append(cells[0])  # titles above the table and footnotes below it
        if not rows:
            yield self.reject(f"{url}#sheet={sheet.name}", f"no row whose first cell matches {self.row_pattern!r}")
            return
        text = (
            "\n".join(notes)
            + "\n\n"
            + "\n".join("; ".join(f"{k}: {v}" for k, v in row.items() if v != "") for row in rows)
        )
        yield self.document(
            fetched,
            text=text.strip(),
            title=self.title,
            locator=f"sheet={sheet.name}",
            metadata={"sheet": sheet.name, "rows": rows, "notes": notes},
        )


def _cell(cell: xlrd.sheet.Cell) -> str:
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        value = float(cell.value)
        return str(int(value)) if value.is_integer() else f"{value:.10g}"
    return squash(str(cell.value))
