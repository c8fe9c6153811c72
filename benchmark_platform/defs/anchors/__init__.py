from benchmark_platform.defs.anchors.assets import build_defs

__all__ = ["build_defs"]
