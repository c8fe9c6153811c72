from benchmark_platform.defs.ingest.assets import build_defs

__all__ = ["build_defs"]
