"""Official French texts: INAO appellation rulebooks (cahiers des charges) as published on Légifrance, in HTML or in
Etalab's Markdown conversion (Markdown with embedded HTML tables). One document per text; tables become one line per
row with " | " between cells, and the numbered headings of the rulebook (I. ― ..., 1° ...) are kept as an outline
with their offsets in the text, so later stages can tell which chapter a fact comes from."""

from __future__ import annotations

import re
from collections.abc import Iterator

from bs4 import BeautifulSoup

from benchmark_platform.ingest.adapters.base import Record, document, reject
from benchmark_platform.ingest.cleaners import paragraphs, squash
from benchmark_platform.ingest.config import LegalTextSource
from benchmark_platform.ingest.encoding import encoding_problems
from benchmark_platform.ingest.fetch import Fetcher

_HEADING = re.compile(r"^(?:Chapitre [IVXL]+(?:er)?|[IVXL]+\. ―.*|\d+° .*)$", re.MULTILINE)
_APPELLATION = re.compile(r"CAHIER DES CHARGES DE L'APPELLATION D'ORIGINE\s+CONTRÔLÉE\s+(.+)", re.IGNORECASE)


def legal_text(markup: str) -> str:
    """Plain text of a Légifrance/Etalab text: tags dropped, tables one row per line, Markdown headings unmarked."""
    soup = BeautifulSoup(markup, "html.parser")
    for table in soup.find_all("table"):
        rows = [
            " | ".join(squash(cell.get_text(" ")) for cell in tr.find_all(["td", "th"])) for tr in table.find_all("tr")
        ]
        table.replace_with("\n\n" + "\n\n".join(r for r in rows if r.strip(" |")) + "\n\n")
    for br in soup.find_all("br"):
        br.replace_with(" ")
    lines = [re.sub(r"^#+\s*", "# ", line) for line in soup.get_text().splitlines()]
    return paragraphs(lines)


def outline(text: str) -> list[dict[str, object]]:
    return [{"heading": m.group(0), "start": m.start()} for m in _HEADING.finditer(text)]


def read(source: LegalTextSource, fetcher: Fetcher) -> Iterator[Record]:
    for url in source.listed_urls():
        fetched = fetcher.get(url)
        decoded = fetched.decoded()
        text = legal_text(decoded.text)
        if problems := encoding_problems(text):
            yield reject(source, url, f"text decoded as {decoded.encoding} looks wrong: {'; '.join(problems)}")
            continue
        if len(text) < 200:
            yield reject(source, url, f"only {len(text)} characters of text")
            continue
        found = _APPELLATION.search(text)
        title = f"Cahier des charges de l'AOC {squash(found.group(1)).title()}" if found else source.title
        yield document(
            source,
            fetched,
            text=text,
            title=title,
            url=source.canonical_url or url,
            metadata={
                "outline": outline(text),
                "encoding": decoded.encoding,
                "appellation": squash(found.group(1)) if found else None,
            },
        )
