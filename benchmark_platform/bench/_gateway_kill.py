"""The faults bench's killed LLM batch: 120 calls at concurrency 8 (1 s each) against a scripted server in its own
process, the client killed with SIGKILL mid-batch, then resumed. The server's request log says which calls were
answered before the kill; the resuming gateway says which were in flight and asked again."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from benchmark_platform.bench.llm_gateway import ScriptedProcess
from benchmark_platform.llm.config import GatewaySettings, ModelConfig
from benchmark_platform.llm.double import Latency, Script
from benchmark_platform.llm.gateway import ChatRequest, Gateway, GatewayTotals
from benchmark_platform.store import Database, migrate

CALLS, CONCURRENCY, LATENCY_S, DRAIN_S = 120, 8, 1.0, 0.5


def _model(base_url: str) -> ModelConfig:
    return ModelConfig(name="faults", family="test", base_url=base_url, model="m", max_concurrency=CONCURRENCY)


def _requests(tag: str) -> list[ChatRequest]:
    return [ChatRequest(model="faults", messages=[{"role": "user", "content": f"{tag} {i}"}]) for i in range(CALLS)]


async def _batch(db_url: str, base_url: str, journal: Path, tag: str, run_id: str) -> GatewayTotals:
    settings = GatewaySettings(cache_flush_s=3600, cache_flush_rows=10_000)  # every answer stays in the journal
    async with Gateway([_model(base_url)], settings, Database(db_url), run_id=run_id, journal_dir=journal) as gw:
        await gw.complete_many(_requests(tag))
    return gw.totals


def _answered(log: Path) -> list[tuple[str, float]]:
    if not log.exists():
        return []
    return [(key, float(at)) for key, at in (line.split() for line in log.read_text().splitlines() if line.strip())]


def kill_mid_batch(db: Database, journal: Path) -> dict[str, int]:
    migrate(db)
    log = Path(tempfile.mkdtemp(prefix="faults_llm_")) / "answered.log"
    server = ScriptedProcess(Script(latency=Latency(mean_s=LATENCY_S), log_path=str(log)))
    tag = uuid.uuid4().hex
    code = "import sys; from benchmark_platform.bench._gateway_kill import child; child(*sys.argv[1:])"
    try:
        process = subprocess.Popen([sys.executable, "-c", code, db.url, server.base_url, str(journal), tag])
        while len(_answered(log)) < CALLS // 3:
            if process.poll() is not None:
                raise RuntimeError("the LLM batch ended before it could be killed")
            time.sleep(0.02)
        # freeze the provider, let the client read what was already sent, then kill it mid-batch
        os.kill(server.proc.pid, signal.SIGSTOP)
        time.sleep(DRAIN_S)
        killed_at = time.monotonic()
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
        os.kill(server.proc.pid, signal.SIGCONT)
        time.sleep(LATENCY_S * 1.5)  # the server answers the dead client's requests (nobody reads them)
        before = {key for key, at in _answered(log) if at < killed_at}
        resumed_from = time.monotonic()
        totals = asyncio.run(_batch(db.url, server.base_url, journal, tag, "faults-resume"))
    finally:
        server.stop()
    repaid = [key for key, at in _answered(log) if at >= resumed_from]
    return {
        "llm_calls": CALLS,
        "llm_answered_before_kill": len(before),
        "calls_in_flight_at_kill": totals.in_flight_at_crash,
        "calls_repaid_in_flight": totals.repaid_in_flight,
        "calls_repaid_completed": sum(1 for key in repaid if key in before),
        "llm_resume_provider_calls": len(repaid),
        "llm_resume_cache_hits": totals.cache_hits,
    }


def child(db_url: str, base_url: str, journal: str, tag: str) -> None:
    asyncio.run(_batch(db_url, base_url, Path(journal), tag, "faults-killed"))
