"""Structured records (GeoJSON properties, CSV rows, infobox fields) -> facts through the spec's per-source
templates. A fact is anchored at the span of the value it states in the document text, so a value that is not in
the served text cannot become a fact."""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator
from typing import Any

from benchmark_platform.facts.config import FactsConfig, FactTemplate
from benchmark_platform.facts.gazetteer import Gazetteer
from benchmark_platform.facts.models import Candidate, Mention, Rejection, SourceDocument, one_article
from benchmark_platform.facts.rules import OnTopic


class TemplateError(ValueError):
    pass


def records(document: SourceDocument) -> Iterator[tuple[dict[str, Any], int]]:
    """(record, offset in the text where its values are searched from) of a structured document: the fields or
    rows ingestion recorded in its metadata, else the served GeoJSON's first feature or the CSV's rows."""
    if isinstance(document.metadata.get("fields"), dict):
        yield document.metadata["fields"], 0
    elif isinstance(document.metadata.get("rows"), list):
        cursor = 0
        for row in document.metadata["rows"]:
            yield row, cursor
            ends = [
                p + len(str(v))
                for v in row.values()
                if v not in (None, "") and (p := document.text.find(str(v), cursor)) >= 0
            ]
            cursor = min(ends, default=cursor)  # still inside this row: the next row starts after it
    elif document.media_type == "application/geo+json":
        yield json.loads(document.text)["features"][0]["properties"], 0
    elif document.media_type == "text/csv":
        lines = document.text.splitlines(keepends=True)
        header = next(csv.reader(io.StringIO(lines[0])))
        offset = len(lines[0])
        for line in lines[1:]:
            row = next(csv.reader(io.StringIO(line)), None)
            if row and len(row) == len(header):
                yield dict(zip(header, row, strict=True)), offset
            offset += len(line)


def value_span(text: str, start: int, field: str, value: str) -> tuple[int, int] | None:
    """Where the field's value stands in the text, searching from `start`: as a 'field: value' line, as a JSON
    member, or (CSV) as the next occurrence of the value."""
    for pattern in (
        re.escape(f"{field}: ") + r"(?=" + re.escape(value) + ")",
        re.escape(json.dumps(field)) + r"\s*:\s*\"(?=" + re.escape(json.dumps(value)[1:-1]) + ")",
    ):
        match = re.compile(pattern).search(text, start)
        if match:
            length = len(value) if text.startswith(value, match.end()) else len(json.dumps(value)) - 2
            return match.end(), match.end() + length
    position = text.find(value, start)
    return (position, position + len(value)) if position >= 0 else None


def stated_number(value: str, decimals: int) -> str:
    """A source's number as prose: rounded to `decimals`, trailing zeros dropped, thousands grouped by commas."""
    text = f"{float(value):,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def render(value: Any, separator: str) -> str:
    """A field value as prose: 'Napa|Sonoma|Lake' -> 'Napa, Sonoma and Lake'."""
    parts = [p.strip() for p in str(value).split(separator) if p.strip()] if separator else [str(value).strip()]
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def extract_structured(
    document: SourceDocument, config: FactsConfig, gazetteer: Gazetteer, on_topic: OnTopic
) -> tuple[list[Candidate], list[Rejection]]:
    templates = [t for t in config.templates if t.source == document.source_id]
    candidates: list[Candidate] = []
    rejections: list[Rejection] = []
    if not templates:
        return candidates, rejections
    for record, offset in records(document):
        for template in templates:
            value, subject = record.get(template.field), record.get(template.subject_field)
            problem = _unusable_row(template, subject, value)
            value = str(value).strip()
            span = value_span(document.text, offset, template.field, value) if problem is None else None
            if span is None:
                reason, text, detail = problem or ("value not in the document text", value, template.field)
                rejections.append(
                    Rejection(
                        document.source_id,
                        document.document_id,
                        offset,
                        offset + 1,
                        "template",
                        reason,
                        text,
                        detail=detail,
                        discipline=template.discipline,
                    )
                )
                continue
            if config.list_separator and config.list_separator in value:
                # a multi-valued field gives one fact per value, each anchored at its own part of the value's span
                parts = _parts(document.text, span, value, config.list_separator)
            else:
                parts = [(value, span)]
            if template.value_entity_type is not None:
                parts, unresolved = _resolved(parts, template.value_entity_type, gazetteer)
                rejections += [
                    Rejection(
                        document.source_id,
                        document.document_id,
                        *part_span,
                        "template",
                        f"value names no {template.value_entity_type} of the gazetteer",
                        part,
                        detail=template.field,
                        discipline=template.discipline,
                    )
                    for part, part_span in unresolved
                ]
            for part, part_span in parts:
                candidate = _fact(document, template, record, part, str(subject).strip(), part_span, config, gazetteer)
                _check(candidate, document, part_span, template, config, on_topic, candidates, rejections)
    return candidates, rejections


_PARTICLES = frozenset({"de", "du", "des", "di", "da", "do", "dos", "das", "del", "della", "la", "le", "les", "of"})


def name_case(name: str) -> str:
    """'moreto' -> 'Moreto', 'nero d'avola' -> 'Nero d'Avola', 'muscat of alexandria' -> 'Muscat of Alexandria'."""

    def word(w: str, first: bool) -> str:
        if not first and w in _PARTICLES:
            return w
        elided = re.match(r"^([dl]')(.+)$", w)
        if elided and not first:
            return elided.group(1) + word(elided.group(2), True)
        return "-".join(p[:1].upper() + p[1:] for p in w.split("-"))

    return " ".join(word(w, i == 0) for i, w in enumerate(name.split()))


def _unusable_row(template: FactTemplate, subject: object, value: object) -> tuple[str, str, str] | None:
    """Why a record gives this template no fact (reason, offending text, field), or None when it may."""
    if value in (None, "") or subject in (None, ""):
        return "empty field", "", template.field if value in (None, "") else template.subject_field
    subject_text, value_text = str(subject).strip(), str(value).strip()
    if subject_text in template.skip_subjects:
        return "an aggregate row, not an entity", subject_text, template.subject_field
    if template.subject_pattern is not None and not re.fullmatch(template.subject_pattern, subject_text):
        return "subject is not a clean name (mis-decoded or annotated)", subject_text, template.subject_field
    if template.value_pattern is not None and not re.fullmatch(template.value_pattern, value_text):
        return "value does not match the field's pattern", value_text, template.field
    if template.value_decimals is not None and not re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", value_text):
        return "value is not a number", value_text, template.field
    return None


def _parts(text: str, span: tuple[int, int], value: str, separator: str) -> list[tuple[str, tuple[int, int]]]:
    """The values of a multi-valued field with their spans inside the field's span ('Napa|Sonoma')."""
    out, at = [], span[0]
    for raw in value.split(separator):
        part = raw.strip()
        position = text.find(part, at, span[1]) if part else -1
        if position >= 0:
            out.append((part, (position, position + len(part))))
            at = position + len(part)
    return out


Part = tuple[str, tuple[int, int]]


def _resolved(parts: list[Part], entity_type: str, gazetteer: Gazetteer) -> tuple[list[Part], list[Part]]:
    """(values that name an entity of the type, values that do not): a part that resolves alone stays; one that does
    not is joined with the next part when the two resolve together (the source split one name at a space)."""

    def resolves(name: str) -> bool:
        known = gazetteer.lookup(name)
        return known is not None and known.entity_type == entity_type

    good, bad, i = [], [], 0
    while i < len(parts):
        part, span = parts[i]
        if resolves(part):
            good.append((part, span))
            i += 1
        elif i + 1 < len(parts) and resolves(joined := f"{part} {parts[i + 1][0]}"):
            good.append((joined, (span[0], parts[i + 1][1][1])))
            i += 2
        else:
            bad.append((part, span))
            i += 1
    return good, bad


def _check(
    candidate: Candidate,
    document: SourceDocument,
    span: tuple[int, int],
    template: FactTemplate,
    config: FactsConfig,
    on_topic: OnTopic,
    candidates: list[Candidate],
    rejections: list[Rejection],
) -> None:
    """Filters 4 and 5 (length, on-topic) on a templated fact: kept in `candidates` or recorded in `rejections`."""
    words = candidate.words
    if not config.min_words <= words <= config.max_words:
        reason = (
            f"fewer than {config.min_words} words"
            if words < config.min_words
            else f"more than {config.max_words} words"
        )
        rejections.append(
            Rejection(
                document.source_id,
                document.document_id,
                *span,
                "validate",
                reason,
                candidate.text,
                discipline=template.discipline,
            )
        )
    elif (name := on_topic.off_topic(document.source_id, candidate.text)) is not None:
        rejections.append(
            Rejection(
                document.source_id,
                document.document_id,
                *span,
                "on_topic",
                "off topic",
                candidate.text,
                detail=name,
                discipline=template.discipline,
            )
        )
    else:
        candidates.append(candidate)


def _fact(
    document: SourceDocument,
    template: FactTemplate,
    record: dict[str, Any],
    value: str,
    subject: str,
    span: tuple[int, int],
    config: FactsConfig,
    gazetteer: Gazetteer,
) -> Candidate:
    fields = {k: render(v, config.list_separator) for k, v in record.items() if v not in (None, "")}
    if template.value_decimals is not None:
        value = stated_number(value, template.value_decimals)
    fields[template.field] = value  # one value of a multi-valued field: the fact states that value alone
    named = template.subject_names.get(subject)
    if named is not None:
        subject = fields[template.subject_field] = named
    elif template.name_case:
        subject = fields[template.subject_field] = name_case(subject)
    try:
        text = template.template.format_map(fields)
    except KeyError as missing:
        raise TemplateError(
            f"facts.templates ({template.source}, {template.field}): record of document "
            f"{document.document_id} has no field {missing}"
        ) from None
    text = one_article(text[:1].upper() + text[1:])
    entity = gazetteer.entity_for(subject, template.entity_type)
    mentions = [Mention(entity.entity_id, entity.entity_type, subject)]
    if template.subject_template is not None:
        subject = template.subject_template.format_map(fields)
    for part in value.split(config.list_separator):
        known = gazetteer.lookup(part)
        if known is not None and known != entity:
            mentions.append(Mention(known.entity_id, known.entity_type, part.strip()))
    return Candidate(
        source_id=document.source_id,
        document_id=document.document_id,
        span_start=span[0],
        span_end=span[1],
        discipline=template.discipline,
        text=text,
        source_text=document.text[span[0] : span[1]],
        confidence=1.0,
        method=f"template:{template.field}",
        mentions=tuple(mentions),
        attributes={
            "subject": subject,
            "field": template.field,
            "value": value,
            "entity_type": template.entity_type,
            "entity_id": entity.entity_id,
        },
    )
