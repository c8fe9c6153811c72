"""The constrained coverage problem of KINA Appendix B, generic over candidates (facts or audited items).

max_S F(S) = sum_u mu(u) max_{q in S} S_sp(q, u)  s.t. |S| = K, L_h <= |S cap h| <= U_h, and no two members of S
form a duplicate pair (U_sym > tau_dup). `coverage` holds S_sp as a sparse candidates x bank matrix.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.embed import fixed_dot


class InfeasibleSelectionError(ValueError):
    """The quotas cannot be met; `stratum` names the stratum at fault ('' when it is the total size). `reached`: how
    many items a selection did choose when it ran out of admissible candidates with every lower quota met (None
    otherwise)."""

    def __init__(self, stratum: str, message: str, reached: int | None = None) -> None:
        self.stratum = stratum
        self.reached = reached
        super().__init__(f"stratum {stratum!r}: {message}" if stratum else message)


@dataclass(frozen=True)
class SelectionProblem:
    """Inputs of one selection. Arrays are indexed by candidate (rows) and bank item (columns of `coverage`)."""

    candidate_ids: tuple[str, ...]
    strata: np.ndarray  # (n,) int index into stratum_names
    stratum_names: tuple[str, ...]
    lower: np.ndarray  # (h,) L_h
    upper: np.ndarray  # (h,) U_h
    weights: np.ndarray  # (m,) mu over the bank, >= 0
    coverage: sp.csr_matrix  # (n, m) S_sp in [0, 1]
    k: int  # K_d
    conflicts: np.ndarray = field(default_factory=lambda: np.zeros((0, 2), dtype=np.int64))  # (e, 2) duplicate pairs

    def __post_init__(self) -> None:
        n, m = self.coverage.shape
        h = len(self.stratum_names)
        if len(self.candidate_ids) != n or self.strata.shape != (n,) or self.weights.shape != (m,):
            raise ValueError("candidate_ids, strata, weights and coverage disagree in size")
        if self.lower.shape != (h,) or self.upper.shape != (h,):
            raise ValueError("lower and upper need one entry per stratum")
        if n and (self.strata.min() < 0 or self.strata.max() >= h):
            raise ValueError("strata must index stratum_names")
        if (self.weights < 0).any() or (self.coverage.data < 0).any():
            raise ValueError("weights and coverage must be non-negative (Proposition 1)")
        if self.conflicts.ndim != 2 or self.conflicts.shape[1] != 2:
            raise ValueError("conflicts must be an (e, 2) array of candidate index pairs")
        if self.k < 0:
            raise ValueError("k must be non-negative")

    @property
    def n(self) -> int:
        return self.coverage.shape[0]

    def conflict_graph(self) -> sp.csr_matrix:
        """Symmetric boolean adjacency of the duplicate pairs."""
        e = self.conflicts
        data = np.ones(2 * len(e), dtype=bool)
        rows = np.concatenate([e[:, 0], e[:, 1]])
        cols = np.concatenate([e[:, 1], e[:, 0]])
        return sp.csr_matrix((data, (rows, cols)), shape=(self.n, self.n))

    def check_quotas(self) -> None:
        """Necessary feasibility conditions; raises InfeasibleSelectionError naming the stratum."""
        counts = np.bincount(self.strata, minlength=len(self.stratum_names))
        for h, name in enumerate(self.stratum_names):
            if counts[h] < self.lower[h]:
                raise InfeasibleSelectionError(
                    name,
                    f"needs at least L_h={int(self.lower[h])} items but only {int(counts[h])} candidates are shortlisted",
                )
        if self.lower.sum() > self.k:
            raise InfeasibleSelectionError("", f"sum of lower quotas {int(self.lower.sum())} exceeds K={self.k}")
        reachable = int(np.minimum(self.upper, counts).sum())
        if reachable < self.k:
            raise InfeasibleSelectionError(
                "",
                f"K={self.k} exceeds what quotas and the shortlist allow ({reachable} = sum of min(U_h, shortlisted))",
            )

    def attainable_size(self) -> int:
        """A set size the upper quotas and the duplicate bound certainly allow (lower quotas aside).

        The size of a duplicate-free set grown greedily, fewest conflicts first, under U_h: a lower bound on the
        largest feasible size (finding that is a maximum independent set problem).
        """
        graph = self.conflict_graph()
        degree = np.diff(graph.indptr)
        blocked = np.zeros(self.n, dtype=bool)
        counts = np.zeros(len(self.stratum_names), dtype=np.int64)
        size = 0
        for q in np.lexsort((np.arange(self.n), degree)).tolist():
            h = self.strata[q]
            if blocked[q] or counts[h] >= self.upper[h]:
                continue
            counts[h] += 1
            size += 1
            blocked[graph.indices[graph.indptr[q] : graph.indptr[q + 1]]] = True
        return size

    def violations(self, selected: np.ndarray) -> list[str]:
        """Every constraint the index set `selected` breaks, in words (empty when feasible)."""
        selected = np.asarray(selected, dtype=np.int64)
        problems: list[str] = []
        if len(set(selected.tolist())) != len(selected):
            problems.append("an item is selected twice")
        if len(selected) != self.k:
            problems.append(f"|S|={len(selected)} differs from K={self.k}")
        counts = np.bincount(self.strata[selected], minlength=len(self.stratum_names))
        for h, name in enumerate(self.stratum_names):
            if not self.lower[h] <= counts[h] <= self.upper[h]:
                problems.append(
                    f"stratum {name!r}: {int(counts[h])} outside [{int(self.lower[h])}, {int(self.upper[h])}]"
                )
        chosen = np.zeros(self.n, dtype=bool)
        chosen[selected] = True
        both = chosen[self.conflicts[:, 0]] & chosen[self.conflicts[:, 1]] if len(self.conflicts) else np.zeros(0, bool)
        if both.any():
            problems.append(f"{int(both.sum())} duplicate pairs selected together")
        return problems

    def value(self, selected: np.ndarray) -> float:
        """F(S) = sum_u mu(u) max_{q in S} S_sp(q, u); F(empty) = 0."""
        selected = np.asarray(selected, dtype=np.int64)
        if len(selected) == 0:
            return 0.0
        best = self.coverage[selected].max(axis=0).toarray().ravel()
        return fixed_dot(best, self.weights)  # correctly rounded: it decides repairs and greedy vs MIP

    def coverable(self) -> float:
        """sum_u mu(u) max_q S_sp(q, u) over all candidates: F of the whole pool, an upper bound on any F(S)."""
        if self.n == 0:
            return 0.0
        return fixed_dot(self.coverage.max(axis=0).toarray().ravel(), self.weights)


class SelectionResult(BaseModel):
    """A chosen set and its certificate: `certified_ratio` = objective / upper_bound <= F(S) / OPT."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field(description="lazy_greedy | greedy | mip")
    selected: tuple[int, ...] = Field(description="candidate indices in the order chosen")
    selected_ids: tuple[str, ...]
    gains: tuple[float, ...] = Field(description="marginal gain of each pick when it was made")
    objective: float = Field(description="F(S)")
    upper_bound: float = Field(description="a proven upper bound on the constrained optimum")
    certified_ratio: float = Field(description="F(S) / upper_bound")
    gain_evaluations: int = Field(description="marginal gains computed")
    repairs: int = Field(default=0, description="swaps made to meet lower quotas under the duplicate bound")
    stratum_counts: dict[str, int]


def ratio(objective: float, bound: float) -> float:
    """F / bound with 0/0 = 1 (nothing coverable means every set is optimal)."""
    return 1.0 if bound <= 1e-12 else min(1.0, objective / bound)
