"""Greedy maximisation of F_d^sp under |S| = K_d, stratum quotas and the duplicate bound (KINA Appendix B).

Lazy greedy keeps stale marginal gains as upper bounds: by submodularity (Proposition 1) a stale gain bounds the
current one from above, so a candidate whose fresh gain is at least every other candidate's bound is the greedy
choice. The bounds live in one array; each step works on a pool of the candidates with the largest bounds
(re-evaluating its stale leaders a batch at a time, in one vectorised pass each) and goes back to the whole array
only when the pool's best fresh gain no longer beats the largest bound outside it.

Constraints: a stratum at U_h closes; once the free slots equal the open lower-quota deficits, only strata still
below L_h may grow; a pick blocks its duplicates. If the duplicate bound leaves a stratum short of
L_h, a repair swaps in one of its blocked candidates for the chosen items that block it.

The certificate: for every set A and every size-K set O, F(O) <= F(A) + (sum of the K largest marginal gains
w.r.t. A) (submodularity and monotonicity), so min over evaluated A is an upper bound on the unconstrained
size-K optimum, hence on the constrained one. It is evaluated at every step of plain greedy and at
`bound_checkpoints` evenly spaced steps (plus the end) of lazy greedy.

Nothing here calls BLAS (issue 30): gains are sparse row sums in index order, F(S) and the bound are correctly
rounded sums (embed.exact.fixed_dot, math.fsum), and every choice among equal values goes to the lowest index, so the
set and its certificate are the same bits on every machine given the same problem.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.sparse as sp

from benchmark_platform.embed import fixed_dot
from benchmark_platform.selection.problem import (
    InfeasibleSelectionError,
    SelectionProblem,
    SelectionResult,
    ratio,
)


class _State:
    """The growing set S with its coverage vector, stratum counts and duplicate blocks."""

    def __init__(self, problem: SelectionProblem) -> None:
        self.p = problem
        cov = problem.coverage.tocsr()
        cov.sort_indices()
        self.indptr, self.indices, self.data = cov.indptr, cov.indices, cov.data
        self.col_weight = problem.weights[self.indices]
        self.row_lengths = np.diff(self.indptr)
        self._gain_matrix = sp.csr_matrix((self.data.copy(), self.indices, self.indptr), shape=cov.shape)
        self._ones = np.ones(cov.shape[1])
        self.conflict = problem.conflict_graph()
        self.order: list[int] = []
        self.gains: list[float] = []
        self.evaluations = 0
        self.reset([])

    def reset(self, members: list[int]) -> None:
        """Rebuild every derived array for the set `members` (used at start and after a repair)."""
        p = self.p
        self.chosen = np.zeros(p.n, dtype=bool)
        self.chosen[members] = True
        self.cover = np.zeros(p.coverage.shape[1])
        if members:
            self.cover = p.coverage[members].max(axis=0).toarray().ravel()
        self.counts = np.bincount(p.strata[members], minlength=len(p.stratum_names)).astype(np.int64)
        self.blocked = np.zeros(p.n, dtype=bool)
        if members:
            self.blocked = np.asarray(self.conflict[members].sum(axis=0)).ravel() > 0
        self.value = fixed_dot(self.cover, p.weights)
        self.deficit = int(np.maximum(p.lower - self.counts, 0).sum())

    def slack(self) -> int:
        """Free slots beyond those reserved for strata still below L_h."""
        return self.p.k - len(self.order) - self.deficit

    def open_strata(self) -> np.ndarray:
        open_ = self.counts < self.p.upper
        if self.slack() <= 0:
            open_ &= self.counts < self.p.lower
        return open_

    def feasible_mask(self) -> np.ndarray:
        mask: np.ndarray = ~self.chosen & ~self.blocked & self.open_strata()[self.p.strata]
        return mask

    def feasible_among(self, rows: np.ndarray) -> np.ndarray:
        """feasible_mask()[rows], computed on `rows` only."""
        mask: np.ndarray = ~self.chosen[rows] & ~self.blocked[rows] & self.open_strata()[self.p.strata[rows]]
        return mask

    def gains_of(self, rows: np.ndarray) -> np.ndarray:
        """Current marginal gains of the candidates `rows`, in one vectorised pass."""
        starts, lengths = self.indptr[rows], self.row_lengths[rows]
        ends = np.cumsum(lengths)
        idx = np.repeat(starts - (ends - lengths), lengths) + np.arange(ends[-1] if len(ends) else 0)
        vals = np.maximum(self.data[idx] - self.cover[self.indices[idx]], 0.0) * self.col_weight[idx]
        self.evaluations += len(rows)
        return np.bincount(np.repeat(np.arange(len(rows)), lengths), weights=vals, minlength=len(rows))

    def all_gains(self) -> np.ndarray:
        self._gain_matrix.data = np.maximum(self.data - self.cover[self.indices], 0.0) * self.col_weight
        self.evaluations += self.p.n
        return self._gain_matrix @ self._ones

    def add(self, q: int, gain: float) -> None:
        a, b = self.indptr[q], self.indptr[q + 1]
        cols = self.indices[a:b]
        self.cover[cols] = np.maximum(self.cover[cols], self.data[a:b])
        self.chosen[q] = True
        h = self.p.strata[q]
        self.deficit -= int(self.counts[h] < self.p.lower[h])
        self.counts[h] += 1
        self.blocked[self.conflict.indices[self.conflict.indptr[q] : self.conflict.indptr[q + 1]]] = True
        self.order.append(q)
        self.gains.append(gain)
        self.value += gain

    def bound(self, gains: np.ndarray) -> float:
        """F(S) + the K largest marginal gains: an upper bound on the optimum."""
        k = min(self.p.k, len(gains))
        top = np.partition(gains, len(gains) - k)[len(gains) - k :] if k else gains[:0]
        return self.value + math.fsum(top.tolist())  # the partition's order varies with the CPU; fsum's sum does not

    def repair(self) -> None:
        """Swap a blocked candidate of a short stratum in for the chosen items that block it."""
        p = self.p
        short = [h for h in range(len(p.stratum_names)) if self.counts[h] < p.lower[h]]
        if not short:
            raise InfeasibleSelectionError(
                "",
                f"only {len(self.order)} of K={p.k} items can be chosen under the quotas and the duplicate bound",
                reached=len(self.order),
            )
        h = short[0]
        best: tuple[float, int, list[int]] | None = None
        for c in np.flatnonzero((p.strata == h) & ~self.chosen & self.blocked):
            row = self.conflict.indices[self.conflict.indptr[c] : self.conflict.indptr[c + 1]]
            drop = [int(d) for d in row if self.chosen[d]]
            left = self.counts.copy()
            np.subtract.at(left, p.strata[drop], 1)
            left[h] += 1
            if left[h] <= self.counts[h] or (left < np.minimum(self.counts, p.lower)).any():
                continue  # a swap must shorten the deficit of h without opening another
            members = [q for q in self.order if q not in drop] + [int(c)]
            value = p.value(np.array(members))
            if best is None or value > best[0]:
                best = (value, int(c), drop)
        if best is None:
            raise InfeasibleSelectionError(
                p.stratum_names[h],
                f"cannot reach L_h={int(p.lower[h])} (has {int(self.counts[h])}): its remaining candidates "
                "duplicate chosen items that no swap can free",
            )
        _, chosen, drop = best
        kept = [(q, g) for q, g in zip(self.order, self.gains, strict=True) if q not in drop]
        self.order = [q for q, _ in kept]
        self.gains = [g for _, g in kept]
        self.reset(self.order)
        self.add(chosen, float(self.gains_of(np.array([chosen]))[0]))


class _LazyBounds:
    """Stale gains `ub` (upper bounds on the current ones; exact where `fresh` equals the step) and the pool.

    The pool holds the feasible candidates with the `pool_size` largest bounds (ties at the cut included); `floor` is
    the largest bound left outside it, so no outside candidate can gain more than `floor`. Feasibility only shrinks
    between repairs (picks, blocks and closed strata are permanent), so dropping a pool member for good is safe.
    """

    def __init__(self, state: _State, gains: np.ndarray, pool_size: int) -> None:
        self.state, self.pool_size = state, pool_size
        self.ub = gains.astype(np.float64, copy=True)
        self.fresh = np.zeros(len(gains), dtype=np.int64)
        self.rebuild()

    def refresh(self, gains: np.ndarray, step: int) -> None:
        """Every bound exact again (after a full evaluation of the gains)."""
        self.ub[:] = gains
        self.fresh[:] = step
        self.rebuild()

    def rebuild(self) -> None:
        candidates = np.flatnonzero(self.state.feasible_mask())
        if len(candidates) <= self.pool_size:
            self.pool, self.floor = candidates, -np.inf
            return
        bounds = self.ub[candidates]
        cut = -np.partition(-bounds, self.pool_size - 1)[self.pool_size - 1]
        inside = bounds >= cut
        self.pool = candidates[inside]
        self.floor = float(bounds[~inside].max(initial=-np.inf))

    def pick(self, step: int, batch_size: int) -> int | None:
        """Plain greedy's choice (largest current gain, lowest index on ties) or None when nothing is feasible."""
        state, ub, fresh = self.state, self.ub, self.fresh
        while True:
            self.pool = self.pool[state.feasible_among(self.pool)]
            pool = self.pool
            cap = batch_size  # the first pass takes the top stale bounds; later ones all that still reach the best
            while True:
                bounds = ub[pool]
                is_fresh = fresh[pool] == step
                best = bounds[is_fresh].max(initial=-np.inf)
                stale = np.flatnonzero(~is_fresh & (bounds >= best))  # could still reach (or tie) the best
                if not len(stale):
                    break
                if len(stale) > cap:  # the cap largest bounds, equal ones by position (a stable sort, as everywhere)
                    stale = stale[np.argsort(-bounds[stale], kind="stable")[:cap]]
                cap = len(pool)
                rows = pool[stale]
                ub[rows] = state.gains_of(rows)
                fresh[rows] = step
            if best > self.floor:
                return int(pool[is_fresh & (bounds == best)].min())
            if self.floor == -np.inf:
                return None  # the pool is every feasible candidate, and it is empty
            self.rebuild()  # an outside candidate's bound reaches the pool's best: widen to the top bounds again


def select_greedy(
    problem: SelectionProblem,
    *,
    lazy: bool = True,
    bound_checkpoints: int = 5,
    batch_size: int = 32,
    pool_size: int = 2048,
) -> SelectionResult:
    """Greedy (lazy by default) selection with quotas, duplicate bound, repair and a certified ratio.

    Each lazy step re-evaluates the `batch_size` largest stale bounds of its pool (of `pool_size` candidates), then,
    one vectorised pass each, every stale bound that still reaches the best fresh gain. The pick is plain greedy's:
    a candidate is taken only when its fresh gain is the largest and no other candidate's bound exceeds or ties it
    (ties go to the lowest index, as with argmax; both compute a gain with the same floating-point operations).
    """
    if batch_size < 1 or pool_size < 1:
        raise ValueError("batch_size and pool_size must be at least 1")
    problem.check_quotas()
    state = _State(problem)
    k = problem.k
    every = max(1, k // max(1, bound_checkpoints))
    upper_bound = problem.coverable()
    repairs = 0

    gains0 = state.all_gains()
    upper_bound = min(upper_bound, state.bound(gains0))
    lazy_bounds = _LazyBounds(state, gains0, pool_size) if lazy else None
    step = 0
    while len(state.order) < k:
        if lazy_bounds is None:
            gains = gains0 if step == 0 else state.all_gains()
            upper_bound = min(upper_bound, state.bound(gains))
            masked = np.where(state.feasible_mask(), gains, -np.inf)
            q = int(np.argmax(masked)) if masked.size else 0
            if not masked.size or masked[q] == -np.inf:
                state.repair()
                repairs += 1
            else:
                state.add(q, float(gains[q]))
            step += 1
            continue
        if step and step % every == 0:
            gains = state.all_gains()
            upper_bound = min(upper_bound, state.bound(gains))
            lazy_bounds.refresh(gains, step)  # the full pass makes every bound exact: use it
        picked = lazy_bounds.pick(step, batch_size)
        if picked is None:
            state.repair()
            repairs += 1
            lazy_bounds.refresh(state.all_gains(), step + 1)
        else:
            state.add(picked, float(lazy_bounds.ub[picked]))
        step += 1
    upper_bound = min(upper_bound, state.bound(state.all_gains()))

    selected = np.array(state.order, dtype=np.int64)
    problems = problem.violations(selected)
    if problems:  # a defect here is a bug, not bad input
        raise AssertionError(f"greedy produced an infeasible set: {problems}")
    objective = problem.value(selected)
    counts = np.bincount(problem.strata[selected], minlength=len(problem.stratum_names))
    return SelectionResult(
        method="lazy_greedy" if lazy else "greedy",
        selected=tuple(int(q) for q in selected),
        selected_ids=tuple(problem.candidate_ids[q] for q in selected),
        gains=tuple(state.gains),
        objective=objective,
        upper_bound=max(upper_bound, objective),
        certified_ratio=ratio(objective, max(upper_bound, objective)),
        gain_evaluations=state.evaluations,
        repairs=repairs,
        stratum_counts={name: int(c) for name, c in zip(problem.stratum_names, counts, strict=True)},
    )
