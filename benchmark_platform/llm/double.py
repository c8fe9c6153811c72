"""A scripted OpenAI-compatible model server on loopback: the test double and the benchmark's provider.

It speaks real HTTP (aiohttp), so tests exercise the gateway's whole client stack. Replies are fixed per prompt
(`Rule.match` is a substring of the last user message) and failures are injected either deterministically per
request (`Rule.faults`, consumed one per attempt) or at random rates (`Script.rate_429`, `Script.rate_500`).

Faults: "429" (with Retry-After), "500", "timeout" (answers after `timeout_sleep_s`), "malformed" (200 with a body
that is not JSON), "truncated" (headers promise more bytes than are sent, then the connection closes).

Run standalone (the benchmark does, on its own core): `python -m benchmark_platform.llm.double SCRIPT.json PORT_FILE`.
"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import json
import math
import os
import random
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

from aiohttp import web
from pydantic import BaseModel, ConfigDict, Field

from benchmark_platform.llm.loopback import LoopbackApp, start_site

Fault = Literal["429", "500", "timeout", "malformed", "truncated"]


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid")
    match: str
    reply: str
    faults: list[Fault] = Field(default_factory=list)  # one per attempt, then the reply
    cost: float | None = None  # reported as usage.cost, as OpenRouter does


class Latency(BaseModel):
    model_config = ConfigDict(extra="forbid")
    kind: Literal["fixed", "exponential", "lognormal"] = "fixed"
    mean_s: float = 0.0
    sigma: float = 0.5  # lognormal shape

    def sample(self, rng: random.Random) -> float:
        if self.mean_s <= 0:
            return 0.0
        if self.kind == "fixed":
            return self.mean_s
        if self.kind == "exponential":
            return rng.expovariate(1.0 / self.mean_s)
        mu = math.log(self.mean_s) - self.sigma**2 / 2  # so that the mean is mean_s
        return rng.lognormvariate(mu, self.sigma)


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid")
    rules: list[Rule] = Field(default_factory=list)
    default_reply: str = "A"
    latency: Latency = Field(default_factory=Latency)
    rate_429: float = 0.0
    rate_500: float = 0.0
    retry_after_s: float = 1.0
    timeout_sleep_s: float = 30.0
    seed: int = 0
    log_path: str | None = None  # one line "<request key> <monotonic time>" per answered request


def request_key(body: bytes) -> str:
    """Identity of a request as the provider sees it (its exact body)."""
    return hashlib.sha256(body).hexdigest()[:32]


class ScriptedServer:
    """The aiohttp application plus the counters tests read (`calls`, `answered`, `faults_served`)."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.rng = random.Random(script.seed)
        self.calls = 0
        self.last_body: dict[str, Any] | None = (
            None  # the latest request as sent, for tests of what reaches the provider
        )
        self.answered: Counter[str] = Counter()  # request key -> successful answers
        self.faults_served: Counter[str] = Counter()
        self._attempts: Counter[str] = Counter()
        self._log = open(script.log_path, "a", buffering=1) if script.log_path else None

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._chat)
        return app

    def _rule(self, prompt: str) -> Rule | None:
        return next((r for r in self.script.rules if r.match in prompt), None)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        # the latency is counted from the request's arrival, as a provider's is: this server's own parsing and
        # bookkeeping happen inside it rather than on top of it
        arrived = asyncio.get_running_loop().time()
        self.calls += 1
        raw = await request.read()
        body = json.loads(raw)
        self.last_body = body
        key = request_key(raw)
        prompt = next((m["content"] for m in reversed(body["messages"]) if m["role"] == "user"), "")
        rule = self._rule(prompt)
        attempt = self._attempts[key]
        self._attempts[key] += 1
        fault: str | None = None
        if rule is not None and attempt < len(rule.faults):
            fault = rule.faults[attempt]
        elif self.script.rate_429 and self.rng.random() < self.script.rate_429:
            fault = "429"
        elif self.script.rate_500 and self.rng.random() < self.script.rate_500:
            fault = "500"
        if fault is not None:
            self.faults_served[fault] += 1
        if fault == "429":  # a rate limiter answers at once
            return web.json_response(
                {"error": {"message": "rate limited", "type": "rate_limit"}},
                status=429,
                headers={"Retry-After": f"{self.script.retry_after_s:g}"},
            )
        delay = self.script.timeout_sleep_s if fault == "timeout" else self.script.latency.sample(self.rng)
        reply = rule.reply if rule is not None else self.script.default_reply
        usage: dict[str, object] = {
            "prompt_tokens": sum(len(m["content"].split()) + 4 for m in body["messages"]),
            "completion_tokens": max(1, len(reply.split())),
        }
        usage["total_tokens"] = int(usage["prompt_tokens"]) + int(usage["completion_tokens"])  # type: ignore[call-overload]
        if rule is not None and rule.cost is not None:
            usage["cost"] = rule.cost
        payload = json.dumps(
            {
                "id": "chatcmpl-" + key[:12],
                "object": "chat.completion",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "message": {"role": "assistant", "content": reply}, "finish_reason": "stop"}],
                "usage": usage,
            }
        ).encode()
        # the answer is ready before the wait, so the latency a client sees is the scripted one, not that plus this
        # server's JSON work on a core it shares with every other answer due at the same moment
        await asyncio.sleep(max(0.0, arrived + delay - asyncio.get_running_loop().time()))
        if fault == "500":
            return web.json_response({"error": {"message": "upstream failed", "type": "server_error"}}, status=500)
        if fault == "malformed":
            return web.Response(body=b'{"id": "x", "choices": [', content_type="application/json")
        if fault == "truncated":
            response = web.StreamResponse(headers={"Content-Type": "application/json"})
            response.content_length = len(payload)
            await response.prepare(request)
            await response.write(payload[: len(payload) // 2])
            assert request.transport is not None
            request.transport.close()
            return response
        self.answered[key] += 1
        if self._log is not None:
            self._log.write(f"{key} {time.monotonic():.6f}\n")
        return web.Response(body=payload, content_type="application/json")


class ServerThread(LoopbackApp):
    """Runs a ScriptedServer on 127.0.0.1 in a daemon thread (tests): `with ServerThread(script) as s: s.base_url`."""

    def __init__(self, script: Script) -> None:
        self.server = ScriptedServer(script)
        super().__init__(self.server.app())

    def __enter__(self) -> ServerThread:
        super().__enter__()
        return self


@contextmanager
def scripted_servers() -> Iterator[Callable[[Script], ServerThread]]:
    """A `start(script) -> ServerThread` factory whose servers are all stopped on exit (test fixtures)."""
    started: list[ServerThread] = []

    def start(script: Script) -> ServerThread:
        server = ServerThread(script).__enter__()
        started.append(server)
        return server

    try:
        yield start
    finally:
        for server in started:
            server.__exit__(None, None, None)


async def _serve_forever(script: Script, port_file: Path) -> None:
    runner = web.AppRunner(ScriptedServer(script).app(), access_log=None)
    port = await start_site(runner, 0)
    # a full collection walks every object the imports left and holds up every answer due meanwhile (the bench's
    # client measured 37-65 ms per full pass before it froze its own heap): the collector tracks what requests allocate
    gc.freeze()
    tmp = port_file.with_suffix(".tmp")
    tmp.write_text(str(port))
    os.replace(tmp, port_file)
    await asyncio.Event().wait()


def main() -> None:
    script = Script.model_validate_json(Path(sys.argv[1]).read_text())
    import uvloop

    uvloop.run(_serve_forever(script, Path(sys.argv[2])))


if __name__ == "__main__":
    main()
