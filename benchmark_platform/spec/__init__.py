"""Benchmark specs: typed configuration of a whole benchmark (taxonomy, sources, stages' settings, models)."""

from benchmark_platform.spec.loader import DEFAULT_SPEC, SpecError, load_spec
from benchmark_platform.spec.models import BenchmarkSpec, TaxonomyNode, slug

__all__ = ["DEFAULT_SPEC", "BenchmarkSpec", "SpecError", "TaxonomyNode", "load_spec", "slug"]
