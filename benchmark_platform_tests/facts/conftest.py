"""Shared fixtures of the facts tests: the wine spec's extractor, built once (models load in ~3 s)."""

from __future__ import annotations

import pytest

from benchmark_platform.facts.config import FactsConfig
from benchmark_platform.facts.models import SourceDocument
from benchmark_platform.facts.prose import ProseExtractor, ProseResult
from benchmark_platform.spec import BenchmarkSpec


@pytest.fixture(scope="session")
def facts_config(wine_spec: BenchmarkSpec) -> FactsConfig:
    return wine_spec.facts.model_copy(update={"processes": 1})


@pytest.fixture(scope="session")
def extractor(wine_spec: BenchmarkSpec, facts_config: FactsConfig) -> ProseExtractor:
    return ProseExtractor(facts_config, wine_spec.directory)


@pytest.fixture
def run(extractor: ProseExtractor):
    """Extract one prose document (source 'wikibooks_wine' unless told) and return the result."""

    def extract(text: str, source: str = "wikibooks_wine", title: str = "") -> ProseResult:
        return extractor.extract([SourceDocument("doc", source, "text/plain", title, text)])

    return extract
