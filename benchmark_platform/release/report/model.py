"""The report's data: one JSON-ready dict computed from a release's open tables (the dev split when a test split is
sealed, so nothing sealed reaches the report). Pure: no disk, no clock; floats are rounded to fixed places and every
list has a stated order, so the same tables give the same bytes.

Items are stored as arrays (positions in ITEM_FIELDS) with repeated strings replaced by indexes into `lookups`: the
12,032-item MMLU-Pro bank would otherwise spend most of its bytes on the same discipline, agent and model names.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from typing import Any

import polars as pl

from benchmark_platform.analysis import resolvability_summary
from benchmark_platform.release.datasheet import ReleaseSummary

PLACES = 4  # decimals kept of every float (accuracies are in %, ratios in [0, 1])
SEVERITIES = ("pass", "warn", "fail")
# positions of an item's fields in data.items (app.js reads them by these names)
ITEM_FIELDS = (
    "id",
    "discipline",  # index into lookups.disciplines
    "strategy",  # index into lookups.strategies (-1: none)
    "difficulty",  # index into lookups.difficulties (-1: none)
    "question",
    "options",  # [[text, [fact index, ...]], ...] in presented order
    "answer",  # index of the correct option
    "explanation",
    "facts",  # [[fact index, role], ...] the facts the item was generated from
    "findings",  # [[agent index, severity index, payload JSON or ""], ...]; a pass keeps no payload
    "status",  # audit status tags (STATUS_TAGS)
    "answers",  # per model (lookups.models): null (not evaluated), option index, -1 (unparsed) or a list of samples
    "provenance",  # item-bank origin [bank_id, file_name, row_number, upstream_id, source, licence, attribution] or null
)
STATUS_TAGS = ("clean", "warn", "fail", "relabel", "disclose", "suspect")
# data.facts rows: [fact_id, text, source index (lookups.sources), licence, tier, document index (lookups.documents)]


def clean(value: Any) -> Any:
    """A JSON-safe copy: floats rounded to PLACES (NaN and infinities become null), containers recursed."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return None
        rounded = round(value, PLACES)
        return 0.0 if rounded == 0 else rounded
    if isinstance(value, dict):
        return {str(k): clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean(v) for v in value]
    return value


def table(frame: pl.DataFrame) -> dict[str, Any]:
    """{columns, rows} of a frame in its stored row order (list columns become lists)."""
    return {"columns": frame.columns, "rows": clean([list(r) for r in frame.iter_rows()])}


def _json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def _leaderboard(s: ReleaseSummary) -> dict[str, Any]:
    board = s.table("leaderboard")
    tiers = s.table("analyses/tiers")
    if board.height and tiers.height and {"model", "tier"} <= set(tiers.columns) and "tier" not in board.columns:
        board = board.join(tiers.select("model", "tier"), on="model", how="left", maintain_order="left")
    return table(board)


def _heatmap(s: ReleaseSummary, models: list[str]) -> dict[str, Any]:
    """Accuracy per discipline and model; a discipline of the spec without released items stays a column."""
    groups = s.table("accuracy_by_group")
    cells: dict[tuple[str, str], list[Any]] = {}
    seen: list[str] = []
    if groups.height:
        for r in groups.filter(pl.col("grouping") == "discipline").iter_rows(named=True):
            cells[(r["model"], r["group_value"])] = clean([r["accuracy"], r["ci_low"], r["ci_high"], r["n_items"]])
            seen.append(r["group_value"])
    disciplines = [key for key, _ in s.disciplines] or []
    disciplines += sorted(set(seen) - set(disciplines))
    return {
        "disciplines": disciplines,
        "models": models,
        "cells": [[cells.get((m, d)) for d in disciplines] for m in models],
    }


def _stability(s: ReleaseSummary) -> dict[str, Any]:
    pairs = s.table("analyses/pairwise_resolvability")
    stability = s.table("analyses/ranking_stability")
    summary = clean(resolvability_summary(pairs)) if pairs.height and "resolvable" in pairs.columns else None
    adjacent = (
        table(pairs.filter(pl.col("rank_worse") == pl.col("rank_better") + 1))
        if summary is not None
        else {"columns": [], "rows": []}
    )
    return {"rates": table(stability), "pairs": summary, "adjacent": adjacent}


def _selection(s: ReleaseSummary) -> list[dict[str, Any]]:
    """Per discipline: how many facts and items were selected, from how many, with which certificate."""
    selections = s.table("selections")
    signatures = {r["discipline"]: _json(r["counts"]) for r in s.table("stage_signatures").iter_rows(named=True)}
    anchors = {r["discipline"]: r for r in s.table("stage_anchors").iter_rows(named=True)}
    items = s.items
    released = dict(items.group_by("discipline").len().iter_rows()) if items.height else {}
    by: dict[str, dict[str, Any]] = defaultdict(dict)
    for r in selections.iter_rows(named=True) if selections.height else []:
        by[r["discipline"]][r["target"]] = {
            "method": r["method"],
            "k_total": r["k_total"],
            "certified_ratio": clean(r["certified_ratio"]),
            "manual_review": r["manual_review"],
            "strata": _json(r["stratum_counts"]),
            "response": clean(_json(r.get("response"))),
        }
    keys = [key for key, _ in s.disciplines]
    keys += sorted((set(by) | set(released)) - set(keys))
    rows = []
    for key in keys:
        counts = signatures.get(key) if isinstance(signatures.get(key), dict) else {}
        anchor = anchors.get(key)
        rows.append(
            {
                "discipline": key,
                "released": released.get(key, 0),
                "facts": by[key].get("facts"),
                "items": by[key].get("items"),
                "fact_pool": (counts or {}).get("bank"),
                "anchors": None
                if anchor is None
                else ("derived" if anchor["derived"] else "example" if anchor["is_example"] else "expert"),
            }
        )
    return rows


def _audit(s: ReleaseSummary) -> dict[str, Any]:
    findings = s.table("audit_findings")
    ran: dict[str, dict[str, int]] = {}
    if findings.height:
        for agent, severity, n in findings.group_by("agent", "severity").len().sort("agent", "severity").iter_rows():
            ran.setdefault(agent, {})[severity] = n
    skips = s.table("stage_audit_skips")
    skipped: dict[tuple[str, str], list[str]] = defaultdict(list)
    for r in skips.iter_rows(named=True) if skips.height else []:
        skipped[(r["agent"], r["reason"])].append(r["discipline"])
    actions = s.table("audit_actions")
    suspect = s.table("analyses/suspect_items")
    return {
        "ran": [{"agent": a, "counts": ran[a]} for a in sorted(ran)],
        "skipped": [
            {"agent": a, "reason": reason, "disciplines": sorted(d)} for (a, reason), d in sorted(skipped.items())
        ],
        "actions": table(actions.select("item_id", "discipline", "action", "reason")) if actions.height else None,
        "calibration": table(s.table("gold_calibration")) if s.table("gold_calibration").height else None,
        "suspect": table(suspect) if suspect.height else None,
    }


class _Index:
    """Repeated strings as small integers, in first-seen order over sorted input (so the order is stable)."""

    def __init__(self, values: list[str] | None = None) -> None:
        self.values: list[str] = []
        self.position: dict[str, int] = {}
        for v in values or []:
            self(v)

    def __call__(self, value: str | None) -> int:
        if value is None:
            return -1
        if value not in self.position:
            self.position[value] = len(self.values)
            self.values.append(value)
        return self.position[value]


def _items(s: ReleaseSummary, models: list[str]) -> tuple[list[list[Any]], dict[str, Any], list[list[Any]]]:
    """(items as arrays, lookups, facts as arrays) for the item browser."""
    items = s.items
    disciplines = _Index([key for key, _ in s.disciplines])
    strategies = _Index(sorted(items["strategy"].drop_nulls().unique()) if "strategy" in items.columns else [])
    difficulties = _Index(sorted(items["difficulty"].drop_nulls().unique()) if "difficulty" in items.columns else [])
    agents, model_index = _Index(), _Index(models)
    facts_frame = s.table("facts")
    fact_index = _Index(facts_frame["fact_id"].to_list() if facts_frame.height else [])
    sources = _Index(sorted(facts_frame["source_id"].drop_nulls().unique()) if facts_frame.height else [])
    documents = _Index()  # many facts are spans of one document: its URL is stored once
    facts = [
        [r["fact_id"], r["text"], sources(r["source_id"]), r["licence"], r["tier"], documents(r["document_url"])]
        for r in (facts_frame.iter_rows(named=True) if facts_frame.height else [])
    ]

    options: dict[str, list[list[Any]]] = defaultdict(list)
    frame = s.table("options")
    for r in frame.sort("item_id", "position").iter_rows(named=True) if frame.height else []:
        proofs = [fact_index.position[f] for f in (r.get("proving_fact_ids") or []) if f in fact_index.position]
        options[r["item_id"]].append([r["text"], proofs])
    generated_from: dict[str, list[list[Any]]] = defaultdict(list)
    frame = s.table("item_facts")
    for r in frame.iter_rows(named=True) if frame.height else []:
        if r["fact_id"] in fact_index.position:
            generated_from[r["item_id"]].append([fact_index.position[r["fact_id"]], r["role"]])
    found: dict[str, list[list[Any]]] = defaultdict(list)
    frame = s.table("audit_findings")
    for r in frame.sort("item_id", "agent").iter_rows(named=True) if frame.height else []:
        severity = SEVERITIES.index(r["severity"]) if r["severity"] in SEVERITIES else len(SEVERITIES) - 1
        found[r["item_id"]].append([agents(r["agent"]), severity, "" if severity == 0 else (r["payload"] or "")])
    acted: dict[str, set[str]] = defaultdict(set)
    frame = s.table("audit_actions")
    for r in frame.iter_rows(named=True) if frame.height else []:
        acted[r["item_id"]].add(r["action"])
    suspect = s.table("analyses/suspect_items")
    suspects = set(suspect["item_id"]) if suspect.height and "item_id" in suspect.columns else set()
    answered: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
    frame = s.table("evaluation_answers")
    if frame.height:
        frame = frame.select("model", "item_id", "sample_index", "predicted_index").sort(
            "item_id", "model", "sample_index"
        )
        for model, item_id, _, predicted in frame.iter_rows():
            answered[item_id][model_index(model)].append(-1 if predicted is None else predicted)
    provenance: dict[str, list[Any]] = {}
    frame = s.table("item_provenance")
    for r in frame.iter_rows(named=True) if frame.height else []:
        provenance[r["item_id"]] = [
            r["bank_id"],
            r["file_name"],
            r["row_number"],
            r["upstream_id"],
            r["source"],
            r["licence"],
            r["attribution"],
        ]

    rows = []
    for r in items.sort("item_id").iter_rows(named=True) if items.height else []:
        item_id = r["item_id"]
        severities = {f[1] for f in found[item_id]}
        status = ["fail"] if 2 in severities else ["warn"] if 1 in severities else ["clean"]
        status += [a for a in ("relabel", "disclose") if a in acted[item_id]]
        status += ["suspect"] if item_id in suspects else []
        per_model = answered.get(item_id, {})
        answers: list[Any] = []
        for m in range(len(model_index.values)):
            samples = per_model.get(m)
            answers.append(None if not samples else samples[0] if len(samples) == 1 else samples)
        rows.append(
            [
                item_id,
                disciplines(r["discipline"]),
                strategies(r.get("strategy")),
                difficulties(r.get("difficulty")),
                r["question"],
                options[item_id],
                r["answer_index"],
                r.get("explanation") or "",
                generated_from[item_id],
                found[item_id],
                status,
                answers,
                provenance.get(item_id),
            ]
        )
    lookups = {
        "disciplines": disciplines.values,
        "strategies": strategies.values,
        "difficulties": difficulties.values,
        "agents": agents.values,
        "models": model_index.values,
        "sources": sources.values,
        "documents": documents.values,
        "severities": list(SEVERITIES),
        "status_tags": list(STATUS_TAGS),
        "item_fields": list(ITEM_FIELDS),
    }
    return rows, lookups, facts


def report_data(summary: ReleaseSummary, datasheet_html: str) -> dict[str, Any]:
    """Everything the report shows, from the release's open tables and its rendered datasheet."""
    board = summary.table("leaderboard")
    models = board.sort("rank", "model")["model"].to_list() if board.height else summary.evaluated_models
    models += [m for m in summary.evaluated_models if m not in models]
    items, lookups, facts = _items(summary, models)
    sources = summary.table("sources")
    return {
        "meta": {
            "benchmark": summary.spec_name,
            "version": summary.version,
            "description": summary.description,
            "licence": summary.licence,
            "canary": summary.canary,
            "open_items": summary.items.height,
            "sealed_items": summary.sealed_items,
            "disciplines": [{"key": k, "path": p} for k, p in summary.disciplines],
        },
        "leaderboard": _leaderboard(summary),
        "heatmap": _heatmap(summary, models),
        "stability": _stability(summary),
        "selection": _selection(summary),
        "audit": _audit(summary),
        "sources": table(sources) if sources.height else {"columns": [], "rows": []},
        "licences": table(summary.table("licences")),
        "lookups": lookups,
        "facts": facts,
        "items": items,
        "datasheet_html": datasheet_html,
    }
