"""What a whole-graph run reports: one line per partition (each stage with its rows and time). Dagster's own event
log goes to a file, not to the terminal (the CLI's `run` prints these lines; `cli/progress.py` adds the summary)."""

from __future__ import annotations

import logging
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# the metadata entry that says best how many rows a stage wrote (first match wins)
ROW_KEYS = (
    "items",
    "documents",
    "facts",
    "candidates",
    "selected",
    "answers",
    "findings",
    "rubric_pairs",
    "accuracy_rows",
    "files",
    "assigned_items",
    "items_settled",
    "validated_reviews",
    "pairs",
)


@dataclass(frozen=True)
class StageOutcome:
    asset: str
    rows: str  # the count of what the stage wrote (see ROW_KEYS), or why it did nothing
    seconds: float
    nothing_to_do: bool


class EventLogFile:
    """Appends each run's Dagster event log (and Python warnings, e.g. Dagster's beta/supersession notices)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
        handler = logging.FileHandler(path, encoding="utf-8")
        handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
        logging.captureWarnings(True)
        for name in ("py.warnings", "dagster"):
            logger = logging.getLogger(name)
            logger.handlers = [handler]
            logger.propagate = False
        warnings.simplefilter("default")

    def append_run(self, instance: Any, run_id: str, logs: Sequence[Any] | None = None) -> None:
        """`logs`: the run's event log entries when the caller already read them (one read per run)."""
        with self.path.open("a", encoding="utf-8") as handle:
            for entry in instance.all_logs(run_id) if logs is None else logs:
                kind = entry.dagster_event.event_type_value if entry.dagster_event else entry.level
                handle.write(f"{entry.timestamp:.3f} {run_id[:8]} {entry.step_key or '-'} {kind} {entry.message}\n")


def _rows(metadata: dict[str, Any]) -> tuple[str, bool]:
    if "nothing_to_do" in metadata:
        return "nothing to do", True
    if "manual_review" in metadata and str(_value(metadata["manual_review"])):
        return f"manual review ({_value(metadata['manual_review'])})", False
    for name in ROW_KEYS:
        if name in metadata:
            return str(_value(metadata[name])), False
    return "done", False


def _value(entry: Any) -> Any:
    return getattr(entry, "value", entry)


def stage_outcomes(result: Any, instance: Any, logs: Sequence[Any] | None = None) -> list[StageOutcome]:
    """Per materialised asset of one run: its rows (from its metadata) and its step's wall time (`logs`: the run's
    event log entries, when the caller already read them)."""
    started: dict[str, float] = {}
    seconds: dict[str, float] = {}
    for entry in instance.all_logs(result.run_id) if logs is None else logs:
        event = entry.dagster_event
        if event is None or entry.step_key is None:
            continue
        if event.event_type_value == "STEP_START":
            started[entry.step_key] = entry.timestamp
        elif event.event_type_value in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in started:
            seconds[entry.step_key] = entry.timestamp - started[entry.step_key]
    outcomes = []
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        name = materialization.asset_key.path[-1]
        rows, idle = _rows(dict(materialization.metadata))
        outcomes.append(StageOutcome(name, rows, seconds.get(event.step_key, 0.0), idle))
    return outcomes


def partition_prefix(spec: str, label: str, n: int, total: int, key: str | None) -> str:
    return f"[{spec} {label} {n}/{total}" + (f" {key}]" if key else "]")


def partition_stages(outcomes: list[StageOutcome]) -> str:
    """`stage rows time` for each stage that did something; then the stages with nothing to do, by name."""
    busy = [o for o in outcomes if not o.nothing_to_do]
    idle = [o.asset for o in outcomes if o.nothing_to_do]
    stages = ", ".join(f"{o.asset} {o.rows} {o.seconds:.1f}s" for o in busy)
    total = sum(o.seconds for o in outcomes)
    return f"{stages}{f'; nothing to do: {chr(44).join(idle)}' if idle else ''} ({total:.0f}s)"
