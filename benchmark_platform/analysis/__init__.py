"""Analysis core: every statistic KINA and OenoBench report, as pure functions over a score matrix.

All accuracies and gaps are in percentage points; every random procedure takes an explicit seed.
"""
