"""The review web app: reviewer login, assigned items, the rubric form with time on page, and the principal's views.

This module wires the handlers of :mod:`benchmark_platform.review.handlers` (one module per screen) into one app; what
they share is in :mod:`benchmark_platform.review.pages`.

Security: scrypt password hashes; login backoff per account and per client address (own code in the login route,
state in PostgreSQL so it holds across restarts and workers); server-side sessions (only a token hash stored) that
expire; a CSRF token on every form (session-bound once logged in, double-submit cookie on the login form) plus a
same-origin check on every POST; roles reviewer/admin; double-blindness enforced by the queries of
:mod:`benchmark_platform.review.persist`: a reviewer reaches an item only through the random handle of their own
assignment and never sees the other reviewer.
"""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import unquote_to_bytes

import uvicorn
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.staticfiles import StaticFiles

from benchmark_platform.review.handlers import accounts, admin, items, login, reviewer
from benchmark_platform.review.pages import (
    HERE,
    SESSION_COOKIE,
    BadRequest,
    Context,
    Forbidden,
    ReviewSite,
    current,
    error,
    page,
)
from benchmark_platform.store import Database

__all__ = ["SESSION_COOKIE", "ReviewSite", "build_app", "create_app", "server_config"]

ROUTES: list[BaseRoute] = [
    Route("/login", login.login_page, methods=["GET"]),
    Route("/login", login.login_submit, methods=["POST"]),
    Route("/logout", login.logout, methods=["POST"]),
    Route("/", reviewer.home, methods=["GET"]),
    Route("/review/{blind_id}", reviewer.review, methods=["GET", "POST"]),
    Route("/admin", admin.admin, methods=["GET", "POST"]),
    Route("/admin/reviewers", accounts.admin_reviewers, methods=["GET", "POST"]),
    Route("/admin/reviewers/{reviewer_id}", accounts.admin_reviewer, methods=["GET", "POST"]),
    Route("/admin/item/{item_id}/{round:int}", items.admin_item, methods=["GET", "POST"]),
    Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
]


class SecurityHeaders(BaseHTTPMiddleware):
    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        response = await call_next(request)
        response.headers.update(
            {
                "Content-Security-Policy": "default-src 'self'; frame-ancestors 'none'; form-action 'self'",
                "X-Frame-Options": "DENY",
                "X-Content-Type-Options": "nosniff",
                "Referrer-Policy": "same-origin",  # "no-referrer" would make browsers send Origin: null on our own POSTs
                "Cache-Control": "no-store",
            }
        )
        return response


class RefuseNul(BaseHTTPMiddleware):
    """A NUL in the path or query string is refused before any route reads it."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        query = unquote_to_bytes(request.scope.get("query_string", b"").decode("latin-1"))
        if "\x00" in request.scope.get("path", "") or b"\x00" in query:
            return PlainTextResponse("Bad request: a NUL character in the address.", status_code=400)
        return await call_next(request)


async def forbidden(request: Request, _: Exception) -> Response:
    return error(request, 403, "Forbidden.")


async def bad_request(request: Request, exc: Exception) -> Response:
    return error(request, 400, str(exc))


async def not_found(request: Request, _: Exception) -> Response:
    """An unknown address gets the site's own page, its navigation included, not a bare "Not Found"."""
    return page(request, "error.html", 404, message="There is no page at this address.", me=await current(request))


def build_app(context: Context, routes: Sequence[BaseRoute]) -> Starlette:
    """An app serving ``routes`` over ``context``, with the site's middleware and error pages: every route for
    :func:`create_app`, or a single handler for a test of that handler alone."""
    app = Starlette(
        routes=list(routes),
        middleware=[Middleware(SecurityHeaders), Middleware(RefuseNul)],
        exception_handlers={Forbidden: forbidden, BadRequest: bad_request, 404: not_found},
    )
    app.state.review = context
    return app


def create_app(db: Database, site: ReviewSite | None = None, secure_cookies: bool = False) -> Starlette:
    """The app over one database; ``secure_cookies`` marks cookies HTTPS-only (set it behind TLS)."""
    return build_app(Context(db, site or ReviewSite(spec=""), secure_cookies), ROUTES)


def server_config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    """How `review serve` serves the app. The app reads X-Forwarded-For itself, from `review.trusted_proxies` only:
    uvicorn's own proxy handling would believe it from 127.0.0.1, i.e. from any local client."""
    return uvicorn.Config(app, host=host, port=port, log_level="info", proxy_headers=False)
