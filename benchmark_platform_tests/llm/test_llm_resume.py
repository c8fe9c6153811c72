"""A batch killed with SIGKILL before any cache write is resumed from its journal: nothing is asked twice."""

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from benchmark_platform.llm.double import Latency, Script
from benchmark_platform.llm.gateway import ChatRequest
from benchmark_platform_tests.llm.conftest import scripted_model

CHILD = """
import asyncio, os, signal, sys
from pathlib import Path
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.gateway import ChatRequest, Gateway
from benchmark_platform.store import Database

db_url, base_url, journal, tag = sys.argv[1:5]
model = ModelConfig(name="scripted", family="test", base_url=base_url, model="scripted-1")
requests = [ChatRequest(model="scripted", messages=[{"role": "user", "content": f"{tag} {i}"}]) for i in range(30)]

async def main():
    # flushes far apart: every answer is still only in the journal when the process dies
    gateway = Gateway([model], GatewaySettings(cache_flush_s=3600, cache_flush_rows=10_000), Database(db_url),
                      run_id="killed", journal_dir=Path(journal))
    await gateway.__aenter__()
    results = await gateway.complete_many(requests)
    assert all(r.ok for r in results)
    os.kill(os.getpid(), signal.SIGKILL)

asyncio.run(main())
"""


def test_killed_batch_resumes_from_its_journal(serve, run, db, tmp_path):
    server = serve(Script(default_reply="C"))
    tag = uuid.uuid4().hex
    journal = tmp_path / "journal"
    child = subprocess.run([sys.executable, "-c", CHILD, db.url, server.base_url, str(journal), tag])
    assert child.returncode == -signal.SIGKILL and server.server.calls == 30
    assert db.scalar("SELECT count(*) FROM llm_call_cache WHERE request::text LIKE %s", (f"%{tag}%",)) == 0
    assert len(list(journal.glob("*.jsonl"))) == 1

    requests = [ChatRequest(model="scripted", messages=[{"role": "user", "content": f"{tag} {i}"}]) for i in range(30)]
    results, totals = run([scripted_model(server.base_url)], requests)
    assert server.server.calls == 30, "the resume asked the provider again"
    assert totals.cache_hits == 30 and all(r.text == "C" for r in results)
    assert not list(journal.glob("*.jsonl")), "replayed segments are removed"
    killed = db.query(
        "SELECT count(*) AS n, bool_and(status = 'ok') AS ok FROM llm_calls WHERE run_id = 'killed'"
        " AND request_hash IN (SELECT request_hash FROM llm_call_cache WHERE request::text LIKE %s)",
        (f"%{tag}%",),
    )
    assert killed == [{"n": 30, "ok": True}], "the dead run's telemetry is recovered too"


MID_BATCH_CHILD = """
import asyncio, sys
from pathlib import Path
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.gateway import ChatRequest, Gateway
from benchmark_platform.store import Database

db_url, base_url, journal, tag = sys.argv[1:5]
model = ModelConfig(name="scripted", family="test", base_url=base_url, model="scripted-1", max_concurrency=8)
requests = [ChatRequest(model="scripted", messages=[{"role": "user", "content": f"{tag} {i}"}]) for i in range(120)]

async def main():
    settings = GatewaySettings(cache_flush_s=3600, cache_flush_rows=10_000)
    async with Gateway([model], settings, Database(db_url), run_id="killed-mid-batch", journal_dir=Path(journal)) as gw:
        await gw.complete_many(requests)

asyncio.run(main())
"""


def journalled(journal) -> int:
    return sum(len(p.read_bytes().splitlines()) for p in journal.glob("*.jsonl"))


@pytest.mark.slow  # over 3 s with its setup: the full suite only
def test_a_batch_killed_mid_flight_repays_only_the_calls_in_flight(serve, run, db, tmp_path):
    """Killed while 8 calls are on the wire (issue 22, 9): the resume reports how many were in flight and repaid;
    every call answered before the kill comes from the journal."""
    server = serve(Script(default_reply="B", latency=Latency(mean_s=0.2)))
    tag = uuid.uuid4().hex
    journal = tmp_path / "journal"
    child = subprocess.Popen([sys.executable, "-c", MID_BATCH_CHILD, db.url, server.base_url, str(journal), tag])
    while journalled(journal) < 40:  # a third of the batch answered, the rest queued or on the wire
        assert child.poll() is None, "the batch ended before it could be killed"
        time.sleep(0.01)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    answered = journalled(journal)
    assert 40 <= answered < 120
    sent = sum(len(p.read_bytes().split()) for p in journal.glob("*.sent"))
    assert answered < sent <= answered + 8, "the kill came with calls in flight (concurrency 8)"

    requests = [ChatRequest(model="scripted", messages=[{"role": "user", "content": f"{tag} {i}"}]) for i in range(120)]
    calls_before = server.server.calls
    results, totals = run([scripted_model(server.base_url, max_concurrency=8)], requests, run_id="resume")
    assert all(r.ok and r.text == "B" for r in results)
    assert totals.in_flight_at_crash == sent - answered
    assert totals.repaid_in_flight == totals.in_flight_at_crash, "each call in flight at the kill is asked again"
    assert totals.cache_hits == answered, "every answer received before the kill is replayed from the journal"
    assert totals.provider_calls == server.server.calls - calls_before == 120 - answered
    assert not list(journal.glob("*.sent")) and not list(journal.glob("*.jsonl"))
