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
# the rulebook's own heading, wrapped anywhere (the 2009-2011 texts break it across lines and <br/> at random);
# "DES APPELLATIONS ... CONTRÔLÉES" when one rulebook covers several names (Côtes de Bourg, Bourg, Bourgeais)
_APPELLATION = re.compile(
    r"CAHIER\s+DES\s+CHARGES\s+(?:DE\s+L['’]\s*APPELLATION|(DES)\s+APPELLATIONS)\s+D['’]\s*ORIGINE\s+CONTRÔLÉES?[ \t]*",
    re.IGNORECASE,
)
_MARKUP = re.compile(r"[*_#`\"“”«»]+")
_PARTICLES = frozenset({"de", "du", "des", "en", "et", "la", "le", "les", "sur", "sous", "aux"})


def _name_case(name: str) -> str:
    """An appellation's name as written in prose: "SAINT-NICOLAS-DE-BOURGUEIL" -> "Saint-Nicolas-de-Bourgueil";
    str.title() would give "Côtes De Toul"."""
    words = re.split(r"([ -])", name.lower())
    return "".join(w if (w in _PARTICLES and k > 0) else w[:1].upper() + w[1:] for k, w in enumerate(words))


def appellation(text: str) -> tuple[str, bool] | None:
    """The name(s) the rulebook's heading gives, without its quotes and Markdown emphasis (`"CASSIS"**` -> Cassis),
    and whether the rulebook covers several appellations; None when the text has no such heading."""
    found = _APPELLATION.search(text)
    if found is None:
        return None
    rest = text[found.end() :].lstrip(" \t")
    lines = [line for line in rest.split("\n", 3)[:3] if _MARKUP.sub("", line).strip()]
    if not lines:
        return None
    name = squash(re.sub(r"\s+,", ",", _MARKUP.sub(" ", lines[0])))
    return (_name_case(name), found.group(1) is not None) if name else None


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
        named = appellation(text)
        # each rulebook titled by its own appellation; a text without the heading still gets a title of its own
        if named:
            title = ("Cahier des charges des AOC " if named[1] else "Cahier des charges de l'AOC ") + named[0]
        else:
            title = f"{source.title}: {url.rstrip('/').rsplit('/', 1)[-1]}"
        yield document(
            source,
            fetched,
            text=text,
            title=title,
            url=source.canonical_url or url,
            metadata={
                "outline": outline(text),
                "encoding": decoded.encoding,
                "appellation": named[0] if named else None,
            },
        )
