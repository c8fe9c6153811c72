"""Source configuration in a benchmark spec: one entry per source, read by one adapter abstraction.

`SourceConfig` is the union of the adapters' configs, told apart by `adapter`; each extends `SourceBase` (identity,
publisher, tier, licence, the exact URLs to request). The spec lists sources; the ingest stage reads each through a
fetcher that is live (and records) or replays the spec's snapshot store.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from benchmark_platform.ingest.adapters.base import SourceBase
from benchmark_platform.ingest.adapters.geojson import GeoJsonSource
from benchmark_platform.ingest.adapters.legal_text import LegalTextSource
from benchmark_platform.ingest.adapters.mediawiki import MediaWikiSource
from benchmark_platform.ingest.adapters.page import PageSource
from benchmark_platform.ingest.adapters.sparql import SparqlSource
from benchmark_platform.ingest.adapters.table import CsvSource, XlsSource

SourceConfig = Annotated[
    GeoJsonSource | CsvSource | XlsSource | PageSource | LegalTextSource | MediaWikiSource | SparqlSource,
    Field(discriminator="adapter"),
]

__all__ = [
    "CsvSource",
    "GeoJsonSource",
    "LegalTextSource",
    "MediaWikiSource",
    "PageSource",
    "SourceBase",
    "SourceConfig",
    "SparqlSource",
    "XlsSource",
]
