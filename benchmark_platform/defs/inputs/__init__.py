from benchmark_platform.defs.inputs.assets import build_defs

__all__ = ["build_defs"]
