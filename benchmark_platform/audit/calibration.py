"""Gold labels and calibration (OenoBench 4.2, B.6): gold sheets (CSV, cp1252 or UTF-8) with rubric ratings per
reviewer; each agent's Cohen's kappa against its matching rubrics with a bootstrap CI; an agent whose kappa on its
primary rubric is under `kappa_advisory_below` becomes advisory; a calibration report.

An agent flags an item when its severity is not `pass`; a human marks a defect when the reviewers' mean rating is on
the defect side of the rubric's cut (RubricLink).
"""

from __future__ import annotations

import ast
import csv
import io
import json
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from benchmark_platform.audit.agents import LETTERS, AuditItem, Finding
from benchmark_platform.audit.config import AuditConfig
from benchmark_platform.inputs import (
    DEFAULT_LIMITS,
    InputError,
    InputLimits,
    check_nesting,
    check_rows,
    check_text,
    finite_number,
    read_input,
)

SHEET_RUBRICS = (
    "answer_correct",
    "distractors_plausible",
    "not_ambiguous",
    "source_faithful",
    "needs_source",
    "no_vague_language",
    "difficulty_match",
    "cognitive_match",
    "verbatim_copy",
    "wine_category_leak",
    "salient",  # S1's rubric (issue 31): a gold sheet may rate it, so that salience drops can be calibrated
)
RATING_RANGE = (0.0, 5.0)  # gold sheets rate 0/1, the review app 1..5 (AuditConfig's RubricLink)


@dataclass(frozen=True)
class Rating:
    item_ref: str
    reviewer: str
    rubric: str
    rating: float


@dataclass
class GoldSheet:
    name: str
    encoding: str
    items: list[AuditItem] = field(default_factory=list)
    ratings: list[Rating] = field(default_factory=list)


# a UTF-8 multi-byte character; in a file that is not UTF-8 as a whole, it means two encodings were mixed
_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3}")
REVIEW_SHEET_PREFIX = "review:"  # gold_labels of review rounds (review/persist.py); no gold sheet may take it


def decode(raw: bytes) -> tuple[str, str]:
    """UTF-8 (with or without BOM) when the bytes are valid UTF-8, else Windows-1252 (what Excel exports). A file
    with both UTF-8 characters and bytes that are not UTF-8 is refused: read either way, part of it is mojibake."""
    try:
        return raw.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError as exc:
        if mixed := _UTF8_SEQUENCE.search(raw):
            raise UnicodeDecodeError(
                "utf-8", raw, exc.start, exc.end, f"mixed encodings: UTF-8 at byte {mixed.start()}, not UTF-8"
            ) from None
        return raw.decode("cp1252", errors="strict"), "cp1252"


def _options(text: str, where: str, limits: InputLimits) -> list[str]:
    check_nesting(f"{where}: options", text, limits)  # before parsing: both parsers recurse once per bracket
    try:
        value = json.loads(text)
    except json.JSONDecodeError:
        try:
            value = ast.literal_eval(text)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError) as e:
            raise InputError(f"{where}: options are neither JSON nor a Python literal list") from e
    if not isinstance(value, list) or not value:
        raise InputError(f"{where}: options must be a non-empty list")
    if bad := [i for i, o in enumerate(value) if isinstance(o, dict) and not isinstance(o.get("text"), str)]:
        raise InputError(f"{where}: option {bad[0] + 1} is a mapping without a `text` string")
    return [str(o["text"]) if isinstance(o, dict) else str(o) for o in value]


def _facts(text: str) -> tuple[str, ...]:
    parts = [p.strip() for p in re.split(r"\[\d+\]", text) if p.strip()]
    return tuple(parts or ([text.strip()] if text.strip() else []))


def read_gold_sheet(
    path: Path,
    reviewer: str = "reviewer_1",
    rubrics: Iterable[str] = SHEET_RUBRICS,
    limits: InputLimits = DEFAULT_LIMITS,
) -> GoldSheet:
    """A gold sheet: one rated question per row (question_text, options, correct_answer, source_fact(s), rubric
    columns with ratings in RATING_RANGE; blank = not rated). A `reviewer` column overrides the default reviewer.
    The whole file is validated (InputError naming file and line) before anything is returned."""
    if path.stem.startswith(REVIEW_SHEET_PREFIX):
        raise InputError(
            f"{path}: a gold sheet's name (the file name) may not start with {REVIEW_SHEET_PREFIX!r}: that is where "
            "the review rounds keep their ratings, which the import would replace; rename the file"
        )
    try:
        text, encoding = decode(read_input(path, limits))
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}" if "mixed" in exc.reason else f"byte {exc.start}"
        raise InputError(f"{path}: neither UTF-8 nor Windows-1252 ({reason}); save it as UTF-8") from None
    check_text(path, text)
    sheet = GoldSheet(path.stem, encoding)
    rubrics = tuple(rubrics)
    seen: set[str] = set()
    reader = csv.DictReader(io.StringIO(text, newline=""))
    try:
        sheet = _read_rows(path, reader, sheet, reviewer, rubrics, seen, limits)
    except csv.Error as exc:
        raise InputError(f"{path}:{reader.line_num}: not a readable CSV row: {exc}") from None
    if not sheet.items:
        raise InputError(f"{path}: a header but no rows; nothing was imported")
    return sheet


def _read_rows(
    path: Path,
    reader: csv.DictReader[str],
    sheet: GoldSheet,
    reviewer: str,
    rubrics: tuple[str, ...],
    seen: set[str],
    limits: InputLimits,
) -> GoldSheet:
    rated: dict[tuple[str, str, str], int] = {}  # (item, reviewer, rubric) -> line: one rating each
    for n, row in enumerate(reader, start=2):
        where = f"{path}:{n}"
        check_rows(str(path), n - 1, limits)
        ref = row.get("uuid") or row.get("item_id") or row.get("public_qid")
        question = row.get("question_text") or row.get("question")
        if not ref or not question:
            raise InputError(f"{where}: needs an item id (uuid / item_id) and a question_text")
        options = _options(row.get("options") or "", where, limits)
        key = (row.get("correct_answer") or "").strip().upper()
        if len(key) != 1 or key not in LETTERS[: len(options)]:  # "" is in every string
            raise InputError(f"{where}: correct_answer {key!r} is not one of the {len(options)} option letters")
        difficulty = (row.get("difficulty") or "").strip()
        if ref not in seen:  # several reviewers may rate the same question on their own rows
            seen.add(ref)
            sheet.items.append(
                AuditItem(
                    ref,
                    question,
                    tuple(options),
                    LETTERS.index(key),
                    _facts(row.get("source_facts") or row.get("source_fact") or ""),
                    None,
                    f"L{difficulty}" if difficulty.isdigit() else difficulty or None,
                    row.get("strategy") or None,
                    row.get("generator") or None,
                    row.get("domain") or "",
                )
            )
        who = (row.get("reviewer") or "").strip() or reviewer
        for rubric in rubrics:
            value = (row.get(rubric) or "").strip()
            if not value:
                continue
            rating = finite_number(f"{where}: column {rubric!r}", value, *RATING_RANGE)
            if first := rated.get((ref, who, rubric)):
                raise InputError(
                    f"{where}: reviewer {who!r} rates item {ref!r} on {rubric!r} again (first on line {first}); "
                    "keep one row per item and reviewer"
                )
            rated[(ref, who, rubric)] = n
            sheet.ratings.append(Rating(ref, who, rubric, rating))
    return sheet


def cohen_kappa(a: np.ndarray, b: np.ndarray) -> float | None:
    """Cohen's kappa of two binary raters; None when chance agreement is 1 (both raters constant and equal)."""
    if len(a) == 0:
        return None
    po = float(np.mean(a == b))
    pa, pb = float(np.mean(a)), float(np.mean(b))
    pe = pa * pb + (1 - pa) * (1 - pb)
    return None if pe >= 1.0 else (po - pe) / (1 - pe)


def bootstrap_ci(a: np.ndarray, b: np.ndarray, samples: int, seed: int) -> tuple[float | None, float | None]:
    """Percentile 95% interval of kappa over item resamples (resamples with an undefined kappa are left out)."""
    if len(a) < 2:
        return None, None
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(samples, len(a)))
    aa, bb = a[idx], b[idx]
    po = (aa == bb).mean(axis=1)
    pa, pb = aa.mean(axis=1), bb.mean(axis=1)
    pe = pa * pb + (1 - pa) * (1 - pb)
    ok = pe < 1.0
    if not ok.any():
        return None, None
    kappas = (po[ok] - pe[ok]) / (1 - pe[ok])
    return float(np.percentile(kappas, 2.5)), float(np.percentile(kappas, 97.5))


@dataclass(frozen=True)
class KappaRow:
    agent: str
    agent_version: str
    rubric: str
    n: int
    agent_flags: int
    human_defects: int
    kappa: float | None
    ci_low: float | None
    ci_high: float | None
    is_primary: bool
    advisory: bool


def human_defects(ratings: Iterable[Rating], config: AuditConfig) -> dict[str, dict[str, bool]]:
    """rubric -> item -> defect, from the mean rating of the item's reviewers."""
    cuts = {link.rubric: link for links in config.rubrics.values() for link in links}
    by: dict[tuple[str, str], list[float]] = defaultdict(list)
    for r in ratings:
        if r.rubric in cuts:
            by[(r.rubric, r.item_ref)].append(r.rating)
    out: dict[str, dict[str, bool]] = defaultdict(dict)
    for (rubric, ref), values in by.items():
        mean, link = float(np.mean(values)), cuts[rubric]
        out[rubric][ref] = mean < link.cut if link.defect_if == "low" else mean > link.cut
    return out


def calibrate(
    findings: Iterable[Finding], defects: Mapping[str, Mapping[str, bool]], config: AuditConfig, seed: int
) -> list[KappaRow]:
    """Kappa of every (agent, version) that has findings against each of its rubrics with labels on shared items."""
    flags: dict[tuple[str, str], dict[str, bool]] = defaultdict(dict)
    for f in findings:
        flags[(f.agent, f.agent_version)][f.item_id] = f.severity != "pass"
    rows = []
    for (agent, version), flagged in sorted(flags.items()):
        primary_done = False
        for link in config.rubrics.get(agent, []):
            labels = defects.get(link.rubric, {})
            shared = sorted(set(flagged) & set(labels))
            if not shared:
                continue
            a = np.array([flagged[i] for i in shared])
            b = np.array([labels[i] for i in shared])
            kappa = cohen_kappa(a, b)
            lo, hi = bootstrap_ci(a, b, config.bootstrap_samples, seed)
            primary = not primary_done and kappa is not None
            primary_done = primary_done or primary
            rows.append(
                KappaRow(
                    agent,
                    version,
                    link.rubric,
                    len(shared),
                    int(a.sum()),
                    int(b.sum()),
                    kappa,
                    lo,
                    hi,
                    primary,
                    primary and kappa is not None and kappa < config.kappa_advisory_below,
                )
            )
    return rows


def advisory_agents(rows: Iterable[KappaRow]) -> set[str]:
    return {r.agent for r in rows if r.advisory}


def _fmt(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.3f}"


def report_markdown(rows: Iterable[KappaRow], threshold: float) -> str:
    lines = [
        "| agent | rubric | n | agent flags | human defects | kappa | 95% CI | status |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        status = (
            "advisory"
            if r.advisory
            else "trusted"
            if r.is_primary
            else "secondary rubric"
            if r.kappa is not None
            else "undefined (a constant rater)"
        )
        lines.append(
            f"| {r.agent}@{r.agent_version} | {r.rubric} | {r.n} | {r.agent_flags} | {r.human_defects} | "
            f"{_fmt(r.kappa)} | [{_fmt(r.ci_low)}, {_fmt(r.ci_high)}] | {status} |"
        )
    lines.append(f"\nAn agent whose kappa on its primary (first defined) rubric is under {threshold} is advisory.")
    return "\n".join(lines)
