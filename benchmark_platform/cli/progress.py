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
        """SELECT model, n_items, accuracy, ci_low, ci_high, rank, unparsed_answers FROM analysis_accuracy
           WHERE spec = %s AND grouping = 'overall' ORDER BY rank, model""",
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
        lines.append(
            f"   {r['rank']:>3}. {r['model']:<32} {r['accuracy']:5.1f}% [{r['ci_low']:.1f}, {r['ci_high']:.1f}] "
            f"on {r['n_items']} items" + (f", {r['unparsed_answers']} unparsed" if r["unparsed_answers"] else "")
        )
    if len(board) > top:
        baseline = next((r for r in board if r["model"] == "random-baseline"), None)
        if baseline:
            lines.append(f"   ... random-baseline rank {baseline['rank']}: {baseline['accuracy']:.1f}%")
    lines.append(f"   release: {release_path or 'not written (release gate failed)'}")
    return lines
