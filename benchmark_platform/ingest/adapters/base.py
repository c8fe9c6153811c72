"""The one source-adapter abstraction: a source is configured in the spec (ingest/config.py) and read by its adapter.

Each adapter module here has `read(source, fetcher)` for one config class, yielding documents that each carry the
trace of the recorded response they came from, and rejections for records it refused (`read_source` in
`adapters/__init__.py` picks the adapter). Adapters never touch the network or the disk themselves: the fetcher
decides whether a call goes live (and is recorded) or is replayed from the snapshot store.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from benchmark_platform.ingest.config import SourceBase
from benchmark_platform.ingest.fetch import Fetched
from benchmark_platform.ingest.records import Document, Rejection, Trace

Record = Document | Rejection


def document(
    source: SourceBase,
    fetched: Fetched,
    *,
    text: str,
    title: str,
    url: str | None = None,
    span: tuple[int, int] | None = None,
    locator: str = "",
    metadata: dict[str, Any] | None = None,
    media_type: str | None = None,
    content_date: date | None = None,
) -> Document:
    """A document whose raw bytes are `span` of the fetched body (the whole body by default)."""
    start, end = span or (0, len(fetched.body))
    exchange = fetched.exchange
    extra = {"revalidated_at": fetched.revalidated_by.recorded_at.isoformat()} if fetched.revalidated_by else {}
    return Document(
        source_id=source.id,
        url=url or exchange.url,
        title=title,
        media_type=media_type or fetched.media_type,
        retrieved_at=exchange.recorded_at,
        content_date=content_date or source.content_date,
        raw=fetched.body[start:end],
        text=text,
        metadata={**(metadata or {}), **extra},
        trace=Trace(
            exchange_id=exchange.exchange_id,
            response_url=exchange.url,
            body_sha256=exchange.body_sha256,
            start=start,
            end=end,
            locator=locator,
        ),
    )


def reject(source: SourceBase, locator: str, reason: str, excerpt: str = "") -> Rejection:
    return Rejection(source_id=source.id, locator=locator, reason=reason, excerpt=excerpt[:500])


def field_lines(fields: dict[str, Any]) -> str:
    """The text form of a structured record: one "name: value" line per non-empty field, in order."""
    return "\n".join(f"{name}: {value}" for name, value in fields.items() if value not in (None, "", []))
