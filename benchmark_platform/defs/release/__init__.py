from benchmark_platform.defs.release.assets import build_defs

__all__ = ["build_defs"]
