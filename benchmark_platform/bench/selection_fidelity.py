"""Selection fidelity bench (issue 19): held-out ranking fidelity of the certified selection with answers in it.

MMLU-Pro (../shared/data/mmlu_pro_outputs, 12,032 items, 14 categories, 29 models). Each category is a discipline
with DERIVED anchors (bench/selection.py's `mmlu_pro_discipline`), scored once by support centrality; K = 100 and
K = 899 are split over the categories by largest remainder (per-category quotas), and inside a category the anchors'
source-family strata hold their quotas. For each of `--splits` random model splits (15 visible, 14 held out):
- ours: F_d^sp + w(K_d) * R + the information term (selection/response.py, the visible models' answers), lazy
  greedy / MIP as the platform selects, scored by the IRT estimator (analysis/irt.py) fitted on the visible models over the whole pool;
- anchor points (tinyBenchmarks, Polo et al. 2024, from the paper's description): per category, k-means of the
  items' correctness vectors over the visible models into k_c clusters, the item nearest each centroid, weighted by
  its cluster's size;
- 100 stratified random subsets of the same per-category sizes, scored by raw accuracy and by the IRT estimator.
All are judged on the held-out models only (analysis/fidelity.py). Last line: one JSON object.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np
import polars as pl
from sklearn.cluster import KMeans

from benchmark_platform.analysis.fidelity import (
    Fidelity,
    SplitFidelity,
    fidelity,
    model_splits,
    percentile_among,
    pool_accuracy,
    stratified_random_subsets,
    validate_split,
)
from benchmark_platform.analysis.irt import fit_irt
from benchmark_platform.bench.selection import MMLU_PRO, _largest_remainder, mmlu_pro_discipline
from benchmark_platform.centrality.config import CentralityParams
from benchmark_platform.centrality.scoring import score_discipline
from benchmark_platform.embed import StaticEmbedder
from benchmark_platform.runtime import single_threaded_blas
from benchmark_platform.selection.config import ResponseTermConfig, SelectionConfig
from benchmark_platform.selection.policy import build_problem, select
from benchmark_platform.selection.problem import SelectionProblem
from benchmark_platform.selection.response import ResponseMatrix, add_response_term


def load_mmlu_pro() -> tuple[pl.DataFrame, np.ndarray, tuple[str, ...], tuple[str, ...], np.ndarray, list[str]]:
    """Items, correctness (models x items, NaN = no answer), model names, item ids, category label per item."""
    items = pl.concat(
        [
            pl.read_ndjson(p).select("question_id", "question", "category", "src")
            for p in sorted((MMLU_PRO / "items_by_category").glob("*.jsonl"))
        ]
    )
    table = pl.read_csv(MMLU_PRO / "correctness_matrix.csv", infer_schema=False, null_values=["NA"])
    models = tuple(table.columns[4:])
    correct = table.select(pl.col(models).cast(pl.Float64)).to_numpy().T.copy()
    item_ids = tuple(f"q{q}" for q in table["question_id"].to_list())
    categories = sorted(set(table["category"].to_list()))
    labels = np.searchsorted(np.array(categories), table["category"].to_numpy())
    return items, correct, models, item_ids, labels, categories


def anchor_points(
    correct_visible: np.ndarray, labels: np.ndarray, per_stratum: np.ndarray, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """tinyBenchmarks anchor points under per-stratum quotas: medoid items and their weights (shares of the pool)."""
    patterns = np.nan_to_num(correct_visible, nan=0.5).T  # items x visible models
    chosen, weights = [], []
    for h, k in enumerate(per_stratum):
        pool = np.flatnonzero(labels == h)
        km = KMeans(n_clusters=int(k), n_init=1, random_state=seed).fit(patterns[pool])
        distance = km.transform(patterns[pool])  # (pool, k)
        for c in range(int(k)):
            members = km.labels_ == c
            if not members.any():
                continue
            chosen.append(pool[np.argmin(np.where(members, distance[:, c], np.inf))])
            weights.append(members.sum() / len(labels))
    return np.array(chosen), np.array(weights)


def anchor_estimate(correct: np.ndarray, anchors: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Weighted accuracy on the anchors (an unanswered anchor's weight goes to the others)."""
    answers = correct[:, anchors]
    answered = ~np.isnan(answers)
    return (np.where(answered, answers, 0.0) @ weights) / (answered @ weights)


def score_categories(
    items: pl.DataFrame,
    categories: list[str],
    quotas: dict[int, dict[str, int]],
    params: CentralityParams,
    tau_dup: float,
) -> dict[int, list[SelectionProblem]]:
    """Support centrality of each category (derived anchors), once: it does not depend on the models. One selection
    problem per budget and category (the budgets differ in K_d and the strata quotas only)."""
    embedder = StaticEmbedder()
    problems: dict[int, list[SelectionProblem]] = {k: [] for k in quotas}
    budgets = list(quotas)
    for h, category in enumerate(categories):
        tick = time.perf_counter()
        per_budget = {
            k: mmlu_pro_discipline(category, items, quotas[k][category], np.random.default_rng(h)) for k in budgets
        }
        anchors, candidates = per_budget[budgets[0]]
        scored = score_discipline(candidates, anchors, params, embedder.encode, tau_dup=tau_dup)
        if scored.manual_review:
            raise RuntimeError(f"{category}: manual review: {scored.manual_review}")
        for k in budgets:
            problems[k].append(build_problem(scored.items, scored.pairs, per_budget[k][0], tau_dup))
        print(f"scored {category}: {scored.counts} in {time.perf_counter() - tick:.1f} s", file=sys.stderr)
    return problems


def select_with_answers(
    problems: list[SelectionProblem],
    correct_visible: np.ndarray,
    labels: np.ndarray,
    item_ids: tuple[str, ...],
    visible_models: tuple[str, ...],
    limits: SelectionConfig,
    response: ResponseTermConfig,
) -> tuple[np.ndarray, list[float], bool]:
    """Our selection for one split: per category F_d^sp + weight * R over the visible models' answers, selected
    as the platform selects. Returns pool indices, certified ratios, and whether quotas and duplicate bound hold."""
    column = {item: j for j, item in enumerate(item_ids)}
    chosen: list[int] = []
    certified: list[float] = []
    hold = True
    for h, problem in enumerate(problems):
        pool = np.flatnonzero(labels == h)
        answers = ResponseMatrix(tuple(item_ids[j] for j in pool), visible_models, correct_visible[:, pool])
        combined, _ = add_response_term(problem, answers, response)
        result = select(combined, limits)
        hold &= not problem.violations(np.array(result.selected))
        certified.append(result.certified_ratio)
        chosen += [column[i] for i in result.selected_ids]
    return np.array(chosen), certified, hold


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--splits", type=int, default=20)
    parser.add_argument("--visible", type=int, default=15)
    parser.add_argument("--random", type=int, default=100, help="stratified random subsets per split and budget")
    parser.add_argument("--budgets", default="100,899")
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--weight", type=float, default=ResponseTermConfig().weight)
    parser.add_argument("--small-budget-items", type=float, default=ResponseTermConfig().small_budget_items)
    parser.add_argument("--neighbours", type=int, default=ResponseTermConfig().neighbours)
    parser.add_argument("--information-weight", type=float, default=ResponseTermConfig().information_weight)
    parser.add_argument("--bootstrap", type=int, default=CentralityParams().bootstrap)
    parser.add_argument("--mip-time-limit", type=float, default=1.0, help="MIP time limit (s) for small shortlists")
    parser.add_argument("--table", action="store_true", help="print the per-split table (Markdown) to stderr")
    args = parser.parse_args()
    started, cpu_started = time.perf_counter(), time.process_time()
    budgets = [int(b) for b in args.budgets.split(",")]
    items, correct, models, item_ids, labels, categories = load_mmlu_pro()
    sizes = dict(zip(categories, np.bincount(labels).tolist(), strict=True))
    quotas = {k: _largest_remainder(sizes, k) for k in budgets}
    params = CentralityParams(bootstrap=args.bootstrap, seed=args.seed)
    limits = SelectionConfig(mip_time_limit_s=args.mip_time_limit)
    response = ResponseTermConfig(
        weight=args.weight,
        small_budget_items=args.small_budget_items,
        neighbours=args.neighbours,
        information_weight=args.information_weight,
    )
    problems = score_categories(items, categories, quotas, params, limits.tau_dup)
    scoring_seconds = time.perf_counter() - started

    rng = np.random.default_rng(args.seed)
    report: dict[str, object] = {"bench": "selection_fidelity"}
    per_split: dict[int, list[dict[str, object]]] = {k: [] for k in budgets}
    certified: list[float] = []
    constraints_hold = True
    splits = model_splits(len(models), args.visible, args.splits, args.seed)
    with single_threaded_blas():
        for s, (visible, held_out) in enumerate(splits):
            fit = fit_irt(correct[visible])
            truth = pool_accuracy(correct[held_out])
            for k in budgets:
                selected, ratios, hold = select_with_answers(
                    problems[k], correct[visible], labels, item_ids, tuple(models[m] for m in visible), limits, response
                )
                certified += ratios
                constraints_hold &= hold
                per_stratum = np.bincount(labels[selected], minlength=len(categories))
                draws = stratified_random_subsets(labels, per_stratum, args.random, rng)
                split = validate_split(correct, labels, held_out, fit, selected, draws)
                anchors, weights = anchor_points(correct[visible], labels, per_stratum, args.seed + s)
                peer = fidelity(truth, anchor_estimate(correct[held_out], anchors, weights))
                per_split[k].append(_split_row(s, split, peer))
                print(json.dumps({"split": s, "k": k, **per_split[k][-1]}), file=sys.stderr)

    report["splits"] = len(splits)
    for k in budgets:
        rows = per_split[k]
        suffix = f"_k{k}"
        mean = lambda key: round(float(np.nanmean([r[key] for r in rows])), 4)  # noqa: E731, B023
        report.update(
            {
                f"tau_mean{suffix}": mean("tau"),
                f"random_tau_mean{suffix}": mean("random_tau_mean"),
                f"anchor_points_tau_mean{suffix}": mean("anchor_points_tau"),
                f"tau_percentile_median{suffix}": round(float(np.median([r["tau_percentile"] for r in rows])), 1),
                f"acc_mae_points{suffix}": mean("acc_mae_points"),
                f"random_acc_mae_points{suffix}": mean("random_acc_mae_points"),
                f"random_irt_tau_mean{suffix}": mean("random_irt_tau_mean"),
                f"random_irt_acc_mae_points{suffix}": mean("random_irt_acc_mae_points"),
                f"anchor_points_acc_mae_points{suffix}": mean("anchor_points_acc_mae_points"),
                f"random_tau_p5_p50_p95{suffix}": [
                    mean("random_tau_p5"),
                    mean("random_tau_p50"),
                    mean("random_tau_p95"),
                ],
                f"rank1_retention{suffix}": mean("rank1"),
                f"random_rank1_retention{suffix}": mean("random_rank1"),
                f"anchor_points_rank1_retention{suffix}": mean("anchor_points_rank1"),
                f"ci_coverage{suffix}": mean("ci_coverage"),
            }
        )
        if args.table:
            print(_table(k, rows), file=sys.stderr)
    report.update(
        certified_ratio_min=round(min(certified), 4),
        certified_ratio_mean=round(float(np.mean(certified)), 4),
        quotas_and_duplicate_bound_hold=constraints_hold,
        response_weight=args.weight,
        response_small_budget_items=args.small_budget_items,
        response_neighbours=args.neighbours,
        response_information_weight=args.information_weight,
        centrality_bootstrap=args.bootstrap,
        scoring_seconds=round(scoring_seconds, 1),
        seconds=round(time.perf_counter() - started, 1),
        cpu_seconds=round(time.process_time() - cpu_started, 1),  # the machine is shared: CPU time shows the work
    )
    print(json.dumps(report))
    return 0


def _split_row(s: int, split: SplitFidelity, peer: Fidelity) -> dict[str, object]:
    random_tau = split.random_raw.tau
    p5, p50, p95 = np.nanquantile(random_tau, [0.05, 0.5, 0.95])
    return {
        "split": s,
        "tau": round(float(split.selected.tau[0]), 4),
        "rank1": bool(split.selected.rank1[0]),
        "acc_mae_points": round(float(split.selected.acc_mae_points[0]), 3),
        "ci_coverage": round(split.ci_coverage, 3),
        "random_tau_mean": round(float(np.nanmean(random_tau)), 4),
        "random_tau_p5": round(float(p5), 4),
        "random_tau_p50": round(float(p50), 4),
        "random_tau_p95": round(float(p95), 4),
        "tau_percentile": round(percentile_among(float(split.selected.tau[0]), random_tau), 1),
        "random_rank1": round(float(split.random_raw.rank1.mean()), 3),
        "random_acc_mae_points": round(float(split.random_raw.acc_mae_points.mean()), 3),
        "random_irt_tau_mean": round(float(np.nanmean(split.random_irt.tau)), 4),
        "random_irt_acc_mae_points": round(float(split.random_irt.acc_mae_points.mean()), 3),
        "anchor_points_tau": round(float(peer.tau[0]), 4),
        "anchor_points_rank1": bool(peer.rank1[0]),
        "anchor_points_acc_mae_points": round(float(peer.acc_mae_points[0]), 3),
    }


def _table(k: int, rows: list[dict[str, object]]) -> str:
    head = (
        f"\n#### K = {k}\n\n| split | tau | random tau mean (p5 / p50 / p95) | percentile | random+IRT tau | anchor pts tau "
        "| acc err | random err | random+IRT err | anchor pts err | rank-1 (ours / random / anchors) |\n"
        "|---|---|---|---|---|---|---|---|---|---|---|"
    )
    lines = [
        f"| {r['split']} | {r['tau']} | {r['random_tau_mean']} ({r['random_tau_p5']} / {r['random_tau_p50']} / "
        f"{r['random_tau_p95']}) | {r['tau_percentile']} | {r['random_irt_tau_mean']} | {r['anchor_points_tau']} | "
        f"{r['acc_mae_points']} | {r['random_acc_mae_points']} | {r['random_irt_acc_mae_points']} | "
        f"{r['anchor_points_acc_mae_points']} | {int(bool(r['rank1']))} / {r['random_rank1']} / "
        f"{int(bool(r['anchor_points_rank1']))} |"
        for r in rows
    ]
    return "\n".join([head, *lines])


if __name__ == "__main__":
    raise SystemExit(main())
