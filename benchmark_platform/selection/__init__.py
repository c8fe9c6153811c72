"""Certified constrained greedy selection maximising F_d^sp (KINA 3.1, Proposition 1, Appendix B).

Generic over candidates: the same code picks facts before generation and items after audit.
"""
