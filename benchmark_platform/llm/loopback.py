"""An aiohttp application served on 127.0.0.1 from a daemon thread: the scripted double and the local model."""

from __future__ import annotations

import asyncio
import threading

from aiohttp import web


class LoopbackApp:
    """`with LoopbackApp(app) as server: server.base_url` (an OpenAI-style base URL, ending in /v1)."""

    def __init__(self, app: web.Application) -> None:
        self.base_url = ""
        self._loop = asyncio.new_event_loop()
        self._runner = web.AppRunner(app, access_log=None)
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def __enter__(self) -> LoopbackApp:
        self._thread.start()
        port = asyncio.run_coroutine_threadsafe(start_site(self._runner, 0), self._loop).result()
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()


async def start_site(runner: web.AppRunner, port: int) -> int:
    """Start `runner` on 127.0.0.1:`port` (0 = any free port); returns the port."""
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", port, backlog=1024)
    await site.start()
    return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]
