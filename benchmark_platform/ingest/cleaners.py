"""Cleaners for the dirt real sources carry; each is a pure function on one value or one page, named in the spec.

Every rule here answers a defect seen in ../shared/data: MediaWiki chrome in a rendered Wikibooks page, link target and
label both kept when infobox wikitext was flattened ("Climat tempéré tempéré"), French thousands separators in
FranceAgriMer areas ("6.262" ha is 6,262 ha), and leading spaces and wrong state codes in TTB AVA reports.
A cleaner that cannot make sense of a value raises ValueError; the adapter turns that into a rejected record.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from bs4 import BeautifulSoup

from benchmark_platform.ingest.config import CleanerName

# -- whitespace ---------------------------------------------------------------------------------------------------

_SPACES = re.compile(r"[ \t\u00a0\u2007\u202f]+")


def squash(value: str) -> str:
    """Trim and collapse runs of spaces, tabs and no-break spaces (NFC-normalised)."""
    return _SPACES.sub(" ", unicodedata.normalize("NFC", value)).strip()


def paragraphs(lines: list[str]) -> str:
    """Join wrapped lines into paragraphs (blank line = break); list items and headings stay on their own line."""
    out: list[str] = []
    current: list[str] = []
    for raw in lines:
        line = squash(raw)
        if not line or line.startswith(("• ", "# ")):
            if current:
                out.append(" ".join(current))
                current = []
            if line:
                out.append(line.removeprefix("# "))
            continue
        current.append(line)
    if current:
        out.append(" ".join(current))
    return "\n".join(out)


# -- infobox values flattened from wikitext -----------------------------------------------------------------------

_WORD = re.compile(r"\S+")
_IMAGE_RESIDUE = re.compile(r"(?:Image|Fichier|File):[^|]*?\.(?:svg|png|jpe?g|gif)\s+(?:\d+px\s*)?", re.IGNORECASE)
_TEMPLATE_RESIDUE = re.compile(r"\b(?:unité|nombre|formatnum:?)\s+(?=\d)", re.IGNORECASE)
_GLUED_NUMBER = re.compile(r"(?<=[a-zà-ÿ])(?=\d)")
_GLUED_WORDS = re.compile(r"(?<=[a-zà-ÿ])(?=[A-ZÀ-Ý][a-zà-ÿ])|(?<=[,;])(?=[^\s\d])")
_REFERENCE = re.compile(r"(?<=\d)\s*(?:[A-Z][a-z]{0,3} )?''.*$")  # a flattened <ref>: "93355 hl en 2009''Le Guide..."
_PLACEHOLDERS = {"à compléter", "a compléter", "?"}  # an empty infobox field as the template shows it
_DISAMBIGUATED_LINK = re.compile(r"([\w'’-]+(?: [\w'’-]+){0,4}) \([^()]{2,40}\) (?=\1\b)", re.IGNORECASE)


def _norm_word(word: str) -> str:
    word = word.casefold().strip(",;.")
    return word[:-1] if word.endswith(("s", "x")) and len(word) > 3 else word


def dedupe_link_text(value: str) -> str:
    """Drop the link target where flattening kept target and label: "Climat tempéré tempéré" -> "Climat tempéré",
    "Vienne (département) Vienne" -> "Vienne", "Vin rouge rouges" -> "Vin rouges" (label kept, plural-tolerant)."""
    value = _DISAMBIGUATED_LINK.sub("", value)
    words = _WORD.findall(value)
    changed = True
    while changed:
        changed = False
        for size in range(min(6, len(words) // 2), 0, -1):
            for start in range(len(words) - 2 * size + 1):
                first = [_norm_word(w) for w in words[start : start + size]]
                second = [_norm_word(w) for w in words[start + size : start + 2 * size]]
                if first == second and any(len(w) > 2 for w in first):
                    del words[start : start + size]
                    changed = True
                    break
            if changed:
                break
    return " ".join(words)


def clean_infobox_value(value: str) -> str:
    """A flattened French-Wikipedia infobox value, cleaned of link duplication, template/image residue, flattened
    references and words glued where a line break was dropped ("Loire-AtlantiqueMaine-et-Loire")."""
    if squash(value).casefold() in _PLACEHOLDERS:
        return ""
    value = _REFERENCE.sub("", value).replace("''", "").replace("_", " ")
    value = _IMAGE_RESIDUE.sub("", value)
    value = _GLUED_WORDS.sub(" ", value)
    value = _TEMPLATE_RESIDUE.sub("", value)
    value = _GLUED_NUMBER.sub(" ", value)
    return dedupe_link_text(squash(value))


# -- numbers --------------------------------------------------------------------------------------------------------

_FR_THOUSANDS = re.compile(r"\d{1,3}(?:[.\u00a0\u202f ]\d{3})+")


def french_integer(value: str) -> int:
    """An integer written the French way: "6.262" or "6 262" is 6262, "784" is 784. Anything else is an error
    (a decimal comma, or a value that is not a number at all, as in FranceAgriMer's malformed 2014 rows)."""
    text = value.strip()
    if text.isdigit():
        return int(text)
    if _FR_THOUSANDS.fullmatch(text):
        return int(re.sub(r"\D", "", text))
    raise ValueError(f"{value!r} is not an integer with French thousands separators")


def french_decimal(value: str) -> float:
    """A French decimal: "12,50" is 12.5, "0.7" is 0.7, "1 605,5" is 1605.5."""
    text = re.sub(r"[\u00a0\u202f ]", "", value.strip()).replace(",", ".")
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"{value!r} is not a decimal number") from None


# -- TTB AVA reports -----------------------------------------------------------------------------------------------

US_STATES = frozenset(
    "AL AK AZ AR CA CO CT DE DC FL GA HI ID IL IN IA KS KY LA ME MD MA MI MN MS MO MT NE NV NH NJ NM NY NC ND OH OK "
    "OR PA RI SC SD TN TX UT VT VA WA WV WI WY PR VI GU AS MP".split()
)
# Codes the UC Davis reports use wrongly, checked against the per-AVA GeoJSON of the same CFR section:
# no AVA lies in Alaska (AK) or the US Virgin Islands (VI); the reports mean Arkansas (9.77 Altus, 9.112 Arkansas
# Mountain) and Virginia (9.60 Shenandoah Valley, 9.260 Appalachian High Country).
AVA_STATE_CORRECTIONS = {"AK": "AR", "VI": "VA"}


def ava_states(value: str) -> str:
    """A "|"-separated list of state codes as published for an AVA, stripped and corrected."""
    codes = []
    for code in (c.strip().upper() for c in value.split("|")):
        code = AVA_STATE_CORRECTIONS.get(code, code)
        if code not in US_STATES:
            raise ValueError(f"{code!r} is not a US state code")
        codes.append(code)
    if not codes:
        raise ValueError("no state code")
    return "|".join(codes)


# -- pages ----------------------------------------------------------------------------------------------------------

_EDIT_SECTION = re.compile(r"\[\s*\[edit\]\([^)]*\)\s*\|\s*\[edit source\]\([^)]*\)\s*\]", re.DOTALL)
_IMAGE_LINK = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")
_LINK = re.compile(r"\[([^\]]*)\]\((?:[^()]|\([^)]*\))*\)")
_AUTOLINK = re.compile(r"<https?://[^>]+>")
_EMPHASIS = re.compile(r"\*{1,3}(?=\S)|(?<=\S)\*{1,3}")
_RULE = re.compile(r"^\s*(?:[-=]{3,}|\|?(?:\s*:?-{3,}:?\s*\|)+\s*:?-*:?\s*)\s*$")
_MAINTENANCE = re.compile(
    r"This page or section is an undeveloped draft or outline\.|You can help to develop the work"
    r"|you can ask for assistance in the project room|has related information at",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*[*+-]\s+")


def strip_mediawiki_chrome(markdown: str) -> str:
    """Content of a MediaWiki page rendered to Markdown with the site chrome: header, navigation, table of contents,
    edit links, maintenance boxes, images, categories and footer removed; headings, paragraphs and list items kept."""
    lines = markdown.splitlines()
    start = 0
    for i, line in enumerate(lines):
        if line.strip() == "Contents" and i + 1 < len(lines) and set(lines[i + 1].strip()) == {"-"}:
            start = next(
                (
                    j - 1
                    for j in range(i + 2, len(lines))
                    if _RULE.match(lines[j]) and lines[j].strip() and set(lines[j].strip()) == {"="}
                ),
                i,
            )
            break
    end = next(
        (i for i, line in enumerate(lines) if line.strip().startswith(('Retrieved from "', "Navigation menu"))),
        len(lines),
    )
    body = "\n".join(lines[start:end])
    body = _EDIT_SECTION.sub("", body)
    body = _IMAGE_LINK.sub("", body)
    body = _LINK.sub(r"\1", body)
    body = _AUTOLINK.sub("", body)
    body = _EMPHASIS.sub("", body)
    kept: list[str] = []
    for line in body.splitlines():
        stripped = line.strip()
        if _RULE.match(line) or stripped.strip("|").strip() == "" and "|" in stripped or stripped.startswith("###"):
            kept.append("")  # a heading underline, table rule, empty cell row or bare ATX marker ends a block
            continue
        if _BULLET.match(line):
            kept.extend(["", "• " + _BULLET.sub("", line).strip()])
            continue
        kept.append(stripped.strip("|").strip())
    text = paragraphs(kept)
    return "\n".join(
        p.removeprefix("• ") for p in text.split("\n") if not _MAINTENANCE.search(p) and p not in {".", ",", "|", "•"}
    )


_BOILERPLATE_TAGS = (
    "script",
    "style",
    "noscript",
    "nav",
    "header",
    "footer",
    "aside",
    "form",
    "iframe",
    "svg",
    "button",
    "template",
)
_BOILERPLATE_MARK = re.compile(
    r"(^|[-_ ])(nav|navbar|navigation|menu|sidebar|footer|header|breadcrumbs?|cookie|banner"
    r"|toc|mw-editsection|mw-jump-link|printfooter|catlinks|noprint|share|social|skip)"
    r"($|[-_ ])",
    re.IGNORECASE,
)
_CONTENT_SELECTORS = ("#mw-content-text", "main", "article", "[role=main]", "#content", ".content")


def strip_html_boilerplate(html: str) -> tuple[str, str]:
    """(title, text) of an HTML page with navigation, headers, footers, scripts and edit links removed."""
    soup = BeautifulSoup(html, "html.parser")
    title = squash(soup.title.get_text()) if soup.title else ""
    for tag in soup(_BOILERPLATE_TAGS):
        tag.decompose()
    for tag in soup.find_all(role=["navigation", "banner", "contentinfo"]):
        tag.decompose()
    for tag in soup.find_all(True):
        if tag.decomposed or tag.attrs is None:
            continue
        marks = " ".join([str(tag.get("id") or ""), *(tag.get("class") or [])])
        if marks and _BOILERPLATE_MARK.search(marks):
            tag.decompose()
    root = next((found for sel in _CONTENT_SELECTORS if (found := soup.select_one(sel)) is not None), soup.body or soup)
    for block in root.find_all(["p", "div", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "br", "table", "ul", "ol"]):
        block.insert_before("\n")
        block.insert_after("\n")
    for item in root.find_all("li"):
        item.insert(0, "• ")
    for cell in root.find_all(["td", "th"]):
        cell.insert_after(" | ")
    text = paragraphs(root.get_text().splitlines())
    text = "\n".join(line.removeprefix("• ").rstrip(" |") for line in text.split("\n"))
    if not title and (heading := soup.find(["h1", "h2"])):
        title = squash(heading.get_text())
    return title, text


# -- registry used by the spec (config.CleanerName lists the same names; a test checks) -------------------------------

VALUE_CLEANERS: dict[CleanerName, Callable[[str], object]] = {
    "strip": squash,
    "infobox": clean_infobox_value,
    "french_integer": french_integer,
    "french_decimal": french_decimal,
    "ava_states": ava_states,
}
