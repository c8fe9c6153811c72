"""Source adapters: one module per kind of source, each with `read(source, fetcher)` for its config class."""

from __future__ import annotations

from collections.abc import Iterator

from benchmark_platform.ingest.adapters import geojson, legal_text, mediawiki, page, sparql, table
from benchmark_platform.ingest.adapters.base import Record
from benchmark_platform.ingest.config import (
    CsvSource,
    GeoJsonSource,
    LegalTextSource,
    MediaWikiSource,
    PageSource,
    SourceConfig,
    SparqlSource,
    XlsSource,
)
from benchmark_platform.ingest.fetch import Fetcher


def read_source(source: SourceConfig, fetcher: Fetcher) -> Iterator[Record]:
    """The documents and rejections of one source, read by the adapter its config names."""
    match source:
        case GeoJsonSource():
            return geojson.read(source, fetcher)
        case CsvSource():
            return table.read_csv(source, fetcher)
        case XlsSource():
            return table.read_xls(source, fetcher)
        case PageSource():
            return page.read(source, fetcher)
        case LegalTextSource():
            return legal_text.read(source, fetcher)
        case MediaWikiSource():
            return mediawiki.read(source, fetcher)
        case SparqlSource():
            return sparql.read(source, fetcher)
    raise TypeError(f"no adapter reads {type(source).__name__}")
