"""Source configuration in a benchmark spec: one entry per source, read by one adapter abstraction.

`SourceConfig` is the union of the adapters' configs, told apart by `adapter`; each extends `SourceBase` (identity,
publisher, tier, licence, the exact URLs to request). The spec lists sources; the ingest stage reads each through a
fetcher that is live (and records) or replays the spec's snapshot store (adapters/: one reader per config here).

A config leaf: pydantic and the standard library only, so a spec is checked without the adapters' parsers.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

# The value cleaners a table column may name (ingest/cleaners.py registers one function under each name).
CleanerName = Literal["strip", "infobox", "french_integer", "french_decimal", "ava_states"]


class SourceBase(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[a-z0-9_]+$")
    title: str
    publisher: str
    homepage: str = Field(pattern=r"^https?://")  # the authority's page for the source, for the licence table
    tier: Literal[1, 2, 3]  # 1 official, 2 authoritative, 3 reliable (OenoBench 3.2)
    licence: str = Field(min_length=1)  # SPDX id where one exists
    licence_url: str = Field(default="", pattern=r"^(https?://.*)?$")
    attribution: str = Field(min_length=1)
    redistribution: Literal["allowed", "attribution", "share_alike", "tests_only"] = "attribution"
    basis: str = ""  # legal basis of reuse, e.g. "US Government work, 17 U.S.C. 105"
    content_date: date | None = None  # date of the content itself where the publisher states one
    urls: list[str] = Field(default_factory=list)  # exact requests, in order
    url_template: str | None = None  # or a template with {key}, expanded over `keys`
    keys: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _has_requests(self) -> SourceBase:
        if self.url_template is not None and "{key}" not in self.url_template:
            raise ValueError(f"source {self.id}: url_template must contain {{key}}")
        if bool(self.url_template) != bool(self.keys):
            raise ValueError(f"source {self.id}: url_template and keys go together")
        if not self.makes_requests():
            raise ValueError(f"source {self.id}: no urls (give urls, or url_template with keys)")
        return self

    def listed_urls(self) -> list[str]:
        """The URLs the spec lists (`urls`, then `url_template` over `keys`), in order."""
        expanded = [self.url_template.format(key=key) for key in self.keys] if self.url_template else []
        return [*self.urls, *expanded]

    def makes_requests(self) -> bool:
        """Whether reading the source requests anything; adapters that build their own requests override it."""
        return bool(self.listed_urls())


def _check_canonical_url(source: SourceBase, canonical_url: str | None) -> None:
    """A canonical URL names the one document a single request gave."""
    if canonical_url and len(source.listed_urls()) != 1:
        raise ValueError(f"source {source.id}: canonical_url needs exactly one url")


class GeoJsonSource(SourceBase):
    """GeoJSON feature collections, one document per file (ingest/adapters/geojson.py)."""

    adapter: Literal["geojson"]
    title_property: str = "name"
    properties: list[str] = Field(default_factory=list)  # rendered, in order; empty = all
    current_property: str | None = None  # e.g. valid_end: the feature where it is empty is the current one
    member_properties: list[str] = Field(default_factory=list)  # list-like collections: one line per feature


class TableSource(SourceBase):
    """What CSV and .xls sources share: per-column cleaners, required columns, the document title."""

    cleaners: dict[str, CleanerName] = Field(default_factory=dict)  # column -> cleaner; others are squashed
    required: list[str] = Field(default_factory=list)  # columns that may not be empty
    title_template: str = ""  # e.g. "{Owner_Name}"; default: the first column's value


class CsvSource(TableSource):
    """CSV files, one document per row or per file (ingest/adapters/table.py)."""

    adapter: Literal["csv"]
    delimiter: str = Field(default=",", min_length=1, max_length=1)
    columns: list[str] = Field(default_factory=list)  # names for a headerless file; empty = first row is header
    documents: Literal["row", "file"] = "row"
    url_column: str | None = None  # a column holding each record's canonical URL
    text_columns: list[str] = Field(default_factory=list)  # rendered in the text; empty = all


class XlsSource(TableSource):
    """Legacy Excel .xls sheets, one document per sheet (ingest/adapters/table.py)."""

    adapter: Literal["xls"]
    sheet: str | int = 0
    columns: list[str] = Field(min_length=1)  # names of the sheet's columns, left to right
    row_pattern: str  # a regex the first cell of every data row matches (e.g. a département code)

    @model_validator(mode="after")
    def _pattern_compiles(self) -> XlsSource:
        re.compile(self.row_pattern)
        return self


class PageSource(SourceBase):
    """HTML or rendered MediaWiki pages, one document per page (ingest/adapters/page.py)."""

    adapter: Literal["page"]
    format: Literal["auto", "html", "mediawiki_markdown"] = "auto"  # auto: from the media type
    canonical_url: str | None = None  # the page's permanent URL when it was served from elsewhere (one URL only)
    min_chars: int = 200  # less text than this after stripping means the page is chrome only

    @model_validator(mode="after")
    def _one_canonical_url(self) -> PageSource:
        _check_canonical_url(self, self.canonical_url)
        return self


class LegalTextSource(SourceBase):
    """Official French texts (INAO rulebooks on Légifrance), one document per text (ingest/adapters/legal_text.py)."""

    adapter: Literal["legal_text"]
    canonical_url: str | None = None  # the official text's URL when the bytes were served from a mirror

    @model_validator(mode="after")
    def _one_canonical_url(self) -> LegalTextSource:
        _check_canonical_url(self, self.canonical_url)
        return self


class MediaWikiSource(SourceBase):
    """A MediaWiki API, one exact call per title (ingest/adapters/mediawiki.py builds the calls)."""

    adapter: Literal["mediawiki"]
    api: str = Field(pattern=r"^https?://.+/api\.php$")
    titles: list[str] = Field(min_length=1)
    section: int | None = 0  # 0: the lead section, where the infobox is; None: the whole page
    infobox_prefix: str = "Infobox"

    def makes_requests(self) -> bool:
        return bool(self.titles)


# SPARQLWrapper's own query-form detection (Wrapper._parseQueryType), restated so that a spec is checked without
# importing SPARQLWrapper; the adapter still builds the request with SPARQLWrapper and re-checks the form there.
_SPARQL_COMMENT = re.compile(r"(^|\n)\s*#.*?\n")
_SPARQL_PROLOGUE = re.compile(r"((?P<base>(\s*BASE\s*<.*?>)\s*)|(?P<prefixes>(\s*PREFIX\s+.+:\s*<.*?>)\s*))*")
_SPARQL_FORM = re.compile(
    r"(?P<queryType>(CONSTRUCT|SELECT|ASK|DESCRIBE|INSERT|DELETE|CREATE|CLEAR|DROP|LOAD|COPY|MOVE|ADD))", re.IGNORECASE
)
# A place bound through the transitive administrative parent (P131*, P131+ or a P131 path).
_P131_PATH = re.compile(r"P131\s*\)?\s*[*+/{?]|[/|^]\s*(?:wdt:|p:|ps:)?P131\b")


def sparql_query_form(query: str) -> str:
    """SELECT, ASK, CONSTRUCT, ... as SPARQLWrapper detects it (SELECT when nothing is recognised, as there)."""
    stripped = _SPARQL_PROLOGUE.sub("", _SPARQL_COMMENT.sub("\n\n", query).strip())
    found = _SPARQL_FORM.search(stripped)
    return found.group("queryType").upper() if found else "SELECT"


def check_country_binding(query: str) -> str:
    if _P131_PATH.search(query):
        raise ValueError(
            "the query walks P131 (located in the administrative territorial entity) transitively; "
            "bind countries with the direct P17 relation (OenoBench B.2)"
        )
    return query


class SparqlSource(SourceBase):
    """One SPARQL SELECT query, one JSON result document (ingest/adapters/sparql.py builds the request)."""

    adapter: Literal["sparql"]
    endpoint: str = Field(default="https://query.wikidata.org/sparql", pattern=r"^https?://")
    query: str

    @field_validator("query")
    @classmethod
    def _direct_country_relation(cls, query: str) -> str:
        return check_country_binding(query)

    def makes_requests(self) -> bool:
        form = sparql_query_form(self.query)
        if form != "SELECT":
            raise ValueError(f"source {self.id}: only SELECT queries are ingested, not {form}")
        return True


SourceConfig = Annotated[
    GeoJsonSource | CsvSource | XlsSource | PageSource | LegalTextSource | MediaWikiSource | SparqlSource,
    Field(discriminator="adapter"),
]
