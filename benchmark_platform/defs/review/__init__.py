"""Dagster wiring of the review stage."""

from benchmark_platform.defs.review.assets import build_defs

__all__ = ["build_defs"]
