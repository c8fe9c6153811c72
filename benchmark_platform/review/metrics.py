"""The metrics of KINA Table 5 (section 5.3) from review logs, per phase, with Wilson confidence intervals.

- caught-flaw rate (Stage 2): share of reviewed items revised or rejected;
- reviewer-asymmetric catch rate: among items where at least one reviewer flagged a flaw, the share flagged by
  exactly one of the two (KINA: "identified by reviewer A but missed by reviewer B", with A/B unordered);
- audit-flagged rate: share of audited items approved by both reviewers that the principal's audit found flawed.
"""

from __future__ import annotations

from typing import Any

import polars as pl
from scipy import stats

from benchmark_platform.review.models import Verdict
from benchmark_platform.review.workflow import decide

LOG_SCHEMA = {
    "phase": pl.String,
    "item_id": pl.String,
    "flagged_a": pl.Boolean,  # reviewer a's verdict was not "approve"
    "flagged_b": pl.Boolean,
    "decision": pl.String,  # final decision: approved | revise | rejected
    "audited": pl.Boolean,
    "audit_flawed": pl.Boolean,  # null unless audited
}
METRICS = ("caught_flaw_rate", "asymmetric_catch_rate", "audit_flagged_rate")


def _proportion(k: int, n: int, confidence: float) -> dict[str, float | int | None]:
    if n == 0:
        return {"k": 0, "n": 0, "rate": None, "ci_low": None, "ci_high": None}
    ci = stats.binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return {"k": k, "n": n, "rate": k / n, "ci_low": float(ci.low), "ci_high": float(ci.high)}


def table5(logs: pl.DataFrame, confidence: float = 0.95) -> pl.DataFrame:
    """One row per (phase, metric) with k, n, rate and its Wilson interval."""
    missing = set(LOG_SCHEMA) - set(logs.columns)
    if missing:
        raise ValueError(f"review log lacks columns {sorted(missing)}")
    rows = []
    for (phase,), part in sorted(logs.group_by("phase"), key=lambda g: g[0]):
        caught = part["decision"].is_in(["revise", "rejected"])
        any_flag = part.filter(pl.col("flagged_a") | pl.col("flagged_b"))
        asym = any_flag["flagged_a"] ^ any_flag["flagged_b"]
        twice = part.filter(
            pl.col("audited") & ~pl.col("flagged_a") & ~pl.col("flagged_b") & (pl.col("decision") == "approved")
        )
        counts = {
            "caught_flaw_rate": (int(caught.sum()), part.height),
            "asymmetric_catch_rate": (int(asym.sum()), any_flag.height),
            "audit_flagged_rate": (int(twice["audit_flawed"].fill_null(False).sum()), twice.height),
        }
        rows += [{"phase": phase, "metric": m, **_proportion(*counts[m], confidence)} for m in METRICS]
    return pl.DataFrame(
        rows,
        schema={
            "phase": pl.String,
            "metric": pl.String,
            "k": pl.Int64,
            "n": pl.Int64,
            "rate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
        },
    )


def _decision(row: dict[str, Any]) -> str:
    if row["committee"]:
        return str(row["committee"])
    return decide(Verdict(row["verdict_a"]), Verdict(row["verdict_b"])).value


def logs_from_pairs(pairs: list[dict[str, Any]]) -> pl.DataFrame:
    """Table 5 logs from the rating pairs of :func:`benchmark_platform.review.persist.rating_pairs`."""
    rows = [
        {
            "phase": p["phase"],
            "item_id": f"{p['item_id']}#r{p['round']}",
            "flagged_a": p["verdict_a"] != Verdict.APPROVE.value,
            "flagged_b": p["verdict_b"] != Verdict.APPROVE.value,
            "decision": _decision(p),
            "audited": p["audited"],
            "audit_flawed": p["audit_flawed"],
        }
        for p in pairs
    ]
    return pl.DataFrame(rows, schema=LOG_SCHEMA)


def cohen_kappa(a: list[bool], b: list[bool]) -> float | None:
    """Cohen's kappa of two raters' binary labels; None where it is undefined: a rater who gives one label only
    (always, with a single pair) leaves no chance-corrected agreement to measure."""
    n = len(a)
    if n == 0 or len(set(a)) < 2 or len(set(b)) < 2:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    pa, pb = sum(a) / n, sum(b) / n
    chance = pa * pb + (1 - pa) * (1 - pb)
    return None if chance == 1 else (observed - chance) / (1 - chance)


def agreement(pairs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (spec, discipline): pairs, approve/not agreement, Cohen's kappa of it, mean |rubric difference|."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for p in pairs:
        groups.setdefault((p["spec"], p["discipline"]), []).append(p)
    out = []
    for (spec, discipline), rows in sorted(groups.items()):
        a = [r["verdict_a"] == Verdict.APPROVE.value for r in rows]
        b = [r["verdict_b"] == Verdict.APPROVE.value for r in rows]
        diffs = [abs(r["scores_a"][k] - r["scores_b"][k]) for r in rows for k in r["scores_a"] if k in r["scores_b"]]
        out.append(
            {
                "spec": spec,
                "discipline": discipline,
                "pairs": len(rows),
                "verdict_agreement": sum(x == y for x, y in zip(a, b, strict=True)) / len(rows),
                "kappa": cohen_kappa(a, b),
                "mean_abs_rubric_diff": sum(diffs) / len(diffs) if diffs else None,
            }
        )
    return out
