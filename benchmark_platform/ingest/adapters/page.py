"""Pages: HTML with the boilerplate stripped (beautifulsoup4), or a MediaWiki page rendered to Markdown with its site
chrome stripped. One document per page; its raw bytes are the whole body as served."""

from __future__ import annotations

import re
from collections.abc import Iterator

from benchmark_platform.ingest.adapters.base import Record, document, reject
from benchmark_platform.ingest.cleaners import squash, strip_html_boilerplate, strip_mediawiki_chrome
from benchmark_platform.ingest.config import PageSource
from benchmark_platform.ingest.encoding import encoding_problems
from benchmark_platform.ingest.fetch import Fetcher

_MARKDOWN_TITLE = re.compile(r"^\s*(.+?)\s*\n=+\s*$", re.MULTILINE)


def read(source: PageSource, fetcher: Fetcher) -> Iterator[Record]:
    for url in source.listed_urls():
        fetched = fetcher.get(url)
        decoded = fetched.decoded()
        kind = source.format
        if kind == "auto":
            kind = "html" if fetched.media_type in ("text/html", "application/xhtml+xml") else "mediawiki_markdown"
        if kind == "html":
            title, text = strip_html_boilerplate(decoded.text)
        else:
            text = strip_mediawiki_chrome(decoded.text)
            found = _MARKDOWN_TITLE.search(decoded.text)
            title = squash(found.group(1)) if found else ""
        if len(text) < source.min_chars:
            yield reject(source, url, f"only {len(text)} characters of content after stripping boilerplate")
            continue
        if problems := encoding_problems(text):
            yield reject(
                source, url, f"text decoded as {decoded.encoding} looks wrong: {'; '.join(problems)}", text[:200]
            )
            continue
        yield document(
            source,
            fetched,
            text=text,
            title=title or source.title,
            url=source.canonical_url or url,
            metadata={"encoding": decoded.encoding, "declared_charset": decoded.declared, "format": kind},
        )
