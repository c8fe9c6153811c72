"""The review web app: reviewer login, assigned items, the rubric form with time on page, and the principal's view.

Security: scrypt password hashes; server-side sessions (only a token hash stored) that expire; a CSRF token on every
form (session-bound once logged in, double-submit cookie on the login form) plus a same-origin check on every POST;
roles reviewer/admin; double-blindness enforced by the queries of :mod:`benchmark_platform.review.repository` — a
reviewer reaches an item only through the random handle of their own assignment and never sees the other reviewer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from benchmark_platform.review import repository as repo
from benchmark_platform.review.metrics import agreement
from benchmark_platform.review.models import Decision, Verdict
from benchmark_platform.review.rubrics import RUBRIC_TITLES, RUBRICS, SCORE_MAX, SCORE_MIN
from benchmark_platform.review.security import new_token, same
from benchmark_platform.store import Database

HERE = Path(__file__).parent
SESSION_COOKIE = "review_session"
LOGIN_CSRF_COOKIE = "review_login_csrf"
templates = Jinja2Templates(directory=HERE / "templates")
templates.env.globals.update(
    rubrics=RUBRICS,
    rubric_titles=RUBRIC_TITLES,
    score_range=range(SCORE_MIN, SCORE_MAX + 1),
    verdicts=[v.value for v in Verdict],
    decisions=[Decision.APPROVED.value, Decision.REVISE.value, Decision.REJECTED.value],
)


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


class Forbidden(Exception):
    pass


def create_app(db: Database, session_hours: float = 8.0, secure_cookies: bool = False) -> Starlette:
    """The app over one database; ``secure_cookies`` marks cookies HTTPS-only (set it behind TLS)."""

    def page(request: Request, name: str, status: int = 200, **context: Any) -> Response:
        return templates.TemplateResponse(request, name, context, status_code=status)

    def error(request: Request, status: int, message: str) -> Response:
        return page(request, "error.html", status, message=message, me=None)

    async def current(request: Request) -> repo.Session | None:
        return await run_in_threadpool(repo.session, db, request.cookies.get(SESSION_COOKIE))

    def same_origin(request: Request) -> bool:
        origin = request.headers.get("origin") or request.headers.get("referer")
        return origin is None or urlsplit(origin).netloc == request.headers.get("host")

    async def posted(request: Request, me: repo.Session) -> FormData:
        form = await request.form()
        if not (same_origin(request) and same(str(form.get("csrf_token", "")), me.csrf_token)):
            raise Forbidden
        return form

    async def login_page(request: Request) -> Response:
        if await current(request):
            return RedirectResponse("/", 303)
        return _login_form(request, 200, "")

    def _login_form(request: Request, status: int, message: str) -> Response:
        token = new_token()
        response = page(request, "login.html", status, csrf_token=token, message=message, me=None)
        response.set_cookie(
            LOGIN_CSRF_COOKIE, token, max_age=3600, httponly=True, samesite="strict", secure=secure_cookies
        )
        return response

    async def login_submit(request: Request) -> Response:
        form = await request.form()
        if not (same_origin(request) and same(str(form.get("csrf_token", "")), request.cookies.get(LOGIN_CSRF_COOKIE))):
            return error(request, 403, "The form expired or did not come from this site; reload the login page.")
        result = await run_in_threadpool(
            repo.login, db, str(form.get("reviewer_id", "")), str(form.get("password", "")), session_hours
        )
        if result is None:
            return _login_form(request, 401, "Unknown name or wrong password.")
        token, me = result
        response = RedirectResponse("/admin" if me.role == "admin" else "/", 303)
        response.set_cookie(
            SESSION_COOKIE,
            token,
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

    async def home(request: Request) -> Response:
        me = await current(request)
        if me is None:
            return RedirectResponse("/login", 303)
        if me.role == "admin":
            return RedirectResponse("/admin", 303)
        queue = await run_in_threadpool(repo.reviewer_queue, db, me.reviewer_id)
        return page(request, "queue.html", me=me, queue=queue)

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
            scores = {k: int(str(form.get(k, ""))) for k in RUBRICS}
            verdict = Verdict(str(form.get("verdict", "")))
            seconds = float(str(form.get("seconds_on_page", "0")) or 0)
            outcome = await run_in_threadpool(
                repo.submit_rating,
                db,
                blind_id,
                me.reviewer_id,
                scores,
                verdict,
                str(form.get("comment", ""))[:20000],
                seconds,
            )
        except ValueError as exc:
            return page(
                request,
                "review.html",
                400,
                me=me,
                item=item,
                message=f"Please correct the form: {exc}",
                values=dict(form),
            )
        if outcome is repo.Submit.NOT_FOUND:
            return error(request, 404, "No such assignment.")
        if outcome is repo.Submit.ALREADY_RATED:
            return error(request, 409, "You have already rated this item; ratings are final.")
        return RedirectResponse("/", 303)

    async def admin(request: Request) -> Response:
        me = await require_admin(request)
        pairs = await run_in_threadpool(repo.rating_pairs, db)
        return page(
            request,
            "admin.html",
            me=me,
            payouts=await run_in_threadpool(repo.payouts, db),
            agreement=agreement(pairs),
            pairs=pairs,
        )

    async def admin_item(request: Request) -> Response:
        me = await require_admin(request)
        item_id, round_ = request.path_params["item_id"], request.path_params["round"]
        message = ""
        if request.method == "POST":
            form = await posted(request, me)
            try:
                message = await run_in_threadpool(_admin_action, db, item_id, round_, form, me.reviewer_id)
            except ValueError as exc:
                message = f"Not saved: {exc}"
        detail = await run_in_threadpool(repo.item_detail, db, item_id, round_)
        if detail is None:
            return error(request, 404, "No such item.")
        return page(request, "admin_item.html", me=me, item=detail, message=message)

    async def require_admin(request: Request) -> repo.Session:
        me = await current(request)
        if me is None or me.role != "admin":
            raise Forbidden
        return me

    async def forbidden(request: Request, _: Exception) -> Response:
        return error(request, 403, "Forbidden.")

    return Starlette(
        routes=[
            Route("/login", login_page, methods=["GET"]),
            Route("/login", login_submit, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            Route("/", home, methods=["GET"]),
            Route("/review/{blind_id}", review, methods=["GET", "POST"]),
            Route("/admin", admin, methods=["GET"]),
            Route("/admin/item/{item_id}/{round:int}", admin_item, methods=["GET", "POST"]),
            Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
        ],
        middleware=[Middleware(SecurityHeaders)],
        exception_handlers={Forbidden: forbidden},
    )


def _admin_action(db: Database, item_id: str, round_: int, form: FormData, admin_id: str) -> str:
    action = form.get("action")
    if action == "validate":
        repo.record_validation(db, item_id, round_, {k: int(str(form.get(k, ""))) for k in RUBRICS}, admin_id)
        return "Validation saved."
    if action == "committee":
        repo.record_committee(
            db, item_id, round_, Decision(str(form.get("decision", ""))), admin_id, str(form.get("note", ""))
        )
        return "Committee decision saved."
    if action == "audit":
        if not repo.record_audit(db, item_id, round_, form.get("flawed") == "yes", admin_id, str(form.get("note", ""))):
            raise ValueError("this item was not drawn for audit")
        return "Audit verdict saved."
    raise ValueError(f"unknown action {action!r}")
