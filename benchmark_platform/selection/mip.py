"""Exact selection by mixed-integer programming (HiGHS via scipy.optimize.milp), for moderate |K_d|.

Variables: x_q in {0, 1} per candidate, z_qu in [0, 1] per non-zero S_sp(q, u). Maximise
sum mu(u) S_sp(q, u) z_qu subject to z_qu <= x_q, sum_q z_qu <= 1 per bank item u, sum x = K,
L_h <= sum_{q in h} x_q <= U_h, and x_q + x_v <= 1 per duplicate pair. For fixed x the best z puts each u on
its best chosen q, so the optimum equals max F(S). The solver's dual bound certifies any greedy result too.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.optimize import Bounds, LinearConstraint, milp

from benchmark_platform.selection.problem import (
    InfeasibleSelectionError,
    SelectionProblem,
    SelectionResult,
    ratio,
)


def select_mip(problem: SelectionProblem, *, time_limit: float = 60.0) -> SelectionResult:
    """Solve the constrained problem exactly (or to the time limit, with the solver's bound as certificate)."""
    problem.check_quotas()
    n = problem.n
    cov = problem.coverage.tocoo()
    nz = cov.nnz
    rows_q, cols_u = cov.row.astype(np.int64), cov.col.astype(np.int64)
    objective = -np.concatenate([np.zeros(n), cov.data * problem.weights[cols_u]])

    z = np.arange(nz)
    link = sp.csr_matrix(
        (np.concatenate([np.ones(nz), -np.ones(nz)]), (np.concatenate([z, z]), np.concatenate([n + z, rows_q]))),
        shape=(nz, n + nz),
    )
    one_per_u = sp.csr_matrix((np.ones(nz), (cols_u, n + z)), shape=(problem.coverage.shape[1], n + nz))
    size = sp.csr_matrix(np.concatenate([np.ones(n), np.zeros(nz)])[None, :])
    h = len(problem.stratum_names)
    quota = sp.csr_matrix((np.ones(n), (problem.strata, np.arange(n))), shape=(h, n + nz))
    constraints = [
        LinearConstraint(link, -np.inf, 0.0),
        LinearConstraint(one_per_u, -np.inf, 1.0),
        LinearConstraint(size, problem.k, problem.k),
        LinearConstraint(quota, problem.lower.astype(float), problem.upper.astype(float)),
    ]
    if len(problem.conflicts):
        e = len(problem.conflicts)
        pairs = sp.csr_matrix(
            (np.ones(2 * e), (np.repeat(np.arange(e), 2), problem.conflicts.ravel())), shape=(e, n + nz)
        )
        constraints.append(LinearConstraint(pairs, -np.inf, 1.0))
    integrality = np.concatenate([np.ones(n), np.zeros(nz)])
    result = milp(
        objective,
        constraints=constraints,
        integrality=integrality,
        bounds=Bounds(0.0, 1.0),
        options={"time_limit": time_limit, "mip_rel_gap": 1e-9},
    )
    if result.x is None:
        raise InfeasibleSelectionError("", f"the MIP found no feasible selection ({result.message})")
    selected = np.flatnonzero(result.x[:n] > 0.5)
    value = problem.value(selected)
    bound = -float(result.mip_dual_bound) if result.mip_dual_bound is not None else value
    counts = np.bincount(problem.strata[selected], minlength=h)
    return SelectionResult(
        method="mip",
        selected=tuple(int(q) for q in selected),
        selected_ids=tuple(problem.candidate_ids[q] for q in selected),
        gains=(),
        objective=value,
        upper_bound=max(bound, value),
        certified_ratio=ratio(value, max(bound, value)),
        gain_evaluations=0,
        stratum_counts={name: int(c) for name, c in zip(problem.stratum_names, counts, strict=True)},
    )
