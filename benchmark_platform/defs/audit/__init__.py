from benchmark_platform.defs.audit.assets import build_defs

__all__ = ["build_defs"]
