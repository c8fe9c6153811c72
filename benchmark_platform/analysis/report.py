"""Frames as Markdown tables (Dagster metadata, BENCHMARKS.md, release notes)."""

from __future__ import annotations

import polars as pl


def markdown_table(frame: pl.DataFrame, *, digits: int = 2) -> str:
    def cell(value: object) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.{digits}f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(frame.columns) + " |", "|" + "---|" * frame.width]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.iter_rows()]
    return "\n".join(lines)
