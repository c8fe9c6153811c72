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
from typing import Any

import xlrd

from benchmark_platform.ingest.adapters.base import Record, document, field_lines, reject
from benchmark_platform.ingest.cleaners import VALUE_CLEANERS, squash
from benchmark_platform.ingest.config import CsvSource, TableSource, XlsSource
from benchmark_platform.ingest.fetch import Fetched, Fetcher


def _clean(source: TableSource, row: dict[str, str]) -> dict[str, Any]:
    """Cleaned fields; raises ValueError naming the column."""
    fields: dict[str, Any] = {}
    for column, value in row.items():
        value = squash(value)
        if not value:
            if column in source.required:
                raise ValueError(f"column {column!r} is empty")
            fields[column] = ""
            continue
        cleaner = VALUE_CLEANERS[source.cleaners.get(column, "strip")]
        try:
            fields[column] = cleaner(value)
        except ValueError as exc:
            raise ValueError(f"column {column!r}: {exc}") from None
    return fields


def _title(source: TableSource, fields: dict[str, Any]) -> str:
    if source.title_template:
        return squash(source.title_template.format_map({k: v for k, v in fields.items()}))
    return str(next(iter(fields.values()), ""))


def _check_columns(source: TableSource, header: list[str]) -> str | None:
    used = {*source.cleaners, *source.required, *re.findall(r"{(\w+)}", source.title_template)}
    missing = sorted(used - set(header))
    return f"columns {missing} not in the header {header}" if missing else None


def read_csv(source: CsvSource, fetcher: Fetcher) -> Iterator[Record]:
    for url in source.listed_urls():
        yield from _read_file(source, fetcher.get(url))


def _read_file(source: CsvSource, fetched: Fetched) -> Iterator[Record]:
    url, decoded = fetched.url, fetched.decoded()
    if decoded.encoding.startswith("utf-16"):
        yield reject(source, url, "UTF-16 CSV is not supported; expected an 8-bit encoding")
        return
    rows = _rows_with_spans(fetched.body, decoded.encoding, source.delimiter)
    header = source.columns
    if not header:
        first = next(rows, None)
        if first is None:
            yield reject(source, url, "empty file")
            return
        header = [squash(name) for name in first[1]]
    if problem := _check_columns(source, header + ([source.url_column] if source.url_column else [])):
        yield reject(source, url, problem)
        return
    parsed: list[tuple[int, dict[str, Any], int, int]] = []
    first_seen: dict[bytes, int] = {}
    for row_number, values, start, end in rows:
        locator = f"{url}#row={row_number}"
        if (earlier := first_seen.setdefault(fetched.body[start:end], row_number)) != row_number:
            yield reject(
                source,
                locator,
                f"row {row_number} repeats row {earlier} byte for byte",
                fetched.body[start:end].decode(decoded.encoding, "replace"),
            )
            continue
        if len(values) != len(header):
            yield reject(
                source,
                locator,
                f"{len(values)} fields where the header has {len(header)}",
                fetched.body[start:end].decode(decoded.encoding, "replace"),
            )
            continue
        try:
            fields = _clean(source, dict(zip(header, values, strict=True)))
        except ValueError as exc:
            yield reject(
                source, locator, f"row {row_number}: {exc}", fetched.body[start:end].decode(decoded.encoding, "replace")
            )
            continue
        parsed.append((row_number, fields, start, end))
    if source.documents == "file":
        if parsed:
            text = "\n\n".join(_text(source, fields) for _, fields, _, _ in parsed)
            yield document(
                source,
                fetched,
                text=text,
                title=source.title,
                metadata={"rows": [f for _, f, _, _ in parsed], "encoding": decoded.encoding},
            )
        return
    for row_number, fields, start, end in parsed:
        canonical = str(fields.get(source.url_column, "")) if source.url_column else ""
        yield document(
            source,
            fetched,
            text=_text(source, fields),
            title=_title(source, fields),
            url=canonical or f"{url}#row={row_number}",
            span=(start, end),
            locator=f"row={row_number}",
            metadata={"fields": fields, "row": row_number, "encoding": decoded.encoding},
        )


def _text(source: CsvSource, fields: dict[str, Any]) -> str:
    shown = source.text_columns or [c for c in fields if c != source.url_column]
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


def read_xls(source: XlsSource, fetcher: Fetcher) -> Iterator[Record]:
    for url in source.listed_urls():
        fetched = fetcher.get(url)
        try:
            book = xlrd.open_workbook(file_contents=fetched.body, on_demand=True)
            sheet = (
                book.sheet_by_name(source.sheet) if isinstance(source.sheet, str) else book.sheet_by_index(source.sheet)
            )
        except (
            xlrd.XLRDError,
            ValueError,
            IndexError,
            AssertionError,
            EOFError,
        ) as exc:  # xlrd's errors on bad bytes
            yield reject(source, url, f"not a readable .xls workbook: {type(exc).__name__}: {exc}")
            continue
        yield from _read_sheet(source, fetched, sheet)


def _read_sheet(source: XlsSource, fetched: Fetched, sheet: xlrd.sheet.Sheet) -> Iterator[Record]:
    url, pattern = fetched.url, re.compile(source.row_pattern)
    if sheet.ncols < len(source.columns):
        yield reject(
            source, f"{url}#sheet={sheet.name}", f"{sheet.ncols} columns, the spec names {len(source.columns)}"
        )
        return
    rows, notes = [], []
    for r in range(sheet.nrows):
        cells = [_cell(sheet.cell(r, c)) for c in range(sheet.ncols)]
        if pattern.match(cells[0]):
            try:
                rows.append(_clean(source, dict(zip(source.columns, cells, strict=False))))
            except ValueError as exc:
                yield reject(source, f"{url}#sheet={sheet.name}&row={r + 1}", f"row {r + 1}: {exc}", " | ".join(cells))
        elif cells[0] and not any(cells[1:]):
            notes.append(cells[0])  # titles above the table and footnotes below it
    if not rows:
        yield reject(source, f"{url}#sheet={sheet.name}", f"no row whose first cell matches {source.row_pattern!r}")
        return
    text = (
        "\n".join(notes) + "\n\n" + "\n".join("; ".join(f"{k}: {v}" for k, v in row.items() if v != "") for row in rows)
    )
    yield document(
        source,
        fetched,
        text=text.strip(),
        title=source.title,
        locator=f"sheet={sheet.name}",
        metadata={"sheet": sheet.name, "rows": rows, "notes": notes},
    )


def _cell(cell: xlrd.sheet.Cell) -> str:
    if cell.ctype == xlrd.XL_CELL_NUMBER:
        value = float(cell.value)
        return str(int(value)) if value.is_integer() else f"{value:.10g}"
    return squash(str(cell.value))
