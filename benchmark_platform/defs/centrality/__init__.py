from benchmark_platform.defs.centrality.assets import build_defs

__all__ = ["build_defs"]
