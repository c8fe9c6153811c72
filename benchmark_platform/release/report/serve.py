"""`release view`: the release folder served read-only on loopback (stdlib http.server), for a browser tab instead of a
file:// URL. The report needs no server; this is a convenience."""

from __future__ import annotations

import functools
import http.server
from collections.abc import Callable
from pathlib import Path

INDEX = "report/index.html"


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass  # one line per request would bury the URL


def server(directory: Path, port: int = 0) -> http.server.ThreadingHTTPServer:
    """A server of `directory` on 127.0.0.1 (port 0: a free port). Raises FileNotFoundError without a report."""
    if not (directory / INDEX).is_file():
        raise FileNotFoundError(
            f"{directory}: no {INDEX} here (not a release folder, or a release built before the report existed: "
            "rebuild it with `benchmark-platform run`)"
        )
    handler = functools.partial(_Quiet, directory=str(directory))
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)


def url_of(httpd: http.server.ThreadingHTTPServer) -> str:
    host, port = httpd.server_address[:2]
    return f"http://{host!s}:{port}/{INDEX}"


def view(directory: Path, port: int = 0, announce: Callable[[str], None] = print) -> None:
    """Serve until interrupted (Ctrl-C)."""
    with server(directory, port) as httpd:
        announce(url_of(httpd))
        try:
            httpd.serve_forever()
        except KeyboardInterrupt:
            pass
