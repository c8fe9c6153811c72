"""What a served body is: its media type and its text encoding, the server's declaration checked against the bytes.

Real sources lie about both: statistics CSVs are cp1252 while served as UTF-8, a UTF-8 page may be labelled
ISO-8859-1, and raw file hosts serve everything as text/plain. The rules, in order:
1. a byte-order mark wins;
2. bytes that are valid UTF-8 and not pure ASCII are UTF-8 whatever was declared (a cp1252 text is practically never
   valid multi-byte UTF-8), so a wrong Latin-1 label cannot produce mojibake;
3. otherwise the declared charset if the bytes decode with it; ISO-8859-1 and ASCII labels mean windows-1252
   (as browsers read them, WHATWG Encoding);
4. otherwise windows-1252, and Latin-1 (which decodes every byte) for the five bytes cp1252 leaves undefined.
`Decoded.mismatch` says when the declaration was overruled, so the record keeps what the server claimed.
"""

from __future__ import annotations

import codecs
import mimetypes
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

_SUFFIX_TYPES = {
    ".geojson": "application/geo+json",
    ".json": "application/json",
    ".csv": "text/csv",
    ".md": "text/markdown",
    ".xls": "application/vnd.ms-excel",
    ".html": "text/html",
    ".htm": "text/html",
    ".txt": "text/plain",
}
_GENERIC_TYPES = {"", "application/octet-stream", "text/plain", "binary/octet-stream"}
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_\-:.]+)", re.IGNORECASE)
_LATIN1_LABELS = {"latin-1", "iso8859-1", "ascii", "cp1252"}
_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # codec actually used
    declared: str | None  # codec named by the server (Content-Type charset or HTML meta), normalised
    mismatch: bool  # the declaration was present and overruled by the bytes


def media_type(content_type: str | None, url: str) -> str:
    """The declared media type without parameters; a generic or missing one is refined from the URL's suffix."""
    declared = (content_type or "").split(";", 1)[0].strip().lower()
    if declared not in _GENERIC_TYPES:
        return declared
    path = urlsplit(url).path.lower()
    for suffix, guessed in _SUFFIX_TYPES.items():
        if path.endswith(suffix):
            return guessed
    by_suffix, _ = mimetypes.guess_type(path)
    return by_suffix or declared or "application/octet-stream"


def declared_charset(content_type: str | None, body: bytes = b"") -> str | None:
    """The charset named in the Content-Type header, else in an HTML <meta> of the first KiB; None if unknown."""
    match = re.search(r"charset=[\"']?([A-Za-z0-9_\-:.]+)", content_type or "", re.IGNORECASE)
    label = match.group(1) if match else None
    if label is None and (meta := _META_CHARSET.search(body[:1024])):
        label = meta.group(1).decode("ascii")
    if label is None:
        return None
    try:
        return codecs.lookup(label).name
    except LookupError:
        return None


def decode(body: bytes, content_type: str | None = None) -> Decoded:
    declared = declared_charset(content_type, body)
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return Decoded(body.decode(codec), codec, declared, declared not in (None, "utf-8", "utf-16"))
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None and (not text.isascii() or declared in (None, "utf-8")):
        return Decoded(text, "utf-8", declared, declared not in (None, "utf-8") and not text.isascii())
    if declared is not None and declared not in _LATIN1_LABELS and declared != "utf-8":
        try:
            return Decoded(body.decode(declared), declared, declared, False)
        except UnicodeDecodeError:
            pass
    try:
        return Decoded(body.decode("cp1252"), "cp1252", declared, declared not in (None, *_LATIN1_LABELS))
    except UnicodeDecodeError:
        return Decoded(body.decode("latin-1"), "latin-1", declared, declared not in (None, *_LATIN1_LABELS))


_MOJIBAKE = re.compile("Ã[\u0080-\u00bf]|â€|Â[\u00a0-\u00bf]")
_CONTROL = re.compile("[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]")


def encoding_problems(text: str) -> list[str]:
    """Signs that text was decoded with the wrong codec: replacement characters, control bytes, UTF-8-as-Latin-1."""
    problems = []
    if "\ufffd" in text:
        problems.append(f"{text.count(chr(0xFFFD))} replacement character(s) U+FFFD")
    if found := _CONTROL.findall(text):
        problems.append(f"{len(found)} control character(s)")
    if found := _MOJIBAKE.findall(text):
        problems.append(f"{len(found)} mojibake sequence(s) such as {found[0]!r}")
    return problems
