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
from urllib.parse import quote, urlsplit

import httpx
import mwparserfromhell

from benchmark_platform.ingest.adapters.base import Record, document, field_lines, reject
from benchmark_platform.ingest.cleaners import paragraphs, squash
from benchmark_platform.ingest.config import MediaWikiSource
from benchmark_platform.ingest.fetch import Fetcher


def call(source: MediaWikiSource, title: str) -> str:
    """The exact API call that fetches `title` (httpx encodes the parameters)."""
    params = {
        "action": "query",
        "prop": "revisions",
        "rvprop": "content|ids|timestamp",
        "rvslots": "main",
        **({"rvsection": str(source.section)} if source.section is not None else {}),
        "titles": title,
        "redirects": "1",
        "format": "json",
        "formatversion": "2",
    }
    return str(httpx.URL(source.api, params=params))


def request_urls(source: MediaWikiSource) -> list[str]:
    return [call(source, t) for t in source.titles]


def read(source: MediaWikiSource, fetcher: Fetcher) -> Iterator[Record]:
    site = "{0.scheme}://{0.netloc}".format(urlsplit(source.api))
    for title, url in zip(source.titles, request_urls(source), strict=True):
        fetched = fetcher.get(url)
        decoded = fetched.decoded()
        try:
            data = json.loads(decoded.text)
            if "error" in data:
                yield reject(source, url, f"API error {data['error'].get('code')}: {data['error'].get('info')}")
                continue
            page = data["query"]["pages"][0]
            if page.get("missing") or page.get("invalid"):
                yield reject(source, url, f"page {title!r} does not exist")
                continue
            revision = page["revisions"][0]
            content = revision["slots"]["main"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            yield reject(
                source, url, f"not a MediaWiki query response: {type(exc).__name__}: {exc}", decoded.text[:200]
            )
            continue
        wikicode = mwparserfromhell.parse(content)
        infobox = next(
            (
                t
                for t in wikicode.filter_templates(recursive=False)
                if str(t.name).strip().lower().startswith(source.infobox_prefix.lower())
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
            yield reject(source, url, f"page {page_title!r} has neither an infobox nor text")
            continue
        permalink = f"{site}/w/index.php?title={quote(page_title.replace(' ', '_'))}&oldid={revision['revid']}"
        yield document(
            source,
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
