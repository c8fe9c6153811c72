"""Fixtures of the LLM gateway tests: a scripted loopback server and a gateway factory on the session database."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.double import Script, ServerThread, scripted_servers
from benchmark_platform.llm.gateway import Gateway


@pytest.fixture
def serve() -> Iterator[Callable[[Script], ServerThread]]:
    """Start scripted servers on loopback; all are stopped after the test."""
    with scripted_servers() as start:
        yield start


FAST = GatewaySettings(backoff_base_s=0.01, backoff_max_s=0.05, cache_flush_s=0.05)


def scripted_model(base_url: str, name: str = "scripted", **kw: object) -> ModelConfig:
    return ModelConfig(name=name, family="test", base_url=base_url, model="scripted-1", **kw)


@pytest.fixture
def run(db, tmp_path: Path):
    """`run(models, requests, settings=..., schema=...) -> (results, totals)`: one batch through a fresh gateway on
    the session database, with a journal folder of this test."""

    def go(models, requests, *, settings: GatewaySettings = FAST, schema=None, run_id: str = "test"):
        async def main():
            async with Gateway(models, settings, db, run_id=run_id, journal_dir=tmp_path / "journal") as gw:
                results = await gw.complete_many(requests, schema)
            return results, gw.totals

        return asyncio.run(main())

    return go
