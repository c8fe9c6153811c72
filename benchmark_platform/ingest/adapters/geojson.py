"""GeoJSON feature collections: UC Davis per-AVA files (TTB boundaries) and INAO commune lists of an appellation.

One document per file (the whole body is its raw bytes; geometry stays in the bytes, not in the text). The text
renders the properties: of the current feature (the one whose `current_property` is empty, e.g. an AVA's boundary
with no `valid_end`), then earlier versions, or, for a list-like collection, one line per member feature.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from benchmark_platform.ingest.adapters.base import Record, document, field_lines, reject
from benchmark_platform.ingest.cleaners import squash
from benchmark_platform.ingest.config import GeoJsonSource
from benchmark_platform.ingest.fetch import Fetcher


def _value(value: Any) -> Any:
    return squash(value) if isinstance(value, str) else value


def _fields(source: GeoJsonSource, props: dict[str, Any]) -> dict[str, Any]:
    names = source.properties or [k for k in props if k not in source.member_properties]
    return {name: _value(props.get(name)) for name in names if props.get(name) not in (None, "")}


def read(source: GeoJsonSource, fetcher: Fetcher) -> Iterator[Record]:
    for url in source.listed_urls():
        fetched = fetcher.get(url)
        decoded = fetched.decoded()
        try:
            data = json.loads(decoded.text)
        except json.JSONDecodeError as exc:
            yield reject(source, url, f"not valid JSON: {exc}", decoded.text[:200])
            continue
        features = data.get("features") if isinstance(data, dict) else None
        if data.get("type") != "FeatureCollection" or not isinstance(features, list) or not features:
            yield reject(source, url, "not a non-empty GeoJSON FeatureCollection", decoded.text[:200])
            continue
        props = [f.get("properties") or {} for f in features if isinstance(f, dict)]
        primary = next((p for p in props if source.current_property and not p.get(source.current_property)), props[0])
        fields = _fields(source, primary)
        blocks = [field_lines(fields)]
        metadata: dict[str, Any] = {"fields": fields, "features": len(props), "encoding": decoded.encoding}
        if source.member_properties:
            members = [
                {k: _value(p.get(k)) for k in source.member_properties if p.get(k) not in (None, "")} for p in props
            ]
            metadata["members"] = members
            blocks.append("\n".join("; ".join(f"{k}: {v}" for k, v in m.items()) for m in members if m))
        earlier = [_fields(source, p) for p in props if p is not primary] if source.current_property else []
        if earlier:
            metadata["earlier"] = earlier
            blocks.extend("Earlier version\n" + field_lines(f) for f in earlier)
        title = str(fields.get(source.title_property) or url.rsplit("/", 1)[-1])
        yield document(
            source,
            fetched,
            text="\n\n".join(b for b in blocks if b),
            title=title,
            metadata=metadata,
            media_type="application/geo+json",
        )
