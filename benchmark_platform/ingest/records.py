"""What ingestion produces: documents that carry their source trace, and rejected records with the reason.

A document's `raw` is a byte span of one recorded response body (the whole body, or one CSV row of it); `trace` says
which exchange and which span. `verify_provenance` checks that against the snapshot store before anything is stored,
and the database re-checks the span's hash on insertion (sql/0002), so a document nobody fetched cannot be inserted.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from benchmark_platform.ingest.snapshot import SnapshotStore, sha256_hex


class Trace(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    exchange_id: str = Field(pattern=r"^[0-9a-f]{64}$")
    response_url: str  # the URL that served the body (may differ from the document's canonical URL)
    body_sha256: str = Field(pattern=r"^[0-9a-f]{64}$")
    start: int = Field(ge=0)
    end: int
    locator: str = ""  # human-readable position inside the body, e.g. "row=12" (RFC 7111) or "sheet=JO REC 16"

    @model_validator(mode="after")
    def _span(self) -> Trace:
        if self.end <= self.start:
            raise ValueError(f"empty span [{self.start}, {self.end})")
        return self


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source_id: str
    url: str  # canonical URL of what the authority served (page permalink, file at a commit, CSV row fragment)
    title: str
    media_type: str
    retrieved_at: datetime
    content_date: date | None = None
    raw: bytes
    text: str  # cleaned text; fact spans index into it
    metadata: dict[str, Any] = Field(default_factory=dict)
    trace: Trace

    @computed_field  # type: ignore[prop-decorator]
    @property
    def content_hash(self) -> str:
        return sha256_hex(self.raw)

    @property
    def document_id(self) -> str:
        return document_id(self.source_id, self.url)


def document_id(source_id: str, url: str) -> str:
    """Stable across re-ingestion (sql/0001): a changed body keeps its id, so facts can be replaced in place."""
    return sha256_hex(f"{source_id}\n{url}".encode())[:20]


_FIELD_LINE = re.compile(r"^([^:\n]+): (.*)$", re.MULTILINE)


def record_fields(text: str) -> dict[str, tuple[str, int, int]]:
    """The fields of a structured record's text ("name: value" lines, as adapters write them):
    name -> (value, start, end) with the character span of the value in `text`. The first occurrence wins."""
    fields: dict[str, tuple[str, int, int]] = {}
    for match in _FIELD_LINE.finditer(text):
        fields.setdefault(match.group(1), (match.group(2), match.start(2), match.end(2)))
    return fields


class Rejection(BaseModel):
    """A record an adapter refused, kept so that nothing disappears silently."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source_id: str
    locator: str  # URL plus position, e.g. https://.../file.csv#row=641
    reason: str
    excerpt: str = ""


class ProvenanceError(ValueError):
    pass


def verify_provenance(
    document: Document, tier: int, licence: str, store: SnapshotStore, body_cache: dict[str, bytes] | None = None
) -> None:
    """Raise ProvenanceError (naming the document) unless it traces to a recorded response, byte for byte."""
    where = f"{document.source_id}: {document.url}"
    if not document.url.startswith(("http://", "https://")):
        raise ProvenanceError(f"{where}: URL is not an absolute http(s) URL")
    if tier not in (1, 2, 3):
        raise ProvenanceError(f"{where}: source tier {tier!r} is not 1, 2 or 3")
    if not licence.strip():
        raise ProvenanceError(f"{where}: source has no licence")
    if document.retrieved_at.tzinfo is None:
        raise ProvenanceError(f"{where}: retrieval time has no time zone")
    trace = document.trace
    exchange = store.by_id(trace.exchange_id)
    if exchange is None:
        raise ProvenanceError(f"{where}: no recorded exchange {trace.exchange_id[:12]} in {store.root}")
    if exchange.body_sha256 != trace.body_sha256 or exchange.url != trace.response_url:
        raise ProvenanceError(f"{where}: trace does not match recorded exchange {trace.exchange_id[:12]}")
    if document.retrieved_at != exchange.recorded_at:
        raise ProvenanceError(f"{where}: retrieval time differs from the exchange's recorded time")
    cache = body_cache if body_cache is not None else {}
    if exchange.body_sha256 not in cache:
        cache[exchange.body_sha256] = store.body(exchange)
    if cache[exchange.body_sha256][trace.start : trace.end] != document.raw:
        raise ProvenanceError(
            f"{where}: raw bytes are not the span [{trace.start}, {trace.end}) of the body recorded from {exchange.url}"
        )
