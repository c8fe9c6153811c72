"""What `benchmark-platform run` prints after a benchmark is built: items per discipline of the release, the top of
its leaderboard, and where it is (the per-partition lines come from `defs/progress.py`)."""

from __future__ import annotations

from benchmark_platform.spec import BenchmarkSpec
from benchmark_platform.store import Database


def benchmark_summary(db: Database, spec: BenchmarkSpec, release_path: str | None, top: int = 5) -> list[str]:
    """Items per discipline of the release, the top of its leaderboard, and where it is."""
    counts = db.query(
        "SELECT discipline, count(*)::int AS n FROM released_items(%s, %s, %s) GROUP BY discipline ORDER BY discipline",
        (spec.name, spec.release.include_manual_review, spec.release.require_review_approval),
    )
    total = sum(r["n"] for r in counts)
    board = db.query(
        """SELECT model, n_items, accuracy, ci_low, ci_high, rank, unparsed_answers, answered, missing, unparsed,
                  answered_accuracy, answered_ci_low, answered_ci_high, pool_accuracy
           FROM analysis_accuracy WHERE spec = %s AND grouping = 'overall' ORDER BY rank NULLS LAST, model""",
        (spec.name,),
    )
    manual = db.query(
        "SELECT discipline, manual_review FROM selections WHERE spec = %s AND target = 'items' "
        "AND manual_review IS NOT NULL ORDER BY discipline",
        (spec.name,),
    )
    lines = [
        f"== {spec.name} {spec.release.version}: {total} items in {len(counts)} of {len(spec.discipline_keys)} "
        f"disciplines; {len(board)} leaderboard rows",
        "   items: " + ", ".join(f"{r['discipline']} {r['n']}" for r in counts),
    ]
    if manual:
        # release.include_manual_review ships their audit survivors (up to K_d where the anchors gave one)
        status = "released on request" if spec.release.include_manual_review else "not released"
        lines.append(
            f"   manual review ({status}): " + "; ".join(f"{r['discipline']}: {r['manual_review']}" for r in manual)
        )
    if not board:
        lines.append("   no leaderboard: no evaluation answer on a released item (see the datasheet)")
    for r in board[:top]:
        lines.append(_board_line(r))
    # issue 31: every configuration with missing answers is shown with its answered count, wherever it ranks
    lines += [_board_line(r) for r in board[top:] if r["missing"]]
    if len(board) > top:
        baseline = next((r for r in board if r["model"] == "random-baseline"), None)
        if baseline:
            lines.append(f"   ... random-baseline rank {baseline['rank']}: {baseline['accuracy']:.1f}%")
    suspects = db.query(
        """SELECT r.row ->> 'reason' AS reason, count(*)::int AS n FROM analysis_tables r
           WHERE r.spec = %s AND r.name = 'suspect_items' GROUP BY 1 ORDER BY 1""",
        (spec.name,),
    )
    if board:
        by = {r["reason"]: r["n"] for r in suspects}
        lines.append(
            f"   key-error suspects (post-evaluation audit): {sum(by.values())} of {total} items, "
            f"{by.get('no_model_correct', 0)} no model correct, {by.get('negative_point_biserial', 0)} negative "
            "point-biserial (data/analyses/suspect_items.parquet)"
        )
    lines.append(f"   release: {release_path or 'not written (release gate failed)'}")
    return lines


def _board_line(r: dict) -> str:
    """A leaderboard row: accuracy over the answered items with its CI; the answered count when some are missing
    (with the strict score, a missing answer as 0, and the bank-level estimate where there is one)."""
    if r["answered_accuracy"] is None:  # analyses stored before issue 31
        head = f"{r['accuracy']:5.1f}% [{r['ci_low']:.1f}, {r['ci_high']:.1f}] on {r['n_items']} items"
    else:
        head = f"{r['answered_accuracy']:5.1f}% [{r['answered_ci_low']:.1f}, {r['answered_ci_high']:.1f}]"
        head += (
            f" answered {r['answered']} of {r['n_items']} items ({r['missing']} missing; strict {r['accuracy']:.1f}%"
            + (f", bank estimate {r['pool_accuracy']:.1f}%" if r["pool_accuracy"] is not None else "")
            + ")"
            if r["missing"]
            else f" on {r['n_items']} items"
        )
    rank = f"{r['rank']:>3}." if r["rank"] is not None else "  -."
    return f"   {rank} {r['model']:<32} {head}" + (f", {r['unparsed']} unparsed" if r.get("unparsed") else "")
