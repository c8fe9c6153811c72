"""Wikidata (or any SPARQL 1.1 endpoint) through SPARQLWrapper: one SELECT query, one JSON result document.

SPARQLWrapper builds the request (query-type detection, parameter encoding, content negotiation for JSON results);
the request is then sent through the ingestion fetcher rather than urllib, so it is rate-limited, recorded and
replayable like every other call. A query that binds places through the transitive administrative parent (P131*,
P131+ or any P131 path) is refused when the spec is loaded: bind the country with the direct P17 relation, whose
absence of cross-country leakage OenoBench B.2 measured (Austrian appellations leaked into a Bordeaux scraper).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any, Literal

from pydantic import Field, field_validator
from SPARQLWrapper import GET, JSON, SELECT, SPARQLWrapper

from benchmark_platform.ingest.adapters.base import Record, SourceBase
from benchmark_platform.ingest.fetch import Fetcher

_P131_PATH = re.compile(r"P131\s*\)?\s*[*+/{?]|[/|^]\s*(?:wdt:|p:|ps:)?P131\b")


def check_country_binding(query: str) -> str:
    if _P131_PATH.search(query):
        raise ValueError(
            "the query walks P131 (located in the administrative territorial entity) transitively; "
            "bind countries with the direct P17 relation (OenoBench B.2)"
        )
    return query


class SparqlSource(SourceBase):
    adapter: Literal["sparql"]
    endpoint: str = Field(default="https://query.wikidata.org/sparql", pattern=r"^https?://")
    query: str

    @field_validator("query")
    @classmethod
    def _direct_country_relation(cls, query: str) -> str:
        return check_country_binding(query)

    def _wrapper(self) -> SPARQLWrapper:
        wrapper = SPARQLWrapper(self.endpoint)
        wrapper.setQuery(self.query)
        if wrapper.queryType != SELECT:
            raise ValueError(f"source {self.id}: only SELECT queries are ingested, not {wrapper.queryType}")
        wrapper.setMethod(GET)
        wrapper.setReturnFormat(JSON)
        return wrapper

    def request_urls(self) -> list[str]:
        return [self._wrapper()._createRequest().full_url]  # SPARQLWrapper's own request construction

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        request = self._wrapper()._createRequest()
        url = request.full_url
        fetched = fetcher.get(url, headers={"accept": request.get_header("Accept")})
        decoded = fetched.decoded()
        try:
            data = json.loads(decoded.text)
            variables: list[str] = data["head"]["vars"]
            bindings: list[dict[str, Any]] = data["results"]["bindings"]
        except (ValueError, KeyError, TypeError) as exc:
            yield self.reject(url, f"not SPARQL JSON results: {type(exc).__name__}: {exc}", decoded.text[:200])
            return
        rows = [{v: b[v]["value"] for v in variables if v in b} for b in bindings]
        if not rows:
            yield self.reject(url, "the query returned no results")
            return
        text = "\n".join("; ".join(f"{k}: {v}" for k, v in row.items()) for row in rows)
        yield self.document(
            fetched,
            text=text,
            title=self.title,
            media_type="application/sparql-results+json",
            metadata={"variables": variables, "rows": rows, "query": self.query, "endpoint": self.endpoint},
        )
