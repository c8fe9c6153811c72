from benchmark_platform.defs.facts.assets import build_defs

__all__ = ["build_defs"]
