from benchmark_platform.defs.generation.assets import build_defs

__all__ = ["build_defs"]
