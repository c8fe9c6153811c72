"""MediaWiki API (Wikipedia, Wikibooks): a page's wikitext and its infobox, one exact API call per title.

The call, as recorded in the snapshot (and as OpenWines' scraper made it, in JSON instead of xmlfm):
    {api}?action=query&prop=revisions&rvprop=content|ids|timestamp&rvslots=main&rvsection=0&titles={title}
         &redirects=1&format=json&formatversion=2
One title per call, so each document's raw bytes are exactly one response. The infobox is parsed with
mwparserfromhell, whose strip_code keeps a link's label only (so "[[Climat tempéré|tempéré]]" reads "tempéré" and
the duplication seen in flattened extracts cannot arise); the document URL is the revision's permanent link.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Literal
from urllib.parse import quote, urlsplit

import httpx
import mwparserfromhell
from pydantic import Field

from benchmark_platform.ingest.adapters.base import Record, SourceBase, field_lines
from benchmark_platform.ingest.cleaners import paragraphs, squash
from benchmark_platform.ingest.fetch import Fetcher


class MediaWikiSource(SourceBase):
    adapter: Literal["mediawiki"]
    api: str = Field(pattern=r"^https?://.+/api\.php$")
    titles: list[str] = Field(min_length=1)
    section: int | None = 0  # 0: the lead section, where the infobox is; None: the whole page
    infobox_prefix: str = "Infobox"

    def call(self, title: str) -> str:
        params = {
            "action": "query",
            "prop": "revisions",
            "rvprop": "content|ids|timestamp",
            "rvslots": "main",
            **({"rvsection": str(self.section)} if self.section is not None else {}),
            "titles": title,
            "redirects": "1",
            "format": "json",
            "formatversion": "2",
        }
        return str(httpx.URL(self.api, params=params))

    def request_urls(self) -> list[str]:
        return [self.call(t) for t in self.titles]

    def read(self, fetcher: Fetcher) -> Iterator[Record]:
        site = "{0.scheme}://{0.netloc}".format(urlsplit(self.api))
        for title, url in zip(self.titles, self.request_urls(), strict=True):
            fetched = fetcher.get(url)
            decoded = fetched.decoded()
            try:
                data = json.loads(decoded.text)
                if "error" in data:
                    yield self.reject(url, f"API error {data['error'].get('code')}: {data['error'].get('info')}")
                    continue
                page = data["query"]["pages"][0]
                if page.get("missing") or page.get("invalid"):
                    yield self.reject(url, f"page {title!r} does not exist")
                    continue
                revision = page["revisions"][0]
                content = revision["slots"]["main"]["content"]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                yield self.reject(
                    url, f"not a MediaWiki query response: {type(exc).__name__}: {exc}", decoded.text[:200]
                )
                continue
            wikicode = mwparserfromhell.parse(content)
            infobox = next(
                (
                    t
                    for t in wikicode.filter_templates(recursive=False)
                    if str(t.name).strip().lower().startswith(self.infobox_prefix.lower())
                ),
                None,
            )
            fields = (
                {}
                if infobox is None
                else {squash(str(p.name)): value for p in infobox.params if (value := squash(p.value.strip_code()))}
            )
            for template in wikicode.filter_templates(recursive=False):
                wikicode.remove(template)
            for tag in wikicode.filter_tags(matches=lambda node: str(node.tag).lower() == "ref"):
                if tag in wikicode.nodes:
                    wikicode.remove(tag)
            lead = paragraphs(wikicode.strip_code(normalize=True, collapse=True).splitlines())
            page_title = page.get("title", title)
            text = "\n\n".join(part for part in (field_lines(fields), lead) if part)
            if not text:
                yield self.reject(url, f"page {page_title!r} has neither an infobox nor text")
                continue
            permalink = f"{site}/w/index.php?title={quote(page_title.replace(' ', '_'))}&oldid={revision['revid']}"
            yield self.document(
                fetched,
                text=text,
                title=page_title,
                url=permalink,
                content_date=datetime.fromisoformat(revision["timestamp"].replace("Z", "+00:00")).date(),
                metadata={
                    "fields": fields,
                    "infobox": squash(str(infobox.name)) if infobox else None,
                    "revid": revision["revid"],
                    "pageid": page.get("pageid"),
                    "api_call": url,
                    "encoding": decoded.encoding,
                },
            )
