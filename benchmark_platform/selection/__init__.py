"""Certified constrained greedy selection maximising F_d^sp (KINA 3.1, Proposition 1, Appendix B).

Generic over candidates: the same code picks facts before generation and items after audit.
"""

from benchmark_platform.selection.greedy import select_greedy
from benchmark_platform.selection.mip import select_mip
from benchmark_platform.selection.problem import (
    InfeasibleSelectionError,
    SelectionProblem,
    SelectionResult,
)

__all__ = ["InfeasibleSelectionError", "SelectionProblem", "SelectionResult", "select_greedy", "select_mip"]
