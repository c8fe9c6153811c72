"""The one source-adapter abstraction: a source is configured in the spec and reads itself through a fetcher.

Every adapter config extends `SourceBase` (what the source is, who publishes it, its tier and licence, which URLs
to request) and implements `read(fetcher)`, yielding documents that each carry the trace of the recorded response
they came from, and rejections for records it refused. Adapters never touch the network or the disk themselves:
the fetcher decides whether a call goes live (and is recorded) or is replayed from the snapshot store.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchmark_platform.ingest.fetch import Fetched, Fetcher
from benchmark_platform.ingest.records import Document, Rejection, Trace

Record = Document | Rejection


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
        if not self.request_urls():
            raise ValueError(f"source {self.id}: no urls (give urls, or url_template with keys)")
        return self

    def request_urls(self) -> list[str]:
        expanded = [self.url_template.format(key=key) for key in self.keys] if self.url_template else []
        return [*self.urls, *expanded]

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        raise NotImplementedError

    # -- helpers for adapters ----------------------------------------------------------------------------------
    def document(
        self,
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
            source_id=self.id,
            url=url or exchange.url,
            title=title,
            media_type=media_type or fetched.media_type,
            retrieved_at=exchange.recorded_at,
            content_date=content_date or self.content_date,
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

    def reject(self, locator: str, reason: str, excerpt: str = "") -> Rejection:
        return Rejection(source_id=self.id, locator=locator, reason=reason, excerpt=excerpt[:500])


def field_lines(fields: dict[str, Any]) -> str:
    """The text form of a structured record: one "name: value" line per non-empty field, in order."""
    return "\n".join(f"{name}: {value}" for name, value in fields.items() if value not in (None, "", []))
