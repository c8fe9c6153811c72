"""The review web app: reviewer login, assigned items, the rubric form with time on page, and the principal's views.

Security: scrypt password hashes; login backoff per account and per client address (own code in the login route,
state in PostgreSQL so it holds across restarts and workers); server-side sessions (only a token hash stored) that
expire; a CSRF token on every form (session-bound once logged in, double-submit cookie on the login form) plus a
same-origin check on every POST; roles reviewer/admin; double-blindness enforced by the queries of
:mod:`benchmark_platform.review.persist`: a reviewer reaches an item only through the random handle of their own
assignment and never sees the other reviewer.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from ipaddress import IPv4Network, IPv6Network, ip_address
from pathlib import Path
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

import uvicorn
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from benchmark_platform.review import persist as repo
from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.review.metrics import agreement
from benchmark_platform.review.models import Decision, Reviewer, Verdict, check_disciplines, name_set, plural
from benchmark_platform.review.rubrics import FORMAT_NAMES, RubricSet, rubric_set
from benchmark_platform.review.security import MIN_PASSWORD_LENGTH, new_token, same
from benchmark_platform.review.workflow import settlement_text
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


class BadRequest(Exception):
    """Input no page can take (a NUL character: PostgreSQL text cannot hold one): 400, not a server error."""


class RefuseNul(BaseHTTPMiddleware):
    """A NUL in the path or query string is refused before any route reads it."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        query = unquote_to_bytes(request.scope.get("query_string", b"").decode("latin-1"))
        if "\x00" in request.scope.get("path", "") or b"\x00" in query:
            return PlainTextResponse("Bad request: a NUL character in the address.", status_code=400)
        return await call_next(request)


async def read_form(request: Request) -> FormData:
    form = await request.form()
    for key, value in form.multi_items():
        if "\x00" in key or (isinstance(value, str) and "\x00" in value):
            raise BadRequest(f"The field {key.replace(chr(0), '')!r} holds a NUL character; remove it and send again.")
    return form


def _trusted(address: str, proxies: Sequence[IPv4Network | IPv6Network]) -> bool:
    try:
        ip = ip_address(address)
    except ValueError:
        return False
    return any(ip in network for network in proxies)


class Forbidden(Exception):
    pass


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


def create_app(db: Database, site: ReviewSite | None = None, secure_cookies: bool = False) -> Starlette:
    """The app over one database; ``secure_cookies`` marks cookies HTTPS-only (set it behind TLS)."""
    site = site or ReviewSite(spec="")
    config = site.config
    session_hours = config.session_hours

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        context.setdefault("currency", config.currency)
        context.setdefault("rubric_set", site.rubrics)
        return templates.TemplateResponse(request, name, context, status_code=status)

    def error(request: Request, status: int, message: str) -> Response:
        return page(request, "error.html", status, message=message, me=None)

    async def current(request: Request) -> repo.Session | None:
        return await run_in_threadpool(repo.session, db, request.cookies.get(SESSION_COOKIE))

    def same_origin(request: Request) -> bool:
        origin = request.headers.get("origin") or request.headers.get("referer")
        return origin is None or urlsplit(origin).netloc == request.headers.get("host")

    def client_address(request: Request) -> str:
        """The client's address for the login throttle: X-Forwarded-For is believed only from a configured proxy
        (`review.trusted_proxies`), else anyone could rotate addresses in it and never be throttled."""
        peer = request.client.host if request.client else "unknown"
        if not _trusted(peer, config.trusted_proxies):
            return peer
        hops = [h.strip() for h in ",".join(request.headers.getlist("x-forwarded-for")).split(",") if h.strip()]
        for hop in reversed(hops):  # the nearest hop a trusted proxy did not add itself
            if not _trusted(hop, config.trusted_proxies):
                return hop
        return peer

    async def posted(request: Request, me: repo.Session) -> FormData:
        form = await read_form(request)
        if not (same_origin(request) and same(str(form.get("csrf_token", "")), me.csrf_token)):
            raise Forbidden
        return form

    async def login_page(request: Request) -> Response:
        if await current(request):
            return RedirectResponse("/", 303)
        return _login_form(request, 200, "")

    def _login_form(request: Request, status: int, message: str, retry_after: float = 0.0) -> Response:
        token = new_token()
        response = page(request, "login.html", status, csrf_token=token, message=message, me=None)
        response.set_cookie(
            LOGIN_CSRF_COOKIE, token, max_age=3600, httponly=True, samesite="strict", secure=secure_cookies
        )
        if retry_after > 0:
            response.headers["Retry-After"] = str(math.ceil(retry_after))
        return response

    async def login_submit(request: Request) -> Response:
        form = await read_form(request)
        if not (same_origin(request) and same(str(form.get("csrf_token", "")), request.cookies.get(LOGIN_CSRF_COOKIE))):
            return error(request, 403, "The form expired or did not come from this site; reload the login page.")
        result = await run_in_threadpool(
            repo.login,
            db,
            str(form.get("reviewer_id", "")),
            str(form.get("password", "")),
            session_hours,
            client_address(request),
            config.login_throttle,
        )
        if result.outcome is repo.LoginOutcome.THROTTLED:
            wait = math.ceil(result.retry_after)
            return _login_form(
                request,
                429,
                f"Too many failed logins for this name or from this address. Try again in {plural(wait, 'second')}.",
                result.retry_after,
            )
        if result.outcome is repo.LoginOutcome.WRONG or result.session is None:
            return _login_form(request, 401, "Unknown name or wrong password.", result.retry_after)
        response = RedirectResponse("/admin" if result.session.role == "admin" else "/", 303)
        response.set_cookie(
            SESSION_COOKIE,
            result.token,
            max_age=int(session_hours * 3600),
            httponly=True,
            samesite="strict",
            secure=secure_cookies,
        )
        response.delete_cookie(LOGIN_CSRF_COOKIE)
        return response

    async def logout(request: Request) -> Response:
        me = await current(request)
        if me:
            await posted(request, me)
            await run_in_threadpool(repo.logout, db, request.cookies[SESSION_COOKIE])
        response = RedirectResponse("/login", 303)
        response.delete_cookie(SESSION_COOKIE)
        return response

    def _my_situation(reviewer_id: str) -> dict[str, Any]:
        """How many items wait in the caller's disciplines and, if no new work comes, why (nothing about others)."""
        mine = next(
            (
                r
                for r in repo.reviewer_overview(db, site.spec, config.policy)
                if r["reviewer"].reviewer_id == reviewer_id
            ),
            None,
        )
        if mine is None:
            return {"waiting": 0, "why": "not eligible: this account has no reviewer record"}
        waiting = repo.waiting_items(db, site.spec)
        return {
            "waiting": sum(waiting.get(d, 0) for d in mine["reviewer"].disciplines),
            "why": mine["why_no_work"],
            "open": mine["open"],
            "cap": config.policy.wip_cap,
        }

    async def home(request: Request) -> Response:
        me = await current(request)
        if me is None:
            return RedirectResponse("/login", 303)
        if me.role == "admin":
            return RedirectResponse("/admin", 303)
        queue = await run_in_threadpool(repo.reviewer_queue, db, me.reviewer_id)
        situation = await run_in_threadpool(_my_situation, me.reviewer_id)
        saved = request.query_params.get("saved") == "1"
        return page(request, "queue.html", me=me, queue=queue, situation=situation, saved=saved)

    async def review(request: Request) -> Response:
        me = await current(request)
        if me is None:
            return RedirectResponse("/login", 303)
        blind_id = request.path_params["blind_id"]
        if me.role != "reviewer":
            return error(request, 403, "Only reviewers rate items.")
        form = await posted(request, me) if request.method == "POST" else None
        item = await run_in_threadpool(repo.open_assignment, db, blind_id, me.reviewer_id)
        if item is None:
            return error(request, 404, "No such assignment.")
        if form is None:
            return page(request, "review.html", me=me, item=item, message="", values={})
        try:
            verdict_text = str(form.get("verdict", ""))
            scores = scores_from_form(form, site.rubrics, item["format"])
            # everything missing in one message, so one resubmit is enough
            missing = [r.title for r in site.rubrics.applicable(item["format"]) if r.key not in scores]
            problems = [f"score {', '.join(missing)}"] if missing else []
            if verdict_text not in VERDICT_HELP:
                problems.append("choose a verdict: approve, revise, reject or escalate")
            if problems:
                raise ValueError("please " + " and ".join(problems))
            try:
                seconds = max(0.0, float(str(form.get("seconds_on_page", "0")) or 0))
            except ValueError:
                seconds = 0.0  # the page's own counter; a tampered value only loses the reviewer's time credit
            outcome = await run_in_threadpool(
                repo.submit_rating,
                db,
                blind_id,
                me.reviewer_id,
                scores,
                Verdict(verdict_text),
                str(form.get("comment", ""))[:20000],
                seconds if math.isfinite(seconds) else 0.0,
                site.rubrics.name,
            )
        except ValueError as exc:
            message = str(exc)
            return page(
                request,
                "review.html",
                400,
                me=me,
                item=item,
                message=f"Not saved: {message[0].upper()}{message[1:]}.",
                values=dict(form),
            )
        if outcome is repo.Submit.NOT_FOUND:
            return error(request, 404, "No such assignment.")
        if outcome is repo.Submit.ALREADY_RATED:
            return error(request, 409, "You have already rated this item; ratings are final.")
        return RedirectResponse("/?saved=1", 303)

    async def admin(request: Request) -> Response:
        me = await require_admin(request)
        message = ""
        if request.method == "POST":
            form = await posted(request, me)
            discipline = str(form.get("discipline", ""))
            if discipline not in site.disciplines:
                message = f"Not settled: {discipline!r} is not a discipline of {site.spec}."
            else:
                outcomes = await run_in_threadpool(
                    repo.settle_partition, db, site.spec, discipline, config.policy_for(discipline), site.seed
                )
                message = f"Settled {discipline}: {settlement_text(outcomes)}. The ledger below is up to date."
        pairs = await run_in_threadpool(repo.rating_pairs, db)
        return page(
            request,
            "admin.html",
            me=me,
            message=message,
            payouts=await run_in_threadpool(repo.payouts, db),
            agreement=agreement(pairs),
            pairs=pairs,
            disciplines=site.disciplines,
            unvalidated=await run_in_threadpool(repo.unvalidated_counts, db, site.spec, site.rubrics.name),
            money=lambda amount: money(amount, config.currency),
        )

    async def admin_reviewers(request: Request) -> Response:
        me = await require_admin(request)
        message, values = "", {}
        if request.method == "POST":
            form = await posted(request, me)
            try:
                message = await run_in_threadpool(_create_account, db, form, me.reviewer_id, site)
            except ValueError as exc:
                message = f"Not saved: {exc}"
                values = {k: str(v) for k, v in form.items() if k not in ("password", "csrf_token")}
        overview = await run_in_threadpool(repo.reviewer_overview, db, site.spec, config.policy)
        return page(
            request,
            "admin_reviewers.html",
            me=me,
            message=message,
            values=values,
            overview=overview,
            admins=[a for a in await run_in_threadpool(repo.accounts, db) if a["role"] == "admin"],
            waiting=await run_in_threadpool(repo.waiting_items, db, site.spec),
            disciplines=site.disciplines,
            wip_cap=config.policy.wip_cap,
        )

    async def admin_reviewer(request: Request) -> Response:
        me = await require_admin(request)
        reviewer_id = request.path_params["reviewer_id"]
        message = ""
        if request.method == "POST":
            form = await posted(request, me)
            try:
                change = _change_from_form(form, site)
                await run_in_threadpool(repo.edit_reviewer, db, reviewer_id, change, me.reviewer_id)
                message = "Saved."
            except ValueError as exc:
                message = f"Not saved: {exc}"
        reviewer = next(
            (r for r in await run_in_threadpool(repo.load_reviewers, db) if r.reviewer_id == reviewer_id), None
        )
        if reviewer is None:
            return error(request, 404, "No such reviewer.")
        results = (await run_in_threadpool(repo.exams, db)).get(reviewer_id, {})
        known = sorted(set(site.disciplines) | reviewer.disciplines | set(results))
        return page(
            request, "admin_reviewer.html", me=me, reviewer=reviewer, exams=results, known=known, message=message
        )

    async def admin_item(request: Request) -> Response:
        me = await require_admin(request)
        item_id, round_ = request.path_params["item_id"], request.path_params["round"]
        message = ""
        detail = await run_in_threadpool(repo.item_detail, db, item_id, round_)
        if detail is None:
            return error(request, 404, "No such item.")
        if request.method == "POST":
            form = await posted(request, me)
            try:
                message = await run_in_threadpool(
                    _admin_action, db, item_id, round_, form, me.reviewer_id, site.rubrics, detail["format"]
                )
            except ValueError as exc:
                message = f"Not saved: {exc}"
            detail = await run_in_threadpool(repo.item_detail, db, item_id, round_)
        return page(request, "admin_item.html", me=me, item=detail, message=message)

    async def require_admin(request: Request) -> repo.Session:
        me = await current(request)
        if me is None or me.role != "admin":
            raise Forbidden
        return me

    async def forbidden(request: Request, _: Exception) -> Response:
        return error(request, 403, "Forbidden.")

    async def bad_request(request: Request, exc: Exception) -> Response:
        return error(request, 400, str(exc))

    async def not_found(request: Request, _: Exception) -> Response:
        """An unknown address gets the site's own page, its navigation included, not a bare "Not Found"."""
        me = await current(request)
        return page(request, "error.html", 404, message="There is no page at this address.", me=me)

    return Starlette(
        routes=[
            Route("/login", login_page, methods=["GET"]),
            Route("/login", login_submit, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/", home, methods=["GET"]),
            Route("/review/{blind_id}", review, methods=["GET", "POST"]),
            Route("/admin", admin, methods=["GET", "POST"]),
            Route("/admin/reviewers", admin_reviewers, methods=["GET", "POST"]),
            Route("/admin/reviewers/{reviewer_id}", admin_reviewer, methods=["GET", "POST"]),
            Route("/admin/item/{item_id}/{round:int}", admin_item, methods=["GET", "POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[Middleware(SecurityHeaders), Middleware(RefuseNul)],
        exception_handlers={Forbidden: forbidden, BadRequest: bad_request, 404: not_found},
    )


def _create_account(db: Database, form: FormData, admin_id: str, site: ReviewSite) -> str:
    name = str(form.get("reviewer_id", "")).strip()
    if not name:
        raise ValueError("the new account needs a name")
    role = str(form.get("role", "reviewer"))
    disciplines = name_set(str(form.get("disciplines", "")))
    check_disciplines(disciplines, site.disciplines, site.spec)
    repo.add_reviewer(
        db,
        Reviewer(
            reviewer_id=name,
            disciplines=disciplines,
            affiliation=str(form.get("affiliation", "")).strip(),
            level=str(form.get("level", "")).strip(),
        ),
        role,
        str(form.get("password", "")),
        recorded_by=admin_id,
    )
    return f"Account {name!r} created; record its exams on its page."


def _change_from_form(form: FormData, site: ReviewSite) -> repo.ReviewerChange:
    """The edit form: discipline checkboxes (plus a free list, checked against the spec), exam rounds as
    taken/passed/failed selects."""
    typed = name_set(str(form.get("other_disciplines", "")))
    check_disciplines(typed, site.disciplines, site.spec)
    chosen = frozenset(str(d) for d in form.getlist("discipline")) | typed
    exams = []
    for key, value in form.multi_items():
        if key.startswith("exam:") and value in ("passed", "failed"):
            _, discipline, round_ = key.split(":", 2)
            exams.append((discipline, int(round_), value == "passed"))
    password = str(form.get("password", ""))
    return repo.ReviewerChange(
        disciplines=chosen,
        affiliation=str(form.get("affiliation", "")).strip(),
        level=str(form.get("level", "")).strip(),
        whitelisted=form.get("whitelisted") == "yes",
        declared_conflicts=name_set(str(form.get("conflicts", ""))),
        exams=tuple(exams),
        password=password or None,
    )


def _admin_action(
    db: Database, item_id: str, round_: int, form: FormData, admin_id: str, rubrics: RubricSet, item_format: str
) -> str:
    action = form.get("action")
    if action == "validate":
        repo.record_validation(
            db,
            item_id,
            round_,
            scores_from_form(form, rubrics, item_format),
            admin_id,
            rubrics.name,
        )
        return "Validation saved."
    if action == "committee":
        decision = str(form.get("decision", ""))
        if decision not in {d.value for d in Decision}:
            raise ValueError("choose approved, revise or rejected")
        repo.record_committee(db, item_id, round_, Decision(decision), admin_id, str(form.get("note", "")))
        return "Committee decision saved."
    if action == "audit":
        if form.get("flawed") not in ("yes", "no"):
            raise ValueError("choose flawed or clean")
        if not repo.record_audit(db, item_id, round_, form.get("flawed") == "yes", admin_id, str(form.get("note", ""))):
            raise ValueError("this item was not drawn for audit")
        return "Audit verdict saved."
    raise ValueError(f"unknown action {action!r}")


def server_config(app: Starlette, host: str, port: int) -> uvicorn.Config:
    """How `review serve` serves the app. The app reads X-Forwarded-For itself, from `review.trusted_proxies` only:
    uvicorn's own proxy handling would believe it from 127.0.0.1, i.e. from any local client."""
    return uvicorn.Config(app, host=host, port=port, log_level="info", proxy_headers=False)
