"""Selection benchmark: lazy vs plain greedy at N = 10k..100k, and the MMLU-Pro ranking-fidelity check.

Part 1 (synthetic, KINA sizes): N candidates, each covering itself, k = 20 bank neighbours and 50 anchors
(S_sp ~ U(0, 1)), 10 strata with quotas, N/20 duplicate pairs, K = 1,000. Lazy and plain greedy run side by side
on the same instance; both must return the same objective. Reported: seconds per step, lazy speed-up, certified
ratio, gain evaluations, and the log-log slope of lazy time against N.

Part 2 (real data, `--mmlu-pro`): each of MMLU-Pro's 14 categories is a discipline whose anchors are DERIVED from the
data, not elicited: 5 random items as A_d, item labels (60 in-category positives, 60 other-category negatives),
pair labels (same-source pairs y_T = 1, cross-category pairs y_T = 0, perturbed copies y_T = y_U = 1), strata by
source family. K_d is the category's share of 899 (largest remainder). The 29 models' accuracy ranking on the union
of selections is compared with the full set (Kendall tau-b, rank-1 retention) against >= 100 stratified random
subsets of the same per-category sizes drawn from the same pool.

Last line: one JSON object (`{"bench": "selection", ...}`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import resource
import sys
import time
from typing import Any

import numpy as np
import polars as pl
import scipy.sparse as sp
from scipy.stats import kendalltau

from benchmark_platform.anchors import AnchorSet
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.models import Candidate
from benchmark_platform.centrality.scoring import score_discipline
from benchmark_platform.itembank.derived_anchors import derive_anchor_set, largest_remainder
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.selection.config import SelectionConfig
from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.policy import build_problem, select
from benchmark_platform.selection.problem import SelectionProblem

MMLU_PRO = PROJECT_ROOT.parent / "shared" / "data" / "mmlu_pro_outputs"


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def synthetic_problem(
    n: int, *, k_neighbours: int = 20, anchors: int = 50, k: int = 1000, seed: int = 0, uniform: bool = False
) -> SelectionProblem:
    """A KINA-sized instance: bank = candidates + anchors, sparse S_sp, 10 strata, duplicate pairs.

    By default an item's support scores are scaled by its own support level ~ Beta(2, 5) (some items are central,
    most are not); `uniform=True` drops that scaling, the harder case for lazy greedy (all gains alike).
    """
    rng = np.random.default_rng(seed)
    level = np.ones((n, 1)) if uniform else rng.beta(2.0, 5.0, (n, 1))
    m = n + anchors
    rows = np.repeat(np.arange(n), 1 + k_neighbours + anchors)
    cols = np.column_stack(
        [np.arange(n), rng.integers(0, n, (n, k_neighbours)), np.tile(np.arange(n, m), (n, 1))]
    ).ravel()
    vals = np.column_stack(
        [np.ones(n), level * rng.random((n, k_neighbours)), level * 0.5 * rng.random((n, anchors))]
    ).ravel()
    coverage = sp.csr_matrix((vals, (rows, cols)), shape=(n, m))
    coverage.data = np.minimum(coverage.data, 1.0)
    h = 10
    strata = rng.integers(0, h, n)
    weights = np.concatenate([np.full(n, 0.5 / n), np.full(anchors, 0.5 / anchors)])
    conflicts = rng.integers(0, n, (n // 20, 2))
    conflicts = conflicts[conflicts[:, 0] != conflicts[:, 1]]
    return SelectionProblem(
        candidate_ids=tuple(f"c{i}" for i in range(n)),
        strata=strata,
        stratum_names=tuple(f"h{i}" for i in range(h)),
        lower=np.full(h, k // (2 * h)),
        upper=np.full(h, 2 * k // h),
        weights=weights,
        coverage=coverage,
        k=k,
        conflicts=conflicts,
    )


def scaling(sizes: list[int], k: int, uniform: bool = False) -> dict[str, Any]:
    rows = []
    for n in sizes:
        problem = synthetic_problem(n, k=k, uniform=uniform)
        started = time.perf_counter()
        lazy = select_greedy(problem, lazy=True)
        lazy_s = time.perf_counter() - started
        started = time.perf_counter()
        plain = select_greedy(problem, lazy=False)
        plain_s = time.perf_counter() - started
        if not math.isclose(lazy.objective, plain.objective, rel_tol=1e-9):
            raise AssertionError(f"lazy {lazy.objective} != plain {plain.objective} at N={n}")
        rows.append(
            {
                "n": n,
                "lazy_s": round(lazy_s, 3),
                "plain_s": round(plain_s, 3),
                "lazy_ms_per_step": round(1000 * lazy_s / k, 3),
                "plain_ms_per_step": round(1000 * plain_s / k, 3),
                "speedup": round(plain_s / lazy_s, 1),
                "lazy_evaluations": lazy.gain_evaluations,
                "plain_evaluations": plain.gain_evaluations,
                "certified_ratio": round(lazy.certified_ratio, 4),
                "objective": round(lazy.objective, 6),
                "upper_bound": round(lazy.upper_bound, 6),
            }
        )
        print(json.dumps(rows[-1]), file=sys.stderr)
    ns = np.log([r["n"] for r in rows])
    slope = float(np.polyfit(ns, np.log([r["lazy_s"] for r in rows]), 1)[0]) if len(rows) > 1 else float("nan")
    return {"rows": rows, "lazy_time_vs_n_loglog_slope": round(slope, 3)}


def _hash(payload: object) -> str:
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()


def mmlu_pro_discipline(
    category: str, items: pl.DataFrame, k_total: int, rng: np.random.Generator
) -> tuple[AnchorSet, list[Candidate]]:
    """Derived (not expert-elicited) anchors for one MMLU-Pro category (itembank/derived_anchors.py), and its
    candidates (the category's other items)."""
    anchors, pool = derive_anchor_set(
        category, items, k_total, rng, note="DERIVED from MMLU-Pro for the ranking-fidelity check; not expert-elicited."
    )
    candidates = [
        Candidate(id=f"q{r['question_id']}", text=r["question"], src=r["src"], stratum_key=r["src"].split("-")[0])
        for r in pool.iter_rows(named=True)
    ]
    return anchors, candidates


_largest_remainder = largest_remainder


def _accuracy(matrix: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Per-model accuracy over the given item rows, missing answers (NaN) left out."""
    return np.nanmean(matrix[rows], axis=0)


def _fidelity(full: np.ndarray, sub: np.ndarray) -> tuple[float, bool]:
    return float(kendalltau(full, sub).statistic), bool(np.argmax(full) == np.argmax(sub))


def mmlu_pro(
    total: int, seeds: int, categories: list[str] | None = None, embed_name: str = "static"
) -> dict[str, object]:
    from benchmark_platform.embed import StaticEmbedder

    items = pl.concat(
        [
            pl.read_ndjson(p).select("question_id", "question", "category", "src")
            for p in sorted((MMLU_PRO / "items_by_category").glob("*.jsonl"))
        ]
    )
    correctness = pl.read_csv(MMLU_PRO / "correctness_matrix.csv", infer_schema=False, null_values=["NA"])
    models = correctness.columns[4:]
    matrix = correctness.select(pl.col(models).cast(pl.Float64)).to_numpy()
    row_of = {f"q{q}": i for i, q in enumerate(correctness["question_id"].to_list())}
    sizes = dict(items.group_by("category").len().sort("category").iter_rows())
    quotas = _largest_remainder(sizes, total)
    chosen_categories = categories or sorted(sizes)
    params, limits = CentralityParams(), SelectionConfig()
    embedder = StaticEmbedder()
    rng = np.random.default_rng(20261129)
    selected_rows: list[int] = []
    pools: dict[str, np.ndarray] = {}
    per_category: list[dict[str, Any]] = []
    started = time.perf_counter()
    for category in chosen_categories:
        anchors, candidates = mmlu_pro_discipline(category, items, quotas[category], rng)
        result = score_discipline(candidates, anchors, params, embedder.encode, tau_dup=limits.tau_dup)
        if result.manual_review:
            raise RuntimeError(f"{category}: manual review: {result.manual_review}")
        chosen = select(build_problem(result.items, result.pairs, anchors, limits.tau_dup), limits)
        selected_rows += [row_of[i] for i in chosen.selected_ids]
        pools[category] = np.array([row_of[c.id] for c in candidates])
        per_category.append(
            {
                "category": category,
                "k": anchors.k_total,
                **{
                    k: v
                    for k, v in result.counts.items()
                    if k in ("candidates", "bank_dedup", "shortlisted", "duplicate_pairs")
                },
                "certified_ratio": round(chosen.certified_ratio, 4),
                "method": chosen.method,
                "fallback": result.fallback_used,
            }
        )
        print(json.dumps(per_category[-1]), file=sys.stderr)
    seconds = time.perf_counter() - started
    all_rows = np.concatenate(
        [
            np.array([row_of[f"q{q}"] for q in items.filter(pl.col("category") == c)["question_id"]])
            for c in chosen_categories
        ]
    )
    full = _accuracy(matrix, all_rows)
    tau_sel, top_sel = _fidelity(full, _accuracy(matrix, np.array(selected_rows)))
    draws = np.random.default_rng(0)
    taus: list[float] = []
    tops: list[bool] = []
    for _ in range(seeds):
        rows = np.concatenate([draws.choice(pools[c], size=quotas[c], replace=False) for c in chosen_categories])
        tau, top = _fidelity(full, _accuracy(matrix, rows))
        taus.append(tau)
        tops.append(top)
    taus_arr = np.array(taus)
    return {
        "items_selected": len(selected_rows),
        "models": len(models),
        "kendall_tau_selected": round(tau_sel, 4),
        "rank1_retained_selected": top_sel,
        "kendall_tau_random_mean": round(float(taus_arr.mean()), 4),
        "kendall_tau_random_sd": round(float(taus_arr.std(ddof=1)), 4),
        "kendall_tau_random_p05_p50_p95": [round(float(v), 4) for v in np.quantile(taus_arr, [0.05, 0.5, 0.95])],
        "selected_tau_percentile_among_random": round(float((taus_arr < tau_sel).mean() * 100), 1),
        "rank1_retention_random": round(float(np.mean(tops)), 3),
        "random_seeds": seeds,
        "min_certified_ratio": min(r["certified_ratio"] for r in per_category),
        "scoring_and_selection_seconds": round(seconds, 1),
        "per_category": per_category,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,20000,50000,100000")
    parser.add_argument("--k", type=int, default=1000)
    parser.add_argument("--mmlu-pro", action="store_true", help="also run the MMLU-Pro ranking-fidelity check")
    parser.add_argument("--seeds", type=int, default=200)
    args = parser.parse_args()
    started = time.perf_counter()
    report: dict[str, object] = {"bench": "selection"}
    scale = scaling([int(s) for s in args.sizes.split(",")], args.k)
    largest = scale["rows"][-1]
    report.update(
        n_candidates=largest["n"],
        k_selected=args.k,
        lazy_speedup=largest["speedup"],
        certified_ratio=largest["certified_ratio"],
        lazy_ms_per_step=largest["lazy_ms_per_step"],
        plain_ms_per_step=largest["plain_ms_per_step"],
        lazy_time_vs_n_loglog_slope=scale["lazy_time_vs_n_loglog_slope"],
        scaling=scale["rows"],
    )
    uniform = scaling([int(s) for s in args.sizes.split(",")], args.k, uniform=True)
    report.update(
        lazy_speedup_uniform=uniform["rows"][-1]["speedup"],
        certified_ratio_uniform=uniform["rows"][-1]["certified_ratio"],
        scaling_uniform=uniform["rows"],
        lazy_time_vs_n_loglog_slope_uniform=uniform["lazy_time_vs_n_loglog_slope"],
    )
    if args.mmlu_pro:
        report["mmlu_pro"] = mmlu_pro(899, args.seeds)
    report["seconds_total"] = round(time.perf_counter() - started, 1)
    report["peak_rss_mb"] = round(_rss_mb(), 1)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
