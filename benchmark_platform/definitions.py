"""The Dagster code location: one asset graph per bundled spec (`wine` is the default; see workspace.yaml)."""

from benchmark_platform.defs import build_definitions
from benchmark_platform.spec import load_spec

defs = build_definitions(load_spec("wine"))
