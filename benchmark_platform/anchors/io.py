"""Import a discipline's anchor files (YAML or CSV), validated with errors that name the file and row.

Layout of one discipline folder `<root>/<discipline>/`:

- `anchors.yaml` (required): `discipline`, `k_total` (K_d), `is_example`, `note`, `prototype` (lists of
  `methods`, `problems`, `theorems`, `concepts`, `applications`), and optionally the tables below inline;
- each table `anchor_items`, `item_labels`, `pair_labels`, `strata` either inline in `anchors.yaml` or in a sibling
  `<table>.csv` (header row) or `<table>.yaml` (a list of mappings), never both.

The import's version is the sha256 of the files it read (names and bytes), so any edit gives a new version.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from benchmark_platform.anchors.models import (
    AnchorItem,
    AnchorSet,
    LabelledItem,
    PairLabel,
    Prototype,
    Stratum,
)
from benchmark_platform.inputs import DEFAULT_LIMITS, InputError, InputLimits, check_rows
from benchmark_platform.safeyaml import YAML_LIMITS, SafeLoader, YamlError, load_text

MAIN_FILE = "anchors.yaml"
TABLES: dict[str, type[BaseModel]] = {
    "anchor_items": AnchorItem,
    "item_labels": LabelledItem,
    "pair_labels": PairLabel,
    "strata": Stratum,
}
_HEADER_KEYS = {"discipline", "k_total", "is_example", "note", "prototype"}

Row = TypeVar("Row", bound=BaseModel)


def has_anchor_files(folder: Path) -> bool:
    """Whether `folder` holds a discipline's anchor files; a discipline without them goes to manual review."""
    return (folder / MAIN_FILE).is_file()


class AnchorFileError(ValueError):
    """Bad anchor input; `path` and `row` (1-based line, 0 when the file as a whole is wrong) locate it."""

    def __init__(self, path: Path, row: int, message: str) -> None:
        self.path = path
        self.row = row
        self.message = message
        where = f"{path}:{row}" if row else str(path)
        super().__init__(f"{where}: {message}")


class _LineLoader(SafeLoader):
    """Records each mapping's 1-based line under the key `__line__`."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        mapping = super().construct_mapping(node, deep=True)
        mapping["__line__"] = node.start_mark.line + 1
        return mapping


def _load_yaml(path: Path, data: bytes, limits: InputLimits = DEFAULT_LIMITS) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AnchorFileError(path, 0, f"not UTF-8: {exc}") from None
    try:
        return load_text(text, str(path), _LineLoader, replace(YAML_LIMITS, max_depth=limits.max_depth), name=str(path))
    except YamlError as exc:
        raise AnchorFileError(path, 0, str(exc).removeprefix(f"{path}: ")) from None


def _strip_lines(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_lines(v) for k, v in value.items() if k != "__line__"}
    if isinstance(value, list):
        return [_strip_lines(v) for v in value]
    return value


def _describe(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'row'}: {e['msg']}" for e in exc.errors())


def _validate(model: type[Row], raw: Any, path: Path, line: int) -> Row:
    if not isinstance(raw, dict):
        raise AnchorFileError(path, line, f"expected a mapping, got {type(raw).__name__}")
    try:
        return model.model_validate(_strip_lines(raw))
    except ValidationError as exc:
        raise AnchorFileError(path, line, _describe(exc)) from exc


def _csv_rows(path: Path, data: bytes) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise AnchorFileError(path, 0, f"not UTF-8: {exc}") from exc
    reader = csv.DictReader(io.StringIO(text))
    try:
        if not reader.fieldnames:
            raise AnchorFileError(path, 1, "missing header row")
        yield from _csv_records(path, reader)
    except csv.Error as exc:
        raise AnchorFileError(path, reader.line_num, f"not a readable CSV row: {exc}") from None


def _csv_records(path: Path, reader: csv.DictReader[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    for record in reader:
        if None in record:
            raise AnchorFileError(path, reader.line_num, "more fields than the header names")
        values = {k.strip(): (v.strip() if v is not None else None) for k, v in record.items()}
        if not any(values.values()):
            continue
        yield reader.line_num, {k: v for k, v in values.items() if v not in ("", None)}


def _table_rows(
    name: str, main_path: Path, inline: Any, folder: Path, files: dict[str, bytes], limits: InputLimits = DEFAULT_LIMITS
) -> list[tuple[Path, int, dict[str, Any]]]:
    """The raw rows of one table with their (file, line), from wherever the table lives."""
    rows = _raw_table_rows(name, main_path, inline, folder, files, limits)
    if len(rows) > limits.max_rows:
        try:
            check_rows(f"table {name!r}", len(rows), limits)
        except InputError as exc:
            raise AnchorFileError(rows[0][0], 0, str(exc)) from None
    return rows


def _raw_table_rows(
    name: str, main_path: Path, inline: Any, folder: Path, files: dict[str, bytes], limits: InputLimits
) -> list[tuple[Path, int, dict[str, Any]]]:
    sources = [f for f in (f"{name}.csv", f"{name}.yaml", f"{name}.yml") if f in files]
    if len(sources) + (inline is not None) > 1:
        places = sources + ([MAIN_FILE] if inline is not None else [])
        raise AnchorFileError(folder / sources[0], 0, f"table {name!r} is given twice: {', '.join(places)}")
    if inline is not None:
        path, rows = main_path, inline
    elif not sources:
        return []
    elif sources[0].endswith(".csv"):
        path = folder / sources[0]
        return [(path, line, row) for line, row in _csv_rows(path, files[sources[0]])]
    else:
        path = folder / sources[0]
        rows = _load_yaml(path, files[sources[0]], limits)
        if rows is None:
            return []
    if not isinstance(rows, list):
        raise AnchorFileError(path, 0, f"table {name!r} must be a list of rows")
    return [(path, row.get("__line__", 0) if isinstance(row, dict) else 0, row) for row in rows]


def _unique(rows: list[tuple[Path, int, Row]], key: str, table: str) -> None:
    seen: dict[str, tuple[Path, int]] = {}
    for path, line, row in rows:
        value = getattr(row, key)
        if value in seen:
            first = seen[value]
            raise AnchorFileError(
                path, line, f"duplicate {table} {key} {value!r} (first at {first[0].name}:{first[1]})"
            )
        seen[value] = (path, line)


def version_of(files: dict[str, bytes]) -> str:
    """sha256 over the sorted (name, bytes) of the files an import read."""
    digest = hashlib.sha256()
    for name in sorted(files):
        digest.update(name.encode() + b"\0" + hashlib.sha256(files[name]).digest())
    return digest.hexdigest()


def anchor_files(folder: Path, limits: InputLimits = DEFAULT_LIMITS) -> dict[str, bytes]:
    """The files of one discipline folder that an import reads, by name (each within the size limit)."""
    wanted = {MAIN_FILE} | {f"{t}.{ext}" for t in TABLES for ext in ("csv", "yaml", "yml")}
    paths = [p for p in sorted(folder.iterdir()) if p.is_file() and p.name in wanted]
    for path in paths:
        if path.stat().st_size > limits.max_bytes:
            raise AnchorFileError(path, 0, f"{path.stat().st_size:,} bytes is over the limit of {limits.max_bytes:,}")
    return {p.name: p.read_bytes() for p in paths}


def load_anchor_set(folder: Path, limits: InputLimits = DEFAULT_LIMITS) -> AnchorSet:
    """Read and validate one discipline folder; raises AnchorFileError naming the file and row."""
    folder = Path(folder)
    files = anchor_files(folder, limits)
    main_path = folder / MAIN_FILE
    if MAIN_FILE not in files:
        raise AnchorFileError(main_path, 0, "missing: every anchor folder needs anchors.yaml")
    header = _load_yaml(main_path, files[MAIN_FILE], limits)
    if not isinstance(header, dict):
        raise AnchorFileError(main_path, 1, "must be a mapping with discipline, k_total and prototype")
    unknown = set(header) - _HEADER_KEYS - set(TABLES) - {"__line__"}
    if unknown:
        raise AnchorFileError(main_path, 1, f"unknown keys: {', '.join(sorted(map(str, unknown)))}")
    for key in ("discipline", "k_total", "is_example"):
        if key not in header:
            raise AnchorFileError(main_path, 1, f"missing key {key!r}")
    if header["discipline"] != folder.name:
        raise AnchorFileError(
            main_path, 1, f"discipline {header['discipline']!r} differs from its folder name {folder.name!r}"
        )
    prototype = _validate(Prototype, header.get("prototype") or {}, main_path, 1)

    tables: dict[str, list[tuple[Path, int, Any]]] = {}
    for name, model in TABLES.items():
        raw_rows = _table_rows(name, main_path, header.get(name), folder, files, limits)
        tables[name] = [(path, line, _validate(model, row, path, line)) for path, line, row in raw_rows]

    _unique(tables["anchor_items"], "id", "anchor item")
    _unique(tables["item_labels"], "id", "item label")
    _unique(tables["strata"], "name", "stratum")
    strata = {row.name for _, _, row in tables["strata"]}
    if not strata:
        raise AnchorFileError(main_path, 0, "no strata: give at least one stratum with omega, lower and upper")
    key_owner: dict[str, str] = {}
    for path, line, row in tables["strata"]:
        for key in row.keys:
            if key_owner.get(key, row.name) != row.name or (key in strata and key != row.name):
                raise AnchorFileError(path, line, f"stratum key {key!r} is mapped to two strata")
            key_owner[key] = row.name
    for path, line, row in tables["anchor_items"]:
        if row.stratum not in strata:
            raise AnchorFileError(path, line, f"anchor item {row.id!r}: unknown stratum {row.stratum!r}")
    texts = {row.id: row.text for _, _, row in tables["anchor_items"]}
    for path, line, row in tables["item_labels"]:
        if texts.setdefault(row.id, row.text) != row.text:
            raise AnchorFileError(path, line, f"item {row.id!r} has a different text than anchor item {row.id!r}")
    for path, line, row in tables["pair_labels"]:
        for ref in (row.q, row.u):
            if ref not in texts:
                raise AnchorFileError(
                    path, line, f"pair refers to unknown item id {ref!r} (not an anchor or labelled item)"
                )
    for name, field in (("item_labels", "y_A"), ("pair_labels", "y_T"), ("pair_labels", "y_U")):
        rows = tables[name]
        if rows and len({getattr(r, field) for _, _, r in rows}) < 2:
            raise AnchorFileError(
                rows[0][0],
                0,
                f"{field} labels are all {getattr(rows[0][2], field)}: both 0 and 1 are needed to calibrate",
            )

    strata_rows = [row for _, _, row in tables["strata"]]
    k_total = header["k_total"]
    lower, upper = sum(s.lower for s in strata_rows), sum(s.upper for s in strata_rows)
    if isinstance(k_total, int) and not lower <= k_total <= upper:
        where = tables["strata"][0][0]
        raise AnchorFileError(
            where, 0, f"quotas cannot hold: sum of lower {lower} <= K_d {k_total} <= sum of upper {upper} fails"
        )
    try:
        return AnchorSet(
            discipline=header["discipline"],
            version=version_of(files),
            is_example=header["is_example"],
            note=header.get("note") or "",
            k_total=k_total,
            prototype=prototype,
            anchor_items=tuple(row for _, _, row in tables["anchor_items"]),
            item_labels=tuple(row for _, _, row in tables["item_labels"]),
            pair_labels=tuple(row for _, _, row in tables["pair_labels"]),
            strata=tuple(strata_rows),
            files=tuple(sorted(files)),
        )
    except ValidationError as exc:
        raise AnchorFileError(main_path, 1, _describe(exc)) from exc


def load_anchor_root(root: Path) -> dict[str, AnchorSet]:
    """Every discipline folder under `root` that holds an anchors.yaml, by discipline."""
    root = Path(root)
    return {p.name: load_anchor_set(p) for p in sorted(root.iterdir()) if (p / MAIN_FILE).is_file()}
