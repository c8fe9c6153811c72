"""The one way the platform calls a model: any OpenAI-compatible endpoint, cached, coalesced, limited, retried, priced.

    async with Gateway(models, settings, db, run_id="...") as gw:
        results = await gw.complete_many([ChatRequest(model="gpt", messages=[...]), ...], schema=Answer)
        totals = gw.totals

Per provider: a concurrency bound, token buckets for rpm / tpm (waited on before a slot is taken), a circuit breaker.
Per call: a cache lookup by `request_hash` (PostgreSQL), coalescing with an identical call in flight, retries with
backoff on 429 / 5xx / timeouts / unreadable bodies honouring Retry-After (the wait holds no slot), a cost reservation
against the run's cap (a call that could cross the cap is not sent), and one telemetry row.

Wire client. The requests are the OpenAI REST protocol (`/chat/completions`, `/completions`), sent with aiohttp rather
than through the `openai` SDK: measured on this machine (bench `llm_gateway`, key `openai_sdk_cpu_ms_per_call`), the
SDK's request transform, httpx request building and response model construction cost 1.2-2.6 ms of CPU per call even
on its aiohttp transport, above the 1 ms budget and enough to cap throughput at 128 concurrent calls; the raw body and
a plain JSON parse cost a tenth of that. The protocol, and so every OpenAI-compatible provider, is unchanged.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import random
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.llm.cache import CachedResponse, ResponseStore, state_folder, without_nul
from benchmark_platform.llm.config import GatewaySettings, ModelConfig, provider_limits
from benchmark_platform.llm.limits import CircuitOpen, Provider, parse_retry_after, retry_delay
from benchmark_platform.llm.structured import ExtractionError, extract
from benchmark_platform.runtime import frozen_heap
from benchmark_platform.store import Database

log = logging.getLogger(__name__)
FIRST_CHUNK, MAX_CHUNK = 64, 512  # requests prepared and looked up at a time (see complete_many)


class ChatRequest(BaseModel):
    """One chat completion. `sample_index` tells apart repeated samples of one prompt (avg@k): it is part of the
    cache key, so sample 3 of a rerun hits sample 3's answer. `temperature` / `max_tokens` override the config's."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str
    messages: list[dict[str, str]] = Field(min_length=1)
    seed: int | None = None
    sample_index: int = Field(default=0, ge=0)
    temperature: float | None = None
    max_tokens: int | None = None
    stop: tuple[str, ...] = ()  # stop sequences (OpenAI allows at most 4)


class ScoreRequest(BaseModel):
    """Log-likelihood of `continuation` after `context` (lm-evaluation-harness style), through the legacy
    `/completions` endpoint with `echo` and `logprobs`: served by llama.cpp, vLLM and our local model server."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    model: str
    context: str
    continuation: str = Field(min_length=1)


@dataclass(slots=True)
class CallResult:
    request_hash: str
    model: str
    status: str  # ok | invalid (answer not valid under the schema) | error | cost_cap | circuit_open
    text: str | None = None
    parsed: Any = None
    logprob: float | None = None  # ScoreRequest: summed log-probability of the continuation
    greedy: bool | None = None  # ScoreRequest: the continuation is the argmax token by token
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0  # paid by this call
    cost_source: str = "none"
    latency_ms: float = 0.0
    cache_hit: bool = False
    coalesced: bool = False
    retries: int = 0
    response: dict[str, Any] | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass
class GatewayTotals:
    calls: int = 0
    cache_hits: int = 0
    provider_calls: int = 0  # calls sent to a provider (cache misses that were not coalesced)
    coalesced: int = 0
    status: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float = 0.0  # paid in this run
    cost_saved_usd: float = 0.0  # what the cache hits cost when first paid
    stopped_by_cost_cap: bool = False
    latencies_ms: list[float] = field(default_factory=list, repr=False)
    first_sent_at: float | None = None  # perf_counter of the first request sent to a provider
    last_answer_at: float | None = None  # perf_counter of the last provider answer
    in_flight_at_crash: int = 0  # requests a crashed run sent and got no answer for (found at resume)
    repaid_in_flight: int = 0  # of those, sent again by this gateway (paid twice: their answers never arrived)

    @property
    def provider_seconds(self) -> float:
        """From the first request sent to the last answer: the span a caller's own work did not add to."""
        if self.first_sent_at is None or self.last_answer_at is None:
            return 0.0
        return self.last_answer_at - self.first_sent_at

    def as_dict(self) -> dict[str, int | float | bool]:
        lat = sorted(self.latencies_ms)

        def pct(q: float) -> float:
            return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else 0.0

        return {
            "llm_calls": self.calls,
            "llm_cache_hits": self.cache_hits,
            "llm_cache_misses": self.calls - self.cache_hits,
            "llm_provider_calls": self.provider_calls,
            "llm_coalesced": self.coalesced,
            "llm_ok": self.status["ok"],
            "llm_invalid": self.status["invalid"],
            "llm_errors": self.status["error"] + self.status["circuit_open"],
            "llm_cost_capped": self.status["cost_cap"],
            "llm_retries": self.retries,
            "llm_input_tokens": self.input_tokens,
            "llm_output_tokens": self.output_tokens,
            "llm_reasoning_tokens": self.reasoning_tokens,
            "llm_cost_usd": round(self.cost_usd, 6),
            "llm_cost_saved_usd": round(self.cost_saved_usd, 6),
            "llm_stopped_by_cost_cap": self.stopped_by_cost_cap,
            "llm_latency_p50_ms": round(pct(0.5), 1),
            "llm_latency_p95_ms": round(pct(0.95), 1),
            "llm_provider_seconds": round(self.provider_seconds, 3),
            "llm_in_flight_at_crash": self.in_flight_at_crash,
            "llm_repaid_in_flight": self.repaid_in_flight,
        }


class CostCapReached(Exception):
    pass


class _Transient(Exception):
    def __init__(self, message: str, retry_after: float | None = None, breaker: bool = True) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.breaker = breaker  # counts toward opening the circuit (429s do not)


@dataclass(slots=True)
class _Call:
    request: ChatRequest | ScoreRequest
    config: ModelConfig
    path: str
    body: bytes
    request_hash: str
    est_input_tokens: int
    max_output_tokens: int


def request_hash(provider: str, path: str, body: bytes, sample_index: int) -> str:
    """sha256 over (provider, endpoint, canonical body: model id, messages, parameters, seed) and the sample index."""
    h = hashlib.sha256(f"{provider}\n{path}\n{sample_index}\n".encode())
    h.update(body)
    return h.hexdigest()


def _dumps(obj: object) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


class MissingApiKey(ValueError):
    """A model's API-key variable is unset: an expected failure (one line), not a bug."""


class Gateway:
    def __init__(
        self,
        models: Sequence[ModelConfig],
        settings: GatewaySettings,
        db: Database,
        *,
        run_id: str,
        api_keys: Mapping[str, str] | None = None,
        journal_dir: Path | None = None,
        log_every_s: float = 10.0,
    ) -> None:
        """`api_keys` maps a model config's `api_key_env` to its value (the caller reads the environment)."""
        self.models = {m.name: m for m in models}
        self.settings = settings
        self.db = db
        self.run_id = run_id
        self.providers = {name: Provider(name, lim, settings) for name, lim in provider_limits(list(models)).items()}
        self.totals = GatewayTotals()
        self._headers: dict[str, dict[str, str]] = {}
        for m in models:
            headers = {"Content-Type": "application/json"}
            if m.api_key_env is not None:
                if not (key := (api_keys or {}).get(m.api_key_env)):
                    raise MissingApiKey(
                        f"model config {m.name!r}: environment variable {m.api_key_env} is not set "
                        "(export it with the provider's API key, or remove the model from the spec)"
                    )
                headers["Authorization"] = f"Bearer {key}"
            self._headers[m.name] = headers
        self._timeouts = {m.name: aiohttp.ClientTimeout(total=m.timeout_s) for m in models}
        digest = hashlib.sha256(db.url.encode()).hexdigest()[:12]  # one journal per database
        self._journal_dir = journal_dir or state_folder() / "llm_journal" / digest
        self._store: ResponseStore | None = None
        self._session: aiohttp.ClientSession | None = None
        self._flusher: asyncio.Task[None] | None = None
        self._flush_now = asyncio.Event()
        self._closing = False
        self._inflight: dict[str, asyncio.Future[CallResult]] = {}
        self._reserved = 0.0
        self.spent_before = 0.0  # paid by earlier gateways of the same run (e.g. other steps): counts toward the cap
        self._seq = 0
        self._rng = random.Random()
        self._log_every_s = log_every_s
        self.recovered_calls = 0
        self._unanswered: set[str] = set()  # in flight at a crash and not asked again yet

    # -- lifecycle ---------------------------------------------------------------------------------------------
    async def __aenter__(self) -> Gateway:
        self._store = ResponseStore(self.db, self._journal_dir)
        self.recovered_calls = await asyncio.to_thread(self._store.recover)
        self.spent_before = await asyncio.to_thread(self._store.run_cost, self.run_id)
        if self.recovered_calls:
            log.info("replayed %d calls from the journal of a crashed run", self.recovered_calls)
        self._unanswered = set(self._store.in_flight_at_crash)
        self.totals.in_flight_at_crash = len(self._unanswered)
        if self._unanswered:
            log.info("%d calls were in flight when a run crashed; they are paid again if asked", len(self._unanswered))
        connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=300, keepalive_timeout=60)
        self._session = aiohttp.ClientSession(connector=connector, skip_auto_headers=("User-Agent",))
        self._flusher = asyncio.create_task(self._flush_loop())
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._flusher is not None and self._session is not None and self._store is not None
        self._closing = True
        self._flush_now.set()
        await self._flusher
        await asyncio.to_thread(self._store.close)
        await self._session.close()

    async def _flush_loop(self) -> None:
        assert self._store is not None
        while not self._closing:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._flush_now.wait(), self.settings.cache_flush_s)
            self._flush_now.clear()
            if self._store.pending:
                self._store.take_batch()
                try:
                    await asyncio.to_thread(self._store.flush)
                except Exception:  # the batch stays journalled and queued; the next flush retries it
                    log.exception("writing LLM cache rows failed; will retry")

    # -- requests ----------------------------------------------------------------------------------------------
    def _prepare(self, req: ChatRequest | ScoreRequest, json_mode: bool) -> _Call:
        cfg = self.models[req.model]  # complete_many checked the names
        if isinstance(req, ScoreRequest):
            path = "/completions"
            prompt = req.context + req.continuation
            body = {
                "model": cfg.model,
                "prompt": prompt,
                "max_tokens": 1,
                "temperature": 0.0,
                "echo": True,
                "logprobs": 1,
            }
            max_out, sample_index = 1, 0
        else:
            path = "/chat/completions"
            params = cfg.request_params()
            if req.temperature is not None:
                params["temperature"] = req.temperature
            if req.max_tokens is not None:
                params["max_tokens"] = req.max_tokens
            body = {"model": cfg.model, "messages": req.messages, **params}
            if req.seed is not None:
                body["seed"] = req.seed
            if req.stop:
                body["stop"] = list(req.stop[:4])
            if json_mode and cfg.json_mode:
                body["response_format"] = {"type": "json_object"}
            max_out, sample_index = int(params["max_tokens"]), req.sample_index  # type: ignore[call-overload]
            if cfg.reasoning is not None and cfg.reasoning.max_tokens:
                max_out += cfg.reasoning.max_tokens
        raw = _dumps(body)
        # bytes bound tokens from above for byte-level BPE tokenizers, so the cost reservation is an upper bound
        return _Call(req, cfg, path, raw, request_hash(cfg.provider, path, raw, sample_index), len(raw), max_out)

    async def complete(self, request: ChatRequest | ScoreRequest, schema: type[BaseModel] | None = None) -> CallResult:
        return (await self.complete_many([request], schema))[0]

    async def complete_many(
        self, requests: Sequence[ChatRequest | ScoreRequest], schema: type[BaseModel] | None = None
    ) -> list[CallResult]:
        """Answer every request (in order). With `schema`, JSON mode is asked for where the config allows it (the
        prompt must then say "JSON", as OpenAI requires) and each answer is extracted and validated; one that fails
        has status 'invalid' and `parsed=None`, and the caller persists nothing from it."""
        assert self._store is not None, "use `async with Gateway(...)`"
        with frozen_heap():  # the calls' allocations should not make the collector walk the caller's heap
            return await self._complete_many(requests, schema)

    async def _complete_many(
        self, requests: Sequence[ChatRequest | ScoreRequest], schema: type[BaseModel] | None
    ) -> list[CallResult]:
        assert self._store is not None  # complete_many checked it
        unknown = sorted({r.model for r in requests} - self.models.keys())
        if unknown:  # before anything is sent
            raise KeyError(f"no model config named {', '.join(map(repr, unknown))} (known: {sorted(self.models)})")
        results: list[CallResult | None] = [None] * len(requests)
        progress = _Progress(len(requests), self._log_every_s)
        queues: dict[str, asyncio.Queue[tuple[int, _Call] | None]] = {}
        feeders: list[asyncio.Task[None]] = []

        async def feed(provider: Provider, queue: asyncio.Queue[tuple[int, _Call] | None]) -> None:
            # a bounded window of tasks per provider: slots stay busy while retries wait, memory stays flat
            window = asyncio.Semaphore(provider.max_concurrency * 4 + 16)

            async def one(i: int, call: _Call) -> None:
                try:
                    results[i] = await self._resolve(call, schema)
                finally:
                    window.release()
                    progress.step()

            tasks = []
            try:
                while (entry := await queue.get()) is not None:
                    await window.acquire()
                    tasks.append(asyncio.create_task(one(*entry)))
                await asyncio.gather(*tasks)
            except asyncio.CancelledError:
                for task in tasks:
                    task.cancel()
                raise

        # Requests are prepared and looked up in the cache a chunk at a time, the first chunk small, so the first
        # calls are on the wire within milliseconds while the rest are hashed and looked up behind them (preparing
        # and looking up 2,000 calls before sending any cost ~2% of the c=64 bench's wall time).
        start, size = 0, FIRST_CHUNK
        try:
            while start < len(requests):
                calls = [self._prepare(r, schema is not None) for r in requests[start : start + size]]
                cached = await asyncio.to_thread(self._store.lookup, list({c.request_hash for c in calls}))
                for i, call in enumerate(calls, start):
                    hit = cached.get(call.request_hash)
                    if hit is not None:
                        results[i] = self._from_cache(call, hit, schema)
                        progress.step()
                        continue
                    name = call.config.provider
                    if name not in queues:
                        queues[name] = asyncio.Queue()
                        feeders.append(asyncio.create_task(feed(self.providers[name], queues[name])))
                    queues[name].put_nowait((i, call))
                start, size = start + size, min(size * 2, MAX_CHUNK)
        except BaseException:  # e.g. a lookup failed: stop what is in flight (answers already received are journalled)
            for feeder in feeders:
                feeder.cancel()
            await asyncio.gather(*feeders, return_exceptions=True)
            raise
        for queue in queues.values():
            queue.put_nowait(None)  # the feeders send what was queued, then stop
        await asyncio.gather(*feeders)
        return results  # type: ignore[return-value]

    # -- one call ----------------------------------------------------------------------------------------------
    def _from_cache(self, call: _Call, hit: CachedResponse, schema: type[BaseModel] | None) -> CallResult:
        result = CallResult(
            call.request_hash,
            call.config.name,
            "ok",
            cache_hit=True,
            response=hit.response,
            input_tokens=hit.input_tokens,
            output_tokens=hit.output_tokens,
            reasoning_tokens=hit.reasoning_tokens,
        )
        self.totals.cost_saved_usd += hit.cost_usd
        _read_answer(result, call, schema)
        self._finish(call, result, time.time(), None)
        return result

    async def _resolve(self, call: _Call, schema: type[BaseModel] | None) -> CallResult:
        twin = self._inflight.get(call.request_hash)
        if twin is not None:
            first = await asyncio.shield(twin)
            result = CallResult(
                call.request_hash,
                call.config.name,
                first.status,
                coalesced=True,
                response=first.response,
                error=first.error,
                input_tokens=first.input_tokens,
                output_tokens=first.output_tokens,
                reasoning_tokens=first.reasoning_tokens,
            )
            if first.response is not None:
                _read_answer(result, call, schema)
            self._finish(call, result, time.time(), None)
            return result
        future: asyncio.Future[CallResult] = asyncio.get_running_loop().create_future()
        self._inflight[call.request_hash] = future
        try:
            result = await self._send(call, schema)
            future.set_result(result)
            return result
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved: coalesced waiters re-raise it, nobody else needs to
            raise
        finally:
            del self._inflight[call.request_hash]

    async def _send(self, call: _Call, schema: type[BaseModel] | None) -> CallResult:
        cfg, provider, settings = call.config, self.providers[call.config.provider], self.settings
        assert self._session is not None
        url = cfg.base_url.rstrip("/") + call.path  # type: ignore[union-attr]
        headers, timeout = self._headers[cfg.name], self._timeouts[cfg.name]
        est_cost = call.est_input_tokens * cfg.prices.input_per_m / 1e6 + call.max_output_tokens * (
            cfg.prices.max_price_out() / 1e6
        )
        started_wall, t0 = time.time(), time.perf_counter()
        if self.totals.first_sent_at is None:
            self.totals.first_sent_at = t0
        retries = 0
        while True:
            try:
                await provider.admit(call.est_input_tokens + call.max_output_tokens)
                async with provider.slots:
                    self._reserve(est_cost)  # checked at the last moment, with what is in flight
                    try:
                        provider.breaker.before_attempt()
                        if retries == 0:
                            self._mark_sent(call.request_hash)
                        response = await self._post(url, call.body, headers, timeout)
                    finally:
                        self._reserved -= est_cost
            except (CircuitOpen, CostCapReached) as e:
                status = "circuit_open" if isinstance(e, CircuitOpen) else "cost_cap"
                result = CallResult(call.request_hash, cfg.name, status, error=str(e), retries=retries)
                self._finish(call, result, started_wall, None)
                return result
            except _Transient as e:
                if e.breaker:
                    provider.breaker.failure()
                else:  # a rate limit answered: the provider is up
                    provider.breaker.success()
                retries += 1
                if retries > settings.max_retries:
                    result = CallResult(call.request_hash, cfg.name, "error", error=str(e), retries=retries - 1)
                    self._finish(call, result, started_wall, None)
                    return result
                await asyncio.sleep(retry_delay(retries, e.retry_after, settings, self._rng))
                continue
            except _Permanent as e:  # the provider is up and refused this request
                provider.breaker.success()
                result = CallResult(call.request_hash, cfg.name, "error", error=str(e), retries=retries)
                self._finish(call, result, started_wall, None)
                return result
            provider.breaker.success()
            break
        data, text = response
        usage = data.get("usage") or {}
        details = usage.get("completion_tokens_details") or {}
        result = CallResult(
            call.request_hash,
            cfg.name,
            "ok",
            response=data,
            retries=retries,
            latency_ms=(time.perf_counter() - t0) * 1000.0,
            input_tokens=int(usage.get("prompt_tokens") or 0),
            output_tokens=int(usage.get("completion_tokens") or 0),
            reasoning_tokens=int(details.get("reasoning_tokens") or 0),
        )
        if usage.get("cost") is not None:
            result.cost_usd, result.cost_source = float(usage["cost"]), "provider"
        else:
            result.cost_usd = cfg.prices.cost(result.input_tokens, result.output_tokens, result.reasoning_tokens)
            result.cost_source = "prices"
        if provider.tokens is not None:
            provider.tokens.refund(
                call.est_input_tokens + call.max_output_tokens - result.input_tokens - result.output_tokens
            )
        _read_answer(result, call, schema)
        self._finish(call, result, started_wall, text)
        return result

    async def _post(
        self, url: str, body: bytes, headers: dict[str, str], timeout: aiohttp.ClientTimeout
    ) -> tuple[dict[str, Any], str]:
        assert self._session is not None
        try:
            async with self._session.post(url, data=body, headers=headers, timeout=timeout) as resp:
                raw = await resp.read()
                status = resp.status
                retry_after = parse_retry_after(resp.headers.get("Retry-After"))
        except TimeoutError as e:
            raise _Transient("timeout") from e
        except aiohttp.ClientError as e:
            raise _Transient(f"{type(e).__name__}: {e}") from e
        if status == 200:
            try:
                text = without_nul(raw.decode())  # as the cache will hold it, so a rerun answers the same
                data = json.loads(text)
                if not isinstance(data, dict) or not data.get("choices"):
                    raise ValueError("no choices")
            except ValueError as e:
                raise _Transient(f"unreadable response body: {e}") from e
            return data, text
        message = f"HTTP {status}: {raw[:300].decode(errors='replace')}"
        if status == 429:
            raise _Transient(message, retry_after, breaker=False)
        if status >= 500 or status == 408:
            raise _Transient(message, retry_after)
        raise _Permanent(message)

    def _reserve(self, est_cost: float) -> None:
        cap = self.settings.cost_cap_usd
        spent = self.spent_before + self.totals.cost_usd
        if cap is not None and (self.totals.stopped_by_cost_cap or spent + self._reserved + est_cost > cap):
            self.totals.stopped_by_cost_cap = True
            raise CostCapReached(
                f"cost cap ${cap:g} of run {self.run_id!r} reached: spent ${spent:.4f}, in flight "
                f"${self._reserved:.4f}, this call up to ${est_cost:.4f}"
            )
        self._reserved += est_cost

    def _mark_sent(self, request_hash: str) -> None:
        assert self._store is not None
        self._store.mark_sent(request_hash)
        if request_hash in self._unanswered:
            self._unanswered.discard(request_hash)
            self.totals.repaid_in_flight += 1

    def _finish(self, call: _Call, result: CallResult, started_wall: float, response_text: str | None) -> None:
        """Count the call and journal its telemetry row (and its cache row when a provider answered)."""
        assert self._store is not None
        t = self.totals
        t.calls += 1
        t.status[result.status] += 1
        t.retries += result.retries
        if result.cache_hit:
            t.cache_hits += 1
        elif result.coalesced:
            t.coalesced += 1
        elif response_text is not None or result.retries or result.status == "error":
            t.provider_calls += 1
        if response_text is not None:
            t.input_tokens += result.input_tokens
            t.output_tokens += result.output_tokens
            t.reasoning_tokens += result.reasoning_tokens
            t.cost_usd += result.cost_usd
            t.latencies_ms.append(result.latency_ms)
            t.last_answer_at = time.perf_counter()
        cfg = call.config
        cache_row = None
        if response_text is not None:
            cache_row = [
                call.request_hash,
                cfg.name,
                cfg.provider,
                call.body.decode(),
                response_text,
                result.input_tokens,
                result.output_tokens,
                result.reasoning_tokens,
                result.cost_usd,
                result.cost_source,
                result.latency_ms,
            ]
        self._seq += 1
        self._store.record(
            cache_row,
            [
                f"{self._store.instance}-{self._seq}",
                self.run_id,
                call.request_hash,
                cfg.name,
                cfg.provider,
                started_wall,
                result.latency_ms,
                result.input_tokens,
                result.output_tokens,
                result.reasoning_tokens,
                result.cost_usd,
                result.cost_source,
                result.cache_hit,
                result.coalesced,
                result.retries,
                result.status,
                result.error,
            ],
        )
        if self._store.pending >= self.settings.cache_flush_rows:
            self._flush_now.set()


class _Permanent(Exception):
    pass


def _read_answer(result: CallResult, call: _Call, schema: type[BaseModel] | None) -> None:
    """Fill text / parsed / logprob from the response body; a schema failure makes the result 'invalid'."""
    assert result.response is not None
    choice = result.response["choices"][0]
    if isinstance(call.request, ScoreRequest):
        _read_logprobs(result, call.request, choice)
        return
    message = choice.get("message") or {}
    result.text = message.get("content") or ""
    if schema is not None:
        try:
            result.parsed, _tier = extract(result.text, schema)
        except ExtractionError as e:
            result.status, result.error = "invalid", f"no valid {schema.__name__} in the answer: {e}"


def _read_logprobs(result: CallResult, req: ScoreRequest, choice: dict[str, Any]) -> None:
    lp = choice.get("logprobs") or {}
    start, end = len(req.context), len(req.context) + len(req.continuation)
    total, greedy, seen = 0.0, True, False
    tops = lp.get("top_logprobs") or [None] * len(lp.get("tokens", []))
    for token, logprob, offset, top in zip(
        lp.get("tokens", []), lp.get("token_logprobs", []), lp.get("text_offset", []), tops, strict=False
    ):
        if offset < start or offset >= end:
            continue
        seen = True
        total += float(logprob)
        if top and max(top, key=top.get) != token:
            greedy = False
    if not seen:
        result.status, result.error = "invalid", "the response has no log-probabilities for the continuation"
        return
    result.logprob, result.greedy = total, greedy


class _Progress:
    def __init__(self, total: int, every_s: float) -> None:
        self.total, self.done, self.every_s = total, 0, every_s
        self.t0 = self.last = time.monotonic()

    def step(self) -> None:
        self.done += 1
        now = time.monotonic()
        if now - self.last >= self.every_s:
            self.last = now
            rate = self.done / (now - self.t0)
            eta = (self.total - self.done) / rate if rate else float("inf")
            log.info("LLM calls %d/%d (%.1f/s, ETA %.0f s)", self.done, self.total, rate, eta)
