"""The `mmlu_pro` code location: MMLU-Pro as an item bank, its 14 categories as partitions (see workspace.yaml)."""

from benchmark_platform.defs import build_definitions
from benchmark_platform.spec import load_spec

defs = build_definitions(load_spec("mmlu_pro"))
