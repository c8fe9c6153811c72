from benchmark_platform.defs.itembank.assets import build_defs

__all__ = ["build_defs"]
