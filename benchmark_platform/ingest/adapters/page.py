"""Pages: HTML with the boilerplate stripped (beautifulsoup4), or a MediaWiki page rendered to Markdown with its site
chrome stripped. One document per page; its raw bytes are the whole body as served."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Literal

from pydantic import model_validator

from benchmark_platform.ingest.adapters.base import Record, SourceBase
from benchmark_platform.ingest.cleaners import squash, strip_html_boilerplate, strip_mediawiki_chrome
from benchmark_platform.ingest.encoding import encoding_problems
from benchmark_platform.ingest.fetch import Fetcher

_MARKDOWN_TITLE = re.compile(r"^\s*(.+?)\s*\n=+\s*$", re.MULTILINE)


class PageSource(SourceBase):
    adapter: Literal["page"]
    format: Literal["auto", "html", "mediawiki_markdown"] = "auto"  # auto: from the media type
    canonical_url: str | None = None  # the page's permanent URL when it was served from elsewhere (one URL only)
    min_chars: int = 200  # less text than this after stripping means the page is chrome only

    @model_validator(mode="after")
    def _one_canonical_url(self) -> PageSource:
        if self.canonical_url and len(self.request_urls()) != 1:
            raise ValueError(f"source {self.id}: canonical_url needs exactly one url")
        return self

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        for url in self.request_urls():
            fetched = fetcher.get(url)
            decoded = fetched.decoded()
            kind = self.format
            if kind == "auto":
                kind = "html" if fetched.media_type in ("text/html", "application/xhtml+xml") else "mediawiki_markdown"
            if kind == "html":
                title, text = strip_html_boilerplate(decoded.text)
            else:
                text = strip_mediawiki_chrome(decoded.text)
                found = _MARKDOWN_TITLE.search(decoded.text)
                title = squash(found.group(1)) if found else ""
            if len(text) < self.min_chars:
                yield self.reject(url, f"only {len(text)} characters of content after stripping boilerplate")
                continue
            if problems := encoding_problems(text):
                yield self.reject(
                    url, f"text decoded as {decoded.encoding} looks wrong: {'; '.join(problems)}", text[:200]
                )
                continue
            yield self.document(
                fetched,
                text=text,
                title=title or self.title,
                url=self.canonical_url or url,
                metadata={"encoding": decoded.encoding, "declared_charset": decoded.declared, "format": kind},
            )
