"""A small Markdown renderer for the datasheet: headings, paragraphs, bullet lists (two levels, indented continuation
lines), pipe tables, **bold**, _italic_, `code` and [links](https://...). Every text is HTML-escaped before any markup
is added, and a link keeps only an http(s) target, so a table's cell can never inject markup into the report."""

from __future__ import annotations

import html
import re

_CODE = re.compile(r"`([^`]+)`")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_ITALIC = re.compile(r"(?<![\w*])_(.+?)_(?![\w*])")
_LINK = re.compile(r"\[([^\]]+)\]\((https?://[^)\s]+)\)")
_TABLE_RULE = re.compile(r"^\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?$")


def inline(text: str) -> str:
    """One line's inline markup; code spans are cut out first so nothing inside them is formatted."""
    spans: list[str] = []

    def keep(match: re.Match[str]) -> str:
        spans.append(f"<code>{html.escape(match.group(1))}</code>")
        return f"\x00{len(spans) - 1}\x00"

    out = html.escape(_CODE.sub(keep, text), quote=True)
    out = _LINK.sub(lambda m: f'<a href="{m.group(2)}" rel="noopener">{m.group(1)}</a>', out)
    out = _BOLD.sub(r"<strong>\1</strong>", out)
    out = _ITALIC.sub(r"<em>\1</em>", out)
    return re.sub("\x00(\\d+)\x00", lambda m: spans[int(m.group(1))], out)


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _table(rows: list[str]) -> str:
    head, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
    out = ['<div class="table-wrap"><table>', "<thead><tr>"]
    out += [f'<th scope="col">{inline(c)}</th>' for c in head]
    out.append("</tr></thead><tbody>")
    for row in body:
        out.append("<tr>" + "".join(f"<td>{inline(c)}</td>" for c in row) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def render(markdown: str) -> str:
    """HTML for the Markdown text (block by block; unknown constructs stay escaped text)."""
    lines = markdown.splitlines()
    out: list[str] = []
    paragraph: list[str] = []
    items: list[tuple[int, str]] = []  # (level, text) of the open list

    def flush() -> None:
        if paragraph:
            out.append(f"<p>{inline(' '.join(paragraph))}</p>")
            paragraph.clear()
        if items:
            out.append(_list(items))
            items.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if not stripped:
            flush()
        elif heading := re.match(r"^(#{1,6})\s+(.*)$", line):
            flush()
            level = len(heading.group(1))
            out.append(f"<h{level}>{inline(heading.group(2))}</h{level}>")
        elif stripped.startswith("|") and i + 1 < len(lines) and _TABLE_RULE.match(lines[i + 1].strip()):
            flush()
            rows = [line, lines[i + 1]]
            i += 2
            while i < len(lines) and lines[i].strip().startswith("|"):
                rows.append(lines[i])
                i += 1
            out.append(_table(rows))
            continue
        elif bullet := re.match(r"^(\s*)[-*]\s+(.*)$", line):
            if paragraph:
                flush()
            items.append((1 if len(bullet.group(1)) >= 2 else 0, bullet.group(2)))
        elif items and line.startswith(" "):  # an indented continuation of the last bullet
            level, text = items[-1]
            items[-1] = (level, f"{text} {stripped}")
        else:
            if items:
                flush()
            paragraph.append(stripped)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def _list(items: list[tuple[int, str]]) -> str:
    out = ["<ul>"]
    nested = False
    for level, text in items:
        if level and not nested:
            out[-1] = out[-1].removesuffix("</li>")
            out.append("<ul>")
            nested = True
        elif not level and nested:
            out.append("</ul></li>")
            nested = False
        out.append(f"<li>{inline(text)}</li>")
    if nested:
        out.append("</ul></li>")
    out.append("</ul>")
    return "".join(out)
