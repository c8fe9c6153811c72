"""Documents as an authority served them, read from a spec's bundled snapshot, with their provenance.

One reader for every source; the adapter named in the spec decides how the served bytes become searchable text.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import date, datetime
from pathlib import Path
from typing import Any

from benchmark_platform.ingest.config import SourceConfig


class IngestError(ValueError):
    pass


@dataclass(frozen=True)
class Document:
    document_id: str
    source_id: str
    url: str
    retrieved_at: datetime
    content_date: date | None
    media_type: str
    content_hash: str
    raw: bytes
    text: str  # what fact spans index into
    title: str
    metadata: dict[str, Any] = field(default_factory=dict)


def document_id(source_id: str, url: str) -> str:
    return hashlib.sha256(f"{source_id}\n{url}".encode()).hexdigest()[:20]


def decode(raw: bytes) -> tuple[str, str]:
    """Text and the encoding used: UTF-8, else cp1252 (several real files are); bytes valid in neither (mixed
    encodings occur in real files) become U+FFFD and the count is recorded, never silently dropped."""
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(encoding), encoding
        except UnicodeDecodeError:
            continue
    text = raw.decode("cp1252", errors="replace")
    return text, f"cp1252 ({text.count(chr(0xFFFD))} undecodable bytes replaced)"


def read_source(source: SourceConfig, snapshot_dir: Path) -> list[Document]:
    paths = sorted({p for pattern in source.files for p in snapshot_dir.glob(pattern)})
    if not paths:
        raise IngestError(f"source {source.id}: no snapshot files match {source.files} under {snapshot_dir}")
    return [read_document(source, path) for path in paths]


def read_document(source: SourceConfig, path: Path) -> Document:
    raw = path.read_bytes()
    if not raw.strip():
        raise IngestError(f"{path}: empty file")
    decoded, encoding = decode(raw)
    media_type, text, title, metadata = _ADAPTERS[source.adapter](decoded, path)
    metadata = {**metadata, "encoding": encoding}
    url = source.url_template.format(file=path.name)
    return Document(
        document_id=document_id(source.id, url), source_id=source.id, url=url,
        retrieved_at=source.retrieved_at, content_date=source.content_date, media_type=media_type,
        content_hash=hashlib.sha256(raw).hexdigest(), raw=raw, text=text, title=title, metadata=metadata,
    )


def _geojson(decoded: str, path: Path) -> tuple[str, str, str, dict[str, Any]]:
    try:
        collection = json.loads(decoded)
        features = collection["features"]
        name = features[0]["properties"]["name"]
    except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
        raise IngestError(f"{path}: not a GeoJSON FeatureCollection with named features ({exc})") from exc
    # the served text itself: structured facts point at the byte span of the value they state
    return "application/geo+json", decoded, name, {"features": len(features)}


def _csv(decoded: str, path: Path) -> tuple[str, str, str, dict[str, Any]]:
    lines = decoded.splitlines()
    if len(lines) < 2:
        raise IngestError(f"{path}: a CSV table needs a header and at least one row")
    return "text/csv", decoded, path.stem, {"rows": len(lines) - 1}


_IMAGE = re.compile(r"!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")  # [text](url "title") -> text
_EDIT = re.compile(r"\[\s*edit\s*\|?\s*edit source\s*\]")
_UNDERLINE = re.compile(r"^\s*[=\-]{3,}\s*$", re.M)  # setext heading underlines
_CHROME_START = re.compile(r"^\s*Grape Vines\s*$", re.M)  # the book's first chapter heading after the contents
_CHROME_END = re.compile(r"^\s*Retrieved from", re.M)
_MAINTENANCE = ("This page or section is an undeveloped draft", "You can help to develop the work")


def clean_wiki_markdown(markdown: str) -> str:
    """The book's prose without MediaWiki chrome (navigation, contents, licence box, edit links, maintenance
    boxes, footer) or markup; paragraphs separated by blank lines."""
    starts = [m.start() for m in _CHROME_START.finditer(markdown)]
    body = markdown[starts[1] if len(starts) > 1 else (starts[0] if starts else 0):]
    end = _CHROME_END.search(body)
    body = body[: end.start()] if end else body
    body = _EDIT.sub("", _LINK.sub(lambda m: m.group(1), _IMAGE.sub("", body)))
    body = _UNDERLINE.sub("\n", body)
    paragraphs = []
    for block in re.split(r"\n\s*\n", body):
        text = re.sub(r"\s+", " ", block.replace("**", "")).strip(" |*#>")
        if not text or re.fullmatch(r"[=\-| ]+", text) or text.startswith(_MAINTENANCE):
            continue
        paragraphs.append(text)
    return "\n\n".join(paragraphs)


def _wiki_markdown(decoded: str, path: Path) -> tuple[str, str, str, dict[str, Any]]:
    text = clean_wiki_markdown(decoded)
    if len(text) < 200:
        raise IngestError(f"{path}: no article prose found after removing the page chrome")
    title = next((ln.strip() for ln in decoded.splitlines() if ln.strip()), path.stem)
    return "text/markdown", text, title.split(" - ")[0], {}


_ADAPTERS = {"geojson_features": _geojson, "csv_table": _csv, "wiki_markdown": _wiki_markdown}
