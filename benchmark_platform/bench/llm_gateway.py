"""LLM gateway benchmark against a scripted OpenAI-compatible server on loopback.

The server runs in its own process pinned to core 1, the gateway in this process pinned to core 0; every run uses a
fresh database on the platform's PostgreSQL (cache and telemetry written as in production), dropped at the end.

Figures (ratios are achieved calls/s over the bound concurrency / mean latency, for single-letter answers):
- throughput_over_bound: 2,000 calls, fixed 200 ms latency, 64 concurrent; `_c128` at 128 concurrent;
  `_429` at 64 with 5% of requests answered 429 at once with Retry-After: 1. Each is the median of REPEATS runs,
  interleaved with the bare-aiohttp runs it is compared with.
- *_warm: the same 2,000 calls on connections a first batch of `concurrency` other calls opened, as the bare clients
  below are measured (opening 64-128 connections costs the cold runs 10-25 ms).
- ceiling*: what a client with zero overhead reaches in each of those runs (2,000 / 64 leaves a last wave of 16
  calls, so 0.977 at 64 and 128; with 429s, the last rate-limited calls wait a full Retry-After at the end).
- overhead_ms_per_call: CPU time of this process (gateway, HTTP client, journal, cache-writer thread) per call,
  in the c=64 run.
- raw_aiohttp_*: a bare aiohttp client with a semaphore, no cache or limits: what any Python client reaches on this
  machine at that moment (the machine is shared, so read the gateway's ratios against these).
- floor_client_*: a raw keep-alive HTTP/1.1 loop (`_floor_run`) with nothing but a semaphore and a JSON parse: the
  least per-call work a Python client can do, so what this machine and server allow at all.
- openai_sdk_*: the same c=64 run through `openai.AsyncOpenAI` (aiohttp transport, pool sized to the concurrency,
  SDK retries off) with a bare semaphore and no cache: why the gateway speaks the protocol itself.
- repeated_calls_after_resume: 10,000 calls (100 ms, 128 concurrent) in a child process killed with SIGKILL half way,
  then resumed in a new one: requests whose answer reached the dead client and that the server is asked again. At the
  kill point the server is frozen (SIGSTOP) and the client gets 0.2 s to read what was already on the wire before the
  SIGKILL (on a loaded machine a response can sit unread in the socket buffer; that one never reached the client).
- oenobench_sim_*: OenoBench's evaluation, 16 configs x 3,266 questions = 52,256 calls, each config its own provider
  with 8 slots, latency lognormal with mean 200 ms (time scaled: see BENCHMARKS.md), 2% 429s and 0.5% 500s; then the
  same evaluation again, answered from the cache.
- local_mcq_*: with the `local-llm` extra, the bundled Gemma 3 270M base model answers the first 40 MMLU
  'miscellaneous' test items (../shared/data) by option likelihood through the gateway: acc and acc_norm (per char).
"""

from __future__ import annotations

import asyncio
import csv
import heapq
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

import aiohttp
import httpx2
import openai
import psycopg2
import uvloop

from benchmark_platform.llm.config import GatewaySettings, ModelConfig, Prices
from benchmark_platform.llm.double import Latency, Script
from benchmark_platform.llm.gateway import ChatRequest, Gateway, GatewayTotals
from benchmark_platform.paths import PROJECT_ROOT
from benchmark_platform.runtime import frozen_heap
from benchmark_platform.store import Database, migrate
from benchmark_platform.store.settings import database_url

T = TypeVar("T")
CLIENT_CORE, SERVER_CORE = 0, 1
N_CALLS = 2_000
LATENCY_S = 0.2
REPEATS = 3
RESUME_CALLS, RESUME_C, RESUME_LATENCY_S = 10_000, 128, 0.1
RESUME_FLUSH_ROWS, DRAIN_S = 2_000, 0.2
OENO_CONFIGS, OENO_QUESTIONS, OENO_SLOTS = 16, 3_266, 8
MMLU_CSV = PROJECT_ROOT.parent / "shared" / "data" / "mmlu_hendrycks" / "test" / "miscellaneous_test.csv"
MCQ_ITEMS = 40


class ScriptedProcess:
    """The scripted server in its own process on SERVER_CORE."""

    def __init__(self, script: Script) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="llm_bench_"))
        (self.dir / "script.json").write_text(script.model_dump_json())
        port_file = self.dir / "port"
        code = (
            f"import os; os.sched_setaffinity(0, {{{SERVER_CORE}}}); "
            "from benchmark_platform.llm.double import main; main()"
        )
        self.proc = subprocess.Popen([sys.executable, "-c", code, str(self.dir / "script.json"), str(port_file)])
        while not port_file.exists():
            if self.proc.poll() is not None:
                raise RuntimeError("the scripted server did not start")
            time.sleep(0.05)
        self.base_url = f"http://127.0.0.1:{port_file.read_text()}/v1"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait()


def _model(base_url: str, name: str = "bench", concurrency: int = 64, provider: str = "") -> ModelConfig:
    return ModelConfig(
        name=name,
        family="bench",
        base_url=base_url,
        provider=provider or "loopback",
        model="m",
        max_tokens=1,
        max_concurrency=concurrency,
        prices=Prices(input_per_m=0.15, output_per_m=0.6),
    )


def _requests(tag: str, n: int, model: str = "bench") -> list[ChatRequest]:
    return [
        ChatRequest(model=model, messages=[{"role": "user", "content": f"{tag} question {i}: A, B, C or D?"}])
        for i in range(n)
    ]


async def _gateway_run(
    db: Database,
    models: list[ModelConfig],
    requests: list[ChatRequest],
    journal: Path,
    settings: GatewaySettings = GatewaySettings(),  # noqa: B008
    warm_up: Sequence[ChatRequest] = (),
) -> tuple[float, float, Gateway]:
    async with Gateway(models, settings, db, run_id="bench", journal_dir=journal) as gw:
        if warm_up:  # open the connections first, as the bare clients do
            await gw.complete_many(warm_up)
            gw.totals = GatewayTotals()
        cpu0, t0 = time.process_time(), time.perf_counter()
        await gw.complete_many(requests)
        wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    return wall, cpu, gw


def ceiling(n: int, concurrency: int, script: Script) -> float:
    """The ratio a client with zero overhead reaches against `script`'s server (fixed latency; 429s answered at
    once, drawn from the server's seeded generator in arrival order; retries after Retry-After plus the gateway's
    mean jitter): what no client can beat. With fixed latency and no faults it is n / (c * ceil(n / c))."""
    server_rng, clock = random.Random(script.seed), 0.0
    latency, wait = script.latency.mean_s, script.retry_after_s * 1.025
    events: list[tuple[float, int, bool | None]] = []  # (time, sequence, rate limited; None: a wait is over)
    fresh, due, free, seq, last = n, 0, concurrency, 0, 0.0

    def start(now: float) -> None:
        nonlocal fresh, due, free, seq
        while free and (due or fresh):
            due, fresh = (due - 1, fresh) if due else (due, fresh - 1)
            free, seq = free - 1, seq + 1
            limited = bool(script.rate_429) and server_rng.random() < script.rate_429
            heapq.heappush(events, (now if limited else now + latency, seq, limited))

    start(clock)
    while events:
        clock, _, limited = heapq.heappop(events)
        if limited is None:  # a retry's wait is over
            due += 1
        else:
            free += 1
            if limited:
                seq += 1
                heapq.heappush(events, (clock + wait, seq, None))
            else:
                last = clock
        start(clock)
    return n / last / (concurrency / latency)


def throughput(
    db: Database, script: Script, concurrency: int, journal: Path, warm: bool = False
) -> tuple[float, float]:
    """(ratio to the bound, CPU ms per call) for N_CALLS fresh calls; `warm`: on connections opened by a first batch
    of `concurrency` other calls, as the bare clients measure."""
    server = ScriptedProcess(script)
    try:
        requests = _requests(uuid.uuid4().hex, N_CALLS)
        warm_up = _requests(uuid.uuid4().hex, concurrency) if warm else []
        wall, cpu, gw = uvloop.run(
            _gateway_run(db, [_model(server.base_url, concurrency=concurrency)], requests, journal, warm_up=warm_up)
        )
        assert gw.totals.status["ok"] == N_CALLS, gw.totals
    finally:
        server.stop()
    return N_CALLS / wall / (concurrency / script.latency.mean_s), cpu / N_CALLS * 1000


async def _sdk_run(base_url: str, concurrency: int) -> tuple[float, float]:
    http = openai.DefaultAioHttpClient(
        limits=httpx2.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    )
    client = openai.AsyncOpenAI(base_url=base_url, api_key="unused", http_client=http, max_retries=0)
    slots = asyncio.Semaphore(concurrency)
    tag = uuid.uuid4().hex

    async def one(i: int) -> str | None:
        async with slots:
            r = await client.chat.completions.create(
                model="m", max_tokens=1, messages=[{"role": "user", "content": f"{tag} question {i}: A, B, C or D?"}]
            )
            return r.choices[0].message.content

    await asyncio.gather(*(one(-1 - i) for i in range(concurrency)))  # open the connections first
    cpu0, t0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(N_CALLS)))
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await client.close()
    return N_CALLS / wall / (concurrency / LATENCY_S), cpu / N_CALLS * 1000


async def _raw_run(base_url: str, concurrency: int) -> float:
    slots = asyncio.Semaphore(concurrency)
    tag = uuid.uuid4().hex
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:

        async def one(i: int) -> str:
            body = {
                "model": "m",
                "max_tokens": 1,
                "messages": [{"role": "user", "content": f"{tag} question {i}: A, B, C or D?"}],
            }
            async with slots, session.post(f"{base_url}/chat/completions", json=body) as r:
                return (await r.json())["choices"][0]["message"]["content"]

        await asyncio.gather(*(one(-1 - i) for i in range(concurrency)))
        t0 = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(N_CALLS)))
        return N_CALLS / (time.perf_counter() - t0) / (concurrency / LATENCY_S)


class _FloorConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection that reads Content-Length framed answers and nothing else."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.answer: asyncio.Future[bytes] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head, found, rest = self.buffer.partition(b"\r\n\r\n")
        if not found:
            return
        length = next(
            int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")
        )
        if len(rest) >= length and self.answer is not None:
            self.buffer = rest[length:]
            self.answer.set_result(rest[:length])


async def _floor_run(base_url: str, concurrency: int) -> float:
    """The least a Python client can do per call: a semaphore, a pool of raw keep-alive connections, the request
    written in one call and the answer's JSON parsed. A measuring instrument for what this machine and server allow,
    not a client (no TLS, no chunked bodies, no errors)."""
    host, port = base_url.split("//")[1].split("/")[0].split(":")
    loop, slots, tag = asyncio.get_running_loop(), asyncio.Semaphore(concurrency), uuid.uuid4().hex
    pool: list[_FloorConnection] = []

    async def one(i: int) -> str:
        body = json.dumps(
            {
                "model": "m",
                "max_tokens": 1,
                "messages": [{"role": "user", "content": f"{tag} question {i}: A, B, C or D?"}],
            }
        ).encode()
        async with slots:
            conn = pool.pop() if pool else (await loop.create_connection(_FloorConnection, host, int(port)))[1]
            conn.answer = loop.create_future()
            assert conn.transport is not None  # connection_made set it
            conn.transport.write(
                b"POST /v1/chat/completions HTTP/1.1\r\nHost: %s:%s\r\nContent-Type: application/json"
                b"\r\nContent-Length: %d\r\n\r\n%s" % (host.encode(), port.encode(), len(body), body)
            )
            raw = await conn.answer
            pool.append(conn)
        return json.loads(raw)["choices"][0]["message"]["content"]

    await asyncio.gather(*(one(-1 - i) for i in range(concurrency)))
    t0 = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(N_CALLS)))
    return N_CALLS / (time.perf_counter() - t0) / (concurrency / LATENCY_S)


def reference_client(run: Callable[[str, int], Coroutine[Any, Any, T]], concurrency: int) -> T:
    """A run of a bare client (no cache, no limits) against a fresh server, for side-by-side ratios. Its heap is
    frozen as the gateway's is: a full collection here took 37-65 ms, enough to move a 6 s run by 0.01."""
    server = ScriptedProcess(Script(latency=Latency(mean_s=LATENCY_S)))
    try:
        with frozen_heap():
            return uvloop.run(run(server.base_url, concurrency))
    finally:
        server.stop()


def _resume_child(db_url: str, base_url: str, journal: str, tag: str) -> None:
    """The batch that gets killed (and the one that resumes it). Cache rows are written every 2,000 answers, so the
    kill finds up to that many answers in the journal only."""
    os.sched_setaffinity(0, {CLIENT_CORE})
    model = _model(base_url, concurrency=RESUME_C)
    settings = GatewaySettings(cache_flush_rows=RESUME_FLUSH_ROWS, cache_flush_s=60.0)
    _, _, gw = uvloop.run(
        _gateway_run(Database(db_url), [model], _requests(tag, RESUME_CALLS), Path(journal), settings)
    )
    print(
        json.dumps(
            {"recovered": gw.recovered_calls, "hits": gw.totals.cache_hits, "provider_calls": gw.totals.provider_calls}
        )
    )


def kill_and_resume(db: Database, journal: Path) -> dict[str, int]:
    log_path = Path(tempfile.mkdtemp(prefix="llm_bench_")) / "answered.log"
    server = ScriptedProcess(Script(latency=Latency(mean_s=RESUME_LATENCY_S), log_path=str(log_path)))
    tag = uuid.uuid4().hex
    cmd = [
        sys.executable,
        "-m",
        "benchmark_platform.bench.llm_gateway",
        "--resume-child",
        db.url,
        server.base_url,
        str(journal),
        tag,
    ]
    try:
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE)
        while not log_path.exists() or sum(1 for _ in log_path.open()) < RESUME_CALLS // 2:
            time.sleep(0.02)
        # freeze the provider, give the client a moment to read what was already sent, then kill it
        killed_at = time.monotonic()
        os.kill(server.proc.pid, signal.SIGSTOP)
        time.sleep(DRAIN_S)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        os.kill(server.proc.pid, signal.SIGCONT)
        time.sleep(RESUME_LATENCY_S * 3)  # the server answers the dead client's requests still in flight
        resumed_from = time.monotonic()
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        resume = json.loads(out.strip().splitlines()[-1])
    finally:
        server.stop()
    before, after_kill, resumed = set(), 0, []
    for line in log_path.read_text().splitlines():
        key, at = line.split()
        if float(at) < killed_at:
            before.add(key)
        elif float(at) < resumed_from:
            after_kill += 1
        else:
            resumed.append(key)
    return {
        "resume_calls": RESUME_CALLS,
        "answered_before_kill": len(before),
        "answered_to_the_dead_client": after_kill,
        "recovered_from_journal": resume["recovered"],
        "resume_cache_hits": resume["hits"],
        "resume_provider_calls": len(resumed),
        "repeated_calls_after_resume": sum(1 for key in resumed if key in before),
    }


def oenobench_simulation(db: Database, journal: Path) -> dict[str, float]:
    latency = Latency(kind="lognormal", mean_s=0.2, sigma=0.5)
    server = ScriptedProcess(Script(latency=latency, rate_429=0.02, rate_500=0.005, retry_after_s=1.0))
    tag = uuid.uuid4().hex
    try:
        models = [
            _model(server.base_url, name=f"config{k}", concurrency=OENO_SLOTS, provider=f"provider{k}")
            for k in range(OENO_CONFIGS)
        ]
        requests = [r for k in range(OENO_CONFIGS) for r in _requests(tag, OENO_QUESTIONS, model=f"config{k}")]
        wall, cpu, gw = uvloop.run(_gateway_run(db, models, requests, journal))
        rerun_wall, _, rerun = uvloop.run(_gateway_run(db, models, requests, journal))
    finally:
        server.stop()
    bound = OENO_CONFIGS * OENO_SLOTS / latency.mean_s
    return {
        "oenobench_sim_calls": len(requests),
        "oenobench_sim_ok": gw.totals.status["ok"],
        "oenobench_sim_retries": gw.totals.retries,
        "oenobench_sim_wall_s": round(wall, 1),
        "oenobench_sim_throughput_over_bound": round(len(requests) / wall / bound, 4),
        "oenobench_sim_cpu_ms_per_call": round(cpu / len(requests) * 1000, 3),
        "oenobench_sim_cost_usd": round(gw.totals.cost_usd, 4),
        "oenobench_sim_rerun_s": round(rerun_wall, 1),
        "oenobench_sim_rerun_provider_calls": rerun.totals.provider_calls,
        "oenobench_sim_rerun_cost_usd": rerun.totals.cost_usd,
    }


def local_mcq(db: Database, journal: Path) -> dict[str, float]:
    """The bundled local model on the first MCQ_ITEMS MMLU 'miscellaneous' test items, by option likelihood."""
    import importlib.util

    if importlib.util.find_spec("llama_cpp") is None:  # the model itself is imported only when the server starts
        print("local_mcq: not measured: the `local-llm` extra is not installed", file=sys.stderr, flush=True)
        return {}
    from benchmark_platform.llm.local import MODEL_ID, LocalModelServer
    from benchmark_platform.llm.mcq import McqItem, answer_all

    with MMLU_CSV.open(newline="") as f:
        items = [McqItem(r[0], tuple(r[1:5]), "ABCD".index(r[5].strip())) for r in list(csv.reader(f))[:MCQ_ITEMS]]
    with LocalModelServer() as server:
        model = ModelConfig(
            name="gemma-local",
            family="gemma",
            backend="local_llama",
            base_url=server.base_url,
            model=MODEL_ID,
            max_concurrency=1,
        )

        async def run() -> list:
            async with Gateway([model], GatewaySettings(), db, run_id="bench-mcq", journal_dir=journal) as gw:
                return await answer_all(gw, model.name, items)

        t0 = time.perf_counter()
        answers = asyncio.run(run())
        seconds = time.perf_counter() - t0
    pairs = list(zip(answers, items, strict=True))
    return {
        "local_mcq_items": len(items),
        "local_mcq_acc": round(sum(a.predicted == it.answer_index for a, it in pairs) / len(items), 4),
        "local_mcq_acc_norm": round(sum(a.predicted_norm == it.answer_index for a, it in pairs) / len(items), 4),
        "local_mcq_s_per_item": round(seconds / len(items), 2),
    }


def _median(runs: list[tuple[float, float]]) -> tuple[float, float]:
    """The run with the median ratio (its CPU figure with it)."""
    return sorted(runs)[len(runs) // 2]


def _fresh_database() -> tuple[Database, str]:
    server = database_url(start_embedded=True)
    admin_url = server.rsplit("/", 1)[0] + "/postgres"
    name = f"bench_llm_{uuid.uuid4().hex[:8]}"
    admin = psycopg2.connect(admin_url)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'CREATE DATABASE "{name}"')
    admin.close()
    db = Database(server.rsplit("/", 1)[0] + f"/{name}")
    migrate(db)
    return db, admin_url


def _drop(db: Database, admin_url: str) -> None:
    admin = psycopg2.connect(admin_url)
    admin.autocommit = True
    with admin.cursor() as cur:
        cur.execute(f'DROP DATABASE IF EXISTS "{db.url.rsplit("/", 1)[1]}" WITH (FORCE)')
    admin.close()


def main() -> None:
    if sys.argv[1:2] == ["--resume-child"]:
        _resume_child(*sys.argv[2:6])
        return
    os.sched_setaffinity(0, {CLIENT_CORE})
    db, admin_url = _fresh_database()
    journal = Path(tempfile.mkdtemp(prefix="llm_journal_"))
    try:
        plain = Script(latency=Latency(mean_s=LATENCY_S))
        limited = Script(latency=Latency(mean_s=LATENCY_S), rate_429=0.05, retry_after_s=1.0)
        # REPEATS rounds, the gateway and the bare client interleaved, medians reported: one 6 s run moves by
        # +-0.02 on this shared machine (timer wake-ups, the database's own processes on the client's core)
        runs: dict[str, list] = defaultdict(list)
        for _ in range(REPEATS):
            runs["c64"].append(throughput(db, plain, 64, journal))
            runs["c64_warm"].append(throughput(db, plain, 64, journal, warm=True))
            runs["raw64"].append(reference_client(_raw_run, 64))
            runs["floor64"].append(reference_client(_floor_run, 64))
            runs["c128"].append(throughput(db, plain, 128, journal))
            runs["c128_warm"].append(throughput(db, plain, 128, journal, warm=True))
            runs["raw128"].append(reference_client(_raw_run, 128))
            runs["floor128"].append(reference_client(_floor_run, 128))
            runs["429"].append(throughput(db, limited, 64, journal))
        (r64, cpu64), (r128, cpu128), (r429, _), (r64w, _), (r128w, _) = (
            _median(runs[k]) for k in ("c64", "c128", "429", "c64_warm", "c128_warm")
        )
        raw64, raw128, floor64, floor128 = (
            statistics.median(runs[k]) for k in ("raw64", "raw128", "floor64", "floor128")
        )
        sdk_ratio, sdk_cpu = reference_client(_sdk_run, 64)
        resume = kill_and_resume(db, journal)
        sim = oenobench_simulation(db, journal)
        mcq = local_mcq(db, journal)
    finally:
        _drop(db, admin_url)
    print(
        json.dumps(
            {
                "bench": "llm_gateway",
                "calls": N_CALLS,
                "throughput_over_bound": round(r64, 4),
                "throughput_over_bound_c128": round(r128, 4),
                "throughput_over_bound_429": round(r429, 4),
                "throughput_over_bound_warm": round(r64w, 4),
                "throughput_over_bound_c128_warm": round(r128w, 4),
                "overhead_ms_per_call": round(cpu64, 3),
                "overhead_ms_per_call_c128": round(cpu128, 3),
                "ceiling": round(ceiling(N_CALLS, 64, plain), 4),
                "ceiling_c128": round(ceiling(N_CALLS, 128, plain), 4),
                "ceiling_429": round(ceiling(N_CALLS, 64, limited), 4),
                "raw_aiohttp_throughput_over_bound": round(raw64, 4),
                "raw_aiohttp_throughput_over_bound_c128": round(raw128, 4),
                "floor_client_throughput_over_bound": round(floor64, 4),
                "floor_client_throughput_over_bound_c128": round(floor128, 4),
                "openai_sdk_throughput_over_bound": round(sdk_ratio, 4),
                "openai_sdk_cpu_ms_per_call": round(sdk_cpu, 3),
                **resume,
                **sim,
                **mcq,
                "load_average_1m": round(os.getloadavg()[0], 2),
            }
        )
    )


if __name__ == "__main__":
    main()
