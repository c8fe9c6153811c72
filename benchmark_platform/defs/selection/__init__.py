from benchmark_platform.defs.selection.assets import build_defs

__all__ = ["build_defs"]
