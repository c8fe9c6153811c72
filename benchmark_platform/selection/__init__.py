"""Certified constrained greedy selection maximising F_d^sp (KINA 3.1, Proposition 1, Appendix B).

Generic over candidates: the same code picks facts before generation and items after audit.
"""

from typing import TYPE_CHECKING

from benchmark_platform._exports import lazy_exports

if TYPE_CHECKING:
    from benchmark_platform.selection.problem import SelectionResult
    from benchmark_platform.selection.run import select_facts, select_items
else:
    __getattr__, __dir__ = lazy_exports(__name__)

__all__ = [
    "SelectionResult",
    "select_facts",
    "select_items",
]
