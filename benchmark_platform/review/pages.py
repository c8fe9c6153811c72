"""What every handler of the review app shares: the site it serves, the templates, the session and CSRF checks, and the
small form readers. A handler reads its :class:`Context` from ``request.app.state.review``, so any one handler can be
mounted alone on a Starlette app (``web.build_app(context, [route])``) and tested without the others."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_address
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response
from starlette.templating import Jinja2Templates

from benchmark_platform.review import persist as repo
from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.review.models import Decision, Verdict, plural
from benchmark_platform.review.rubrics import FORMAT_NAMES, RubricSet, rubric_set
from benchmark_platform.review.security import MIN_PASSWORD_LENGTH, same
from benchmark_platform.store import Database

HERE = Path(__file__).parent
SESSION_COOKIE = "review_session"
LOGIN_CSRF_COOKIE = "review_login_csrf"
VERDICT_HELP = {
    Verdict.APPROVE.value: "approve: ready to release as it is",
    Verdict.REVISE.value: "revise: return it to the author with your report of every issue",
    Verdict.REJECT.value: "reject: unfixable (trivia, no consensus, unedited AI text)",
    Verdict.ESCALATE.value: "escalate: a borderline or cross-discipline case for the core committee",
}
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.globals.update(
    verdicts=[v.value for v in Verdict],
    verdict_help=VERDICT_HELP,
    decisions=[Decision.APPROVED.value, Decision.REVISE.value, Decision.REJECTED.value],
    format_names=FORMAT_NAMES,
    min_password_length=MIN_PASSWORD_LENGTH,
    plural=plural,
)


@dataclass(frozen=True)
class ReviewSite:
    """What the app serves: one spec's name, seed, disciplines and review section."""

    spec: str
    seed: int = 0
    disciplines: tuple[str, ...] = ()
    config: ReviewConfig = field(default_factory=ReviewConfig)

    @property
    def rubrics(self) -> RubricSet:
        return rubric_set(self.config.policy.rubric_set)


@dataclass(frozen=True)
class Context:
    """One app's database, site and cookie policy (``secure_cookies``: HTTPS-only cookies, behind TLS)."""

    db: Database
    site: ReviewSite
    secure_cookies: bool = False


class Forbidden(Exception):
    """Not logged in with the needed role, or a POST without this session's CSRF token: 403."""


class BadRequest(Exception):
    """Input no page can take (a NUL character: PostgreSQL text cannot hold one): 400, not a server error."""


def context(request: Request) -> Context:
    ctx: Context = request.app.state.review
    return ctx


def page(request: Request, name: str, status: int = 200, **values: Any) -> Response:
    config = context(request).site.config
    values.setdefault("currency", config.currency)
    values.setdefault("rubric_set", context(request).site.rubrics)
    return templates.TemplateResponse(request, name, values, status_code=status)


def error(request: Request, status: int, message: str) -> Response:
    return page(request, "error.html", status, message=message, me=None)


async def current(request: Request) -> repo.Session | None:
    return await run_in_threadpool(repo.session, context(request).db, request.cookies.get(SESSION_COOKIE))


async def require_admin(request: Request) -> repo.Session:
    me = await current(request)
    if me is None or me.role != "admin":
        raise Forbidden
    return me


async def read_form(request: Request) -> FormData:
    form = await request.form()
    for key, value in form.multi_items():
        if "\x00" in key or (isinstance(value, str) and "\x00" in value):
            raise BadRequest(f"The field {key.replace(chr(0), '')!r} holds a NUL character; remove it and send again.")
    return form


def same_origin(request: Request) -> bool:
    origin = request.headers.get("origin") or request.headers.get("referer")
    return origin is None or urlsplit(origin).netloc == request.headers.get("host")


async def posted(request: Request, me: repo.Session) -> FormData:
    """The POSTed form, once it carries this session's CSRF token and comes from this site (else 403)."""
    form = await read_form(request)
    if not (same_origin(request) and same(str(form.get("csrf_token", "")), me.csrf_token)):
        raise Forbidden
    return form


def _trusted(address: str, proxies: Sequence[IPv4Network | IPv6Network]) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


def client_address(request: Request) -> str:
    """The client's address for the login throttle: X-Forwarded-For is believed only from a configured proxy
    (`review.trusted_proxies`), else anyone could rotate addresses in it and never be throttled."""
    proxies = context(request).site.config.trusted_proxies
    peer = request.client.host if request.client else "unknown"
    if not _trusted(peer, proxies):
        return peer
    hops = [h.strip() for h in ",".join(request.headers.getlist("x-forwarded-for")).split(",") if h.strip()]
    for hop in reversed(hops):  # the nearest hop a trusted proxy did not add itself
        if not _trusted(hop, proxies):
            return hop
    return peer


def money(amount: Any, currency: str) -> str:
    return "" if amount is None else f"{float(amount):,.2f} {currency}"


def scores_from_form(form: FormData | dict[str, Any], rubrics: RubricSet, item_format: str) -> dict[str, object]:
    """The posted score of each applicable rubric: an int when the field holds one, else the raw text (the rubric
    set's check then says in plain words what is wrong); an empty field is left out, so it reads as missing."""
    out: dict[str, object] = {}
    for rubric in rubrics.applicable(item_format):
        raw = str(form.get(rubric.key, "")).strip()
        if raw:
            out[rubric.key] = int(raw) if raw.lstrip("-").isdigit() else raw
    return out


def seconds_posted(form: FormData) -> float:
    """The page's own counter of visible seconds; a tampered value only loses the reviewer's time credit."""
    try:
        seconds = max(0.0, float(str(form.get("seconds_on_page", "0")) or 0))
    except ValueError:
        return 0.0
    return seconds if math.isfinite(seconds) else 0.0
