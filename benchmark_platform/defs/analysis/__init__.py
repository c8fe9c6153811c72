from benchmark_platform.defs.analysis.assets import build_defs

__all__ = ["build_defs"]
