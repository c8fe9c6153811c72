"""Wikidata (or any SPARQL 1.1 endpoint) through SPARQLWrapper: one SELECT query, one JSON result document.

SPARQLWrapper builds the request (query-type detection, parameter encoding, content negotiation for JSON results);
the request is then sent through the ingestion fetcher rather than urllib, so it is rate-limited, recorded and
replayable like every other call. A query that binds places through the transitive administrative parent (P131*,
P131+ or any P131 path) is refused when the spec is loaded (ingest/config.py): bind the country with the direct P17
relation, whose absence of cross-country leakage OenoBench B.2 measured (Austrian appellations leaked into a Bordeaux
scraper).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from SPARQLWrapper import GET, JSON, SELECT, SPARQLWrapper

from benchmark_platform.ingest.adapters.base import Record, document, reject
from benchmark_platform.ingest.config import SparqlSource
from benchmark_platform.ingest.fetch import Fetcher


def _wrapper(source: SparqlSource) -> SPARQLWrapper:
    wrapper = SPARQLWrapper(source.endpoint)
    wrapper.setQuery(source.query)
    if wrapper.queryType != SELECT:  # the spec's check (config.sparql_query_form) saw the same; SPARQLWrapper decides
        raise ValueError(f"source {source.id}: only SELECT queries are ingested, not {wrapper.queryType}")
    wrapper.setMethod(GET)
    wrapper.setReturnFormat(JSON)
    return wrapper


def read(source: SparqlSource, fetcher: Fetcher) -> Iterator[Record]:
    request = _wrapper(source)._createRequest()
    url = request.full_url
    fetched = fetcher.get(url, headers={"accept": request.get_header("Accept", "")})
    decoded = fetched.decoded()
    try:
        data = json.loads(decoded.text)
        variables: list[str] = data["head"]["vars"]
        bindings: list[dict[str, Any]] = data["results"]["bindings"]
    except (ValueError, KeyError, TypeError) as exc:
        yield reject(source, url, f"not SPARQL JSON results: {type(exc).__name__}: {exc}", decoded.text[:200])
        return
    rows = [{v: b[v]["value"] for v in variables if v in b} for b in bindings]
    if not rows:
        yield reject(source, url, "the query returned no results")
        return
    text = "\n".join("; ".join(f"{k}: {v}" for k, v in row.items()) for row in rows)
    yield document(
        source,
        fetched,
        text=text,
        title=source.title,
        media_type="application/sparql-results+json",
        metadata={"variables": variables, "rows": rows, "query": source.query, "endpoint": source.endpoint},
    )
