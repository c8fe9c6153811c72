"""What a reviewer sees of an item's sources: readable text around the fact's span, and a link a person can open."""

from __future__ import annotations

import re
from typing import Final

from pydantic import BaseModel, ConfigDict

EXCERPT_CONTEXT_CHARS: Final[int] = 400  # read on each side of the span, before trimming to whole sentences or lines
_BREAK = re.compile(r"(?<=[.!?])\s+|\n+")
_RAW_GITHUB = re.compile(r"^https://raw\.githubusercontent\.com/([^/]+)/([^/]+)/([^/]+)/(.+)$")


class Excerpt(BaseModel):
    """The fact's span with the sentences (or lines) around it: before + span + after is a run of the document."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    before: str
    span: str
    after: str
    cut_before: bool  # the document goes on before the excerpt
    cut_after: bool


def excerpt(before: str, span: str, after: str, sentences: int = 2) -> Excerpt:
    """Keep at most ``sentences`` whole sentences or lines on each side of the span, so the context reads as text
    rather than starting or stopping mid-word."""
    starts = [m.end() for m in _BREAK.finditer(before.rstrip())]
    keep_from = starts[-sentences] if len(starts) >= sentences else 0
    ends = [m.start() for m in _BREAK.finditer(after)]
    keep_to = ends[sentences - 1] if len(ends) >= sentences else len(after)
    return Excerpt(
        before=before[keep_from:],
        span=span,
        after=after[:keep_to],
        cut_before=keep_from > 0 or len(before) >= EXCERPT_CONTEXT_CHARS,
        cut_after=keep_to < len(after) or len(after) >= EXCERPT_CONTEXT_CHARS,
    )


def provenance_url(url: str) -> str:
    """The page a person reads for a document URL: a raw file in a Git repository becomes its page at the same commit
    (GitHub renders GeoJSON as a map and CSV as a table); other URLs are already pages."""
    match = _RAW_GITHUB.match(url)
    if match:
        owner, repository, commit, path = match.groups()
        return f"https://github.com/{owner}/{repository}/blob/{commit}/{path}"
    return url


_MARKUP = re.compile(r"[*_`#]+")


def link_titles(titles: list[str], links: list[str]) -> list[str]:
    """The text of each source link, naming its own document: Markdown emphasis a title picked up from its document is
    dropped, and titles that repeat across different links get the linked file's name, so two rulebooks filed under one
    generic title stay apart."""
    clean = [" ".join(_MARKUP.sub("", t or "").split()) or link for t, link in zip(titles, links, strict=True)]
    targets: dict[str, set[str]] = {}
    for title, link in zip(clean, links, strict=True):
        targets.setdefault(title, set()).add(link)
    return [
        f"{title} ({link.rstrip('/').rsplit('/', 1)[-1]})" if len(targets[title]) > 1 else title
        for title, link in zip(clean, links, strict=True)
    ]
