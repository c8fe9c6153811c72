from benchmark_platform.defs.evaluation.assets import build_defs

__all__ = ["build_defs"]
