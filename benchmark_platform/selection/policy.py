"""The selection policy of KINA App. B: the problem from centrality's scores, greedy plus MIP, and K for items.

Centrality produces per-item and per-pair scores (`centrality_scores`, `centrality_pairs`, or a CentralityResult's
frames); everything that turns them into a chosen set lives here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Protocol, TypeVar

import numpy as np
import polars as pl
import scipy.sparse as sp

from benchmark_platform.anchors import AnchorSet
from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.mip import select_mip
from benchmark_platform.selection.problem import InfeasibleSelectionError, SelectionProblem, SelectionResult


class MipLimits(Protocol):
    """When the exact MIP runs next to greedy (the spec's `selection.centrality` section has these fields)."""

    @property
    def mip_max_candidates(self) -> int: ...

    @property
    def mip_time_limit_s(self) -> float: ...


def build_problem(items: pl.DataFrame, pairs: pl.DataFrame, anchors: AnchorSet, tau_dup: float) -> SelectionProblem:
    """The selection problem from scored items and pairs (in memory or read back from the database).

    Rows: the shortlist K_d (by item id). Columns: the bank B-bar_d with weights mu. S_sp = 1 for an item on itself,
    S_d on support pairs (u in G(q) or q in G(u)), 0 elsewhere. Duplicate pairs: shortlisted pairs with
    U_sym > tau_dup.
    """
    short = items.filter(pl.col("shortlisted")).sort("item_id")
    bank = items.filter(pl.col("in_bank_dedup")).sort("item_id")
    row = {item: i for i, item in enumerate(short["item_id"].to_list())}
    col = {item: j for j, item in enumerate(bank["item_id"].to_list())}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    for item, i in row.items():
        if item in col:
            rows.append(i)
            cols.append(col[item])
            vals.append(1.0)
    conflicts = []
    for q, u, u_sym, s, in_support in pairs.select("q_id", "u_id", "u_sym", "s", "in_support").iter_rows():
        if in_support and s > 0:
            for a, b in ((q, u), (u, q)):
                if a in row and b in col:
                    rows.append(row[a])
                    cols.append(col[b])
                    vals.append(s)
        if u_sym > tau_dup and q in row and u in row:
            conflicts.append((row[q], row[u]))
    names = [s.name for s in anchors.strata]
    index = {name: h for h, name in enumerate(names)}
    return SelectionProblem(
        candidate_ids=tuple(row),
        strata=np.array([index[h] for h in short["stratum"].to_list()], dtype=np.int64),
        stratum_names=tuple(names),
        lower=np.array([s.lower for s in anchors.strata]),
        upper=np.array([s.upper for s in anchors.strata]),
        weights=bank["mu"].to_numpy(),
        coverage=sp.csr_matrix((vals, (rows, cols)), shape=(len(row), len(col))),
        k=anchors.k_total,
        conflicts=np.array(conflicts, dtype=np.int64).reshape(-1, 2),
    )


def select(problem: SelectionProblem, limits: MipLimits) -> SelectionResult:
    """Lazy greedy with repair; for a moderate shortlist also the exact MIP, keeping the better set and tighter bound."""
    mip_max_candidates, mip_time_limit_s = limits.mip_max_candidates, limits.mip_time_limit_s
    try:
        greedy = select_greedy(problem)
    except InfeasibleSelectionError as greedy_error:  # greedy-with-repair is a heuristic: let the MIP decide
        if problem.n > mip_max_candidates:
            raise
        try:
            return select_mip(problem, time_limit=mip_time_limit_s)
        except InfeasibleSelectionError:
            raise greedy_error from None  # it names the stratum that could not be filled
    if problem.n > mip_max_candidates:
        return greedy
    try:
        exact = select_mip(problem, time_limit=mip_time_limit_s)
    except InfeasibleSelectionError:  # no incumbent within the time limit: the greedy set stands
        return greedy
    best = exact if exact.objective > greedy.objective else greedy
    bound = min(greedy.upper_bound, exact.upper_bound)
    return best.model_copy(
        update={
            "method": f"{best.method}+mip_bound",
            "upper_bound": max(bound, best.objective),
            "certified_ratio": min(1.0, best.objective / bound) if bound > 1e-12 else 1.0,
        }
    )


def capped_to_attainable(problem: SelectionProblem, k_total: int) -> SelectionProblem:
    """K for items: the anchors' K_d, capped by what the surviving shortlist allows.

    Generation made the pool from the K_d pre-approved facts and the audit dropped some, so it may hold fewer than
    K_d selectable items; the cap (upper quotas and duplicate bound, `attainable_size`) keeps every one that fits
    rather than failing. Lower quotas are not relaxed: a stratum the audit left short still stops with its name.
    """
    return dataclasses.replace(problem, k=min(k_total, problem.attainable_size()))


T = TypeVar("T")


def within_cap(
    problem: SelectionProblem, run: Callable[[SelectionProblem], T], capped: Callable[[int], object]
) -> tuple[T, SelectionProblem]:
    """`run(problem)`, where K is a cap (capped_to_attainable estimates it by another greedy order than the
    selection's): when the selection's own set is maximal below K with every lower quota met, it is run again with
    K = what it reached, and `capped(reached)` tells the caller (the log; the stored selection's k against K_d)."""
    while True:
        try:
            return run(problem), problem
        except InfeasibleSelectionError as exc:
            if exc.stratum or exc.reached is None or not 0 < exc.reached < problem.k:
                raise
            capped(exc.reached)
            problem = dataclasses.replace(problem, k=exc.reached)
