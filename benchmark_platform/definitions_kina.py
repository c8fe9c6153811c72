"""The `kina` code location: KINA's 261 subfields as partitions (see workspace.yaml)."""

from benchmark_platform.defs import build_definitions
from benchmark_platform.spec import load_spec

defs = build_definitions(load_spec("kina"))
