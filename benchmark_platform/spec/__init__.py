"""Benchmark specs: typed configuration of a whole benchmark (taxonomy, sources, stages' settings, models).

A leaf of the platform: it composes the stages' config leaves (`<stage>/config.py`) and imports nothing else of it,
so a spec is loaded and checked without Dagster or any stage's machinery.
"""

from benchmark_platform.keys import slug
from benchmark_platform.spec.loader import DEFAULT_SPEC, SpecError, load_spec, spec_path
from benchmark_platform.spec.models import BenchmarkSpec, TaxonomyNode

__all__ = ["DEFAULT_SPEC", "BenchmarkSpec", "SpecError", "TaxonomyNode", "load_spec", "slug", "spec_path"]
