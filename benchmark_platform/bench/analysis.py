"""Ranking-stability benchmark: KINA's setting (42 models x 899 items, avg@4, B = 1,000, rho = 0.5 / 0.7 /
0.9, stratified by 12 disciplines) on a seeded synthetic matrix, and MMLU-Pro's real 29 x 12,032 matrix.

Prints the MMLU-Pro leaderboard, per-category table and stability table as Markdown (for
BENCHMARKS.md), then one JSON line. Timings are medians of repeated runs; the vectorised analysis is
timed side by side with a per-replication loop (numpy + scipy.stats.kendalltau) on the same data.
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy.stats import kendalltau

from benchmark_platform.analysis.accuracy import group_accuracy, leaderboard, wide
from benchmark_platform.analysis.matrix import ScoreMatrix
from benchmark_platform.analysis.report import markdown_table
from benchmark_platform.analysis.stability import (
    DEFAULT_RATES,
    pairwise_resolvability,
    ranking_stability,
    resolvability_summary,
    top_k,
)
from benchmark_platform.evaluation.importers import read_mmlu_pro_items, read_mmlu_pro_matrices

SEED = 20261129
B = 1000
REPEATS = 5
# KINA's 899 items per discipline, read off the denominators of Table 3 (avg@4) and Figure 2's shares.
KINA_DISCIPLINES = {
    "Agronomy": 40,
    "Economics": 34,
    "Education": 31,
    "Engineering": 308,
    "History": 13,
    "Law": 65,
    "Literature & Arts": 65,
    "Management": 29,
    "Medicine": 81,
    "Philosophy": 13,
    "Science": 201,
    "Sociology": 19,
}
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"


def kina_like_matrix(seed: int = SEED, n_models: int = 42, samples: int = 4) -> ScoreMatrix:
    """Rasch-style synthetic correctness: model abilities spread over KINA's 14-53% range, avg@4 cells."""
    rng = np.random.default_rng(seed)
    disciplines = np.repeat(list(KINA_DISCIPLINES), list(KINA_DISCIPLINES.values()))
    difficulty = rng.normal(0.8, 1.4, disciplines.size)
    target = np.sort(rng.uniform(0.14, 0.53, n_models))[::-1]
    ability = np.array([_ability_for(t, difficulty) for t in target])
    p = 1 / (1 + np.exp(difficulty[:, None] - ability[None, :]))
    scores = rng.binomial(samples, p) / samples
    items = pl.DataFrame({"item_id": [f"q{i:03d}" for i in range(disciplines.size)], "discipline": disciplines})
    models = tuple(f"model-{j:02d}" for j in range(n_models))
    return ScoreMatrix(models, items, scores, np.ones(scores.shape, dtype=bool))


def _ability_for(target: float, difficulty: np.ndarray) -> float:
    low, high = -10.0, 10.0
    for _ in range(60):
        mid = (low + high) / 2
        low, high = (mid, high) if np.mean(1 / (1 + np.exp(difficulty - mid))) < target else (low, mid)
    return (low + high) / 2


def loop_stability(matrix: ScoreMatrix, seed: int, top: int = 10) -> list[tuple[float, float]]:
    """The same analysis one replication at a time: the baseline the vectorised version is timed against."""
    rng = np.random.default_rng(seed)
    strata = matrix.items["discipline"].to_numpy()
    rows = [np.flatnonzero(strata == s) for s in np.unique(strata)]
    full = matrix.accuracy()
    best = top_k(full, matrix.models, top)
    out = []
    for rho in DEFAULT_RATES:
        taus, kept = [], 0
        for _ in range(B):
            chosen = np.concatenate([rng.choice(r, max(1, round(rho * r.size)), replace=False) for r in rows])
            acc = matrix.scores[chosen].mean(axis=0)
            taus.append(kendalltau(full[best], acc[best]).statistic)
            kept += acc[best[0]] >= acc.max()
        out.append((float(np.nanmean(taus)), kept / B))
    return out


def _median_seconds(run, repeats: int = REPEATS) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = run()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    kina = kina_like_matrix()
    kina_s, kina_table = _median_seconds(lambda: ranking_stability(kina, B=B, seed=SEED))
    loop_s, loop_table = _median_seconds(lambda: loop_stability(kina, SEED), repeats=1)

    folder = SHARED_DATA / "mmlu_pro_outputs"
    items = read_mmlu_pro_items(folder).select("item_id", "discipline")
    mmlu = ScoreMatrix.from_results(read_mmlu_pro_matrices(folder), items)
    mmlu_s, mmlu_table = _median_seconds(lambda: ranking_stability(mmlu, B=B, seed=SEED), repeats=3)
    board = leaderboard(mmlu, B=B, seed=SEED)
    per_category = wide(group_accuracy(mmlu, "discipline", B=B, seed=SEED))
    per_category = board.select("model").join(per_category, on="model", how="left", maintain_order="left")
    summary = resolvability_summary(pairwise_resolvability(mmlu, B=B, seed=SEED))

    print("### MMLU-Pro leaderboard (accuracy %, bootstrap 95% CI, B = 1,000; missing items count as wrong)\n")
    print(markdown_table(board))
    print("\n### MMLU-Pro accuracy per category (%)\n")
    print(markdown_table(per_category, digits=1))
    print("\n### MMLU-Pro ranking stability (stratified by category, B = 1,000, top-10)\n")
    print(markdown_table(mmlu_table, digits=3))
    print("\n### KINA-like synthetic ranking stability (42 x 899, avg@4)\n")
    print(markdown_table(kina_table, digits=3))
    print()
    print(
        json.dumps(
            {
                "bench": "analysis",
                "kina_stability_seconds": round(kina_s, 4),
                "mmlu_pro_stability_seconds": round(mmlu_s, 4),
                "kina_loop_seconds": round(loop_s, 3),
                "speedup_vs_loop": round(loop_s / kina_s, 1),
                "kina_tau": kina_table["kendall_tau"].round(4).to_list(),
                "kina_loop_tau": [round(t, 4) for t, _ in loop_table],
                "kina_rank1_retention": kina_table["rank1_retention"].to_list(),
                "mmlu_pro_tau": mmlu_table["kendall_tau"].round(4).to_list(),
                "mmlu_pro_rank1_retention": mmlu_table["rank1_retention"].to_list(),
                "mmlu_pro_adjacent_resolvable": f"{summary['adjacent_resolvable']}/{summary['adjacent_pairs']}",
                "mmlu_pro_largest_unresolvable_gap": round(summary["largest_unresolvable_gap"], 2),
                "replications": B,
                "rates": list(DEFAULT_RATES),
            }
        )
    )
