"""A loopback HTTP server that serves scripted responses (real bodies, injected faults) for the ingest tests."""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before answering (timeouts)
    truncate_to: int | None = None  # announce the full length, send only this many bytes, close


class Loopback:
    def __init__(self) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.requests: dict[str, list[dict[str, str]]] = defaultdict(list)
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, *replies: Reply) -> str:
        """Serve `replies` in order to successive requests of `path` (the last one repeats)."""
        self.routes[path] = list(replies)
        return self.url(path)

    def hits(self, path: str) -> int:
        return len(self.requests[path])

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        loopback = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                loopback.requests[self.path].append({k.lower(): v for k, v in self.headers.items()})
                replies = loopback.routes.get(self.path) or loopback.routes.get(self.path.split("?")[0])
                if replies is None:
                    reply = Reply(404, b"not found")
                else:
                    reply = replies.pop(0) if len(replies) > 1 else replies[0]
                time.sleep(reply.delay_s)
                self.send_response(reply.status)
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                body = reply.body if reply.truncate_to is None else reply.body[: reply.truncate_to]
                try:
                    self.wfile.write(body)
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                if reply.truncate_to is not None:
                    self.close_connection = True

        return Handler

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
