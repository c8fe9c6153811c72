"""Gazetteer: every known entity name (and alias) mapped to one canonical entity id, from the spec's files and
alias classes. Entity ids are '<entity_type>:<slug of the canonical name>', e.g. 'ava:atlas_peak'."""

from __future__ import annotations

import csv
import re
import unicodedata
from dataclasses import dataclass
from pathlib import Path

from benchmark_platform.facts.config import FactsConfig, GazetteerFile
from benchmark_platform.keys import slug


class GazetteerError(ValueError):
    pass


@dataclass(frozen=True)
class Entity:
    entity_id: str
    entity_type: str
    name: str  # canonical name


def fold(text: str) -> str:
    """Without accents: 'Saint-Émilion' -> 'Saint-Emilion'."""
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def entity_id(entity_type: str, name: str) -> str:
    """'<entity_type>:<ASCII slug of the name>': 'Rhône' -> 'region:rhone'."""
    return f"{entity_type}:{slug(fold(name))}"


def _key(name: str) -> str:
    return " ".join(fold(name).lower().split())


class Gazetteer:
    """Name (lower-cased, accents folded) -> entity; the first to claim a name keeps it (alias classes, then
    files in spec order). `names` keeps every spelling seen, for the matcher."""

    def __init__(self) -> None:
        self.by_name: dict[str, Entity] = {}
        self.names: dict[str, Entity] = {}

    def add(self, name: str, entity: Entity) -> None:
        key = _key(name)
        if key and key not in self.by_name:
            self.by_name[key] = entity
        if key and self.by_name[key] == entity:
            self.names.setdefault(" ".join(name.split()), entity)
            self.names.setdefault(key, entity)

    def lookup(self, name: str) -> Entity | None:
        return self.by_name.get(_key(name))

    def entity_for(self, name: str, entity_type: str) -> Entity:
        """The known entity of that name, else a new one of the given type (structured records' subjects)."""
        known = self.lookup(name)
        if known is not None:
            return known
        canonical = " ".join(name.split())
        return Entity(entity_id(entity_type, canonical), entity_type, canonical)

    @classmethod
    def from_config(cls, config: FactsConfig, spec_dir: Path) -> Gazetteer:
        gazetteer = cls()
        ignored = {_key(n) for n in config.ignore_names}
        # alias classes first: a class is the spec's explicit statement of identity, files only list names
        for alias_class in config.aliases:
            canonical = alias_class.names[0]
            entity = Entity(entity_id(alias_class.entity_type, canonical), alias_class.entity_type, canonical)
            for name in alias_class.names:
                gazetteer.add(name, entity)
        for spec_file in config.gazetteers:
            for names in _read_names(spec_file, spec_dir):
                canonical = names[0]
                entity = next((e for n in names if (e := gazetteer.lookup(n))), None) or Entity(
                    entity_id(spec_file.entity_type, canonical), spec_file.entity_type, canonical
                )
                for name in names:
                    if _key(name) not in ignored:
                        gazetteer.add(name, entity)
        return gazetteer


def _read_names(spec_file: GazetteerFile, spec_dir: Path) -> list[list[str]]:
    """Each row's names (canonical first), stripped of the file's drop_suffixes; errors name file and row."""
    path = spec_dir / spec_file.path
    try:
        handle = path.open(encoding=spec_file.encoding, newline="")
    except OSError as exc:
        raise GazetteerError(f"gazetteer {path}: {exc}") from exc
    rows: list[list[str]] = []
    with handle:
        reader = csv.DictReader(handle)
        missing = [c for c in (spec_file.name_column, *spec_file.alias_columns) if c not in (reader.fieldnames or [])]
        if missing:
            raise GazetteerError(f"gazetteer {path}: no column(s) {missing} (header: {reader.fieldnames})")
        for row_number, row in enumerate(reader, start=2):
            name = _strip_suffixes(row[spec_file.name_column], spec_file.drop_suffixes)
            if not name:
                raise GazetteerError(f"gazetteer {path}, row {row_number}: empty {spec_file.name_column!r}")
            aliases = [
                _strip_suffixes(a, [])
                for column in spec_file.alias_columns
                for a in (row[column] or "").split(spec_file.alias_separator)
                if a.strip()
            ]
            names = [n for n in (name, *aliases) if "?" not in n]  # '?' marks letters lost upstream
            if names:
                rows.append(names)
    return rows


def _strip_suffixes(name: str, suffixes: list[str]) -> str:
    """The name without a trailing qualifier in brackets ('chatus (wine grape)') or a listed trailing mention."""
    name = " ".join(re.sub(r"\s*\([^)]*\)\s*$", "", name).split())
    if not suffixes:
        return name
    match = re.search(r"\s(?:" + "|".join(map(re.escape, suffixes)) + r")(?=\s|$)", name, re.IGNORECASE)
    return name[: match.start()] if match else name
