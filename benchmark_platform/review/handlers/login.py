"""Log in (CSRF double-submit cookie, throttled per account and address) and log out."""

from __future__ import annotations

import math

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from benchmark_platform.review import persist as repo
from benchmark_platform.review.models import plural
from benchmark_platform.review.pages import (
    LOGIN_CSRF_COOKIE,
    SESSION_COOKIE,
    client_address,
    context,
    current,
    error,
    page,
    posted,
    read_form,
    same_origin,
)
from benchmark_platform.review.security import new_token, same


def _login_form(request: Request, status: int, message: str, retry_after: float = 0.0) -> Response:
    token = new_token()
    response = page(request, "login.html", status, csrf_token=token, message=message, me=None)
    response.set_cookie(
        LOGIN_CSRF_COOKIE,
        token,
        max_age=3600,
        httponly=True,
        samesite="strict",
        secure=context(request).secure_cookies,
    )
    if retry_after > 0:
        response.headers["Retry-After"] = str(math.ceil(retry_after))
    return response


async def login_page(request: Request) -> Response:
    if await current(request):
        return RedirectResponse("/", 303)
    return _login_form(request, 200, "")


async def login_submit(request: Request) -> Response:
    ctx = context(request)
    config = ctx.site.config
    form = await read_form(request)
    if not (same_origin(request) and same(str(form.get("csrf_token", "")), request.cookies.get(LOGIN_CSRF_COOKIE))):
        return error(request, 403, "The form expired or did not come from this site; reload the login page.")
    result = await run_in_threadpool(
        repo.login,
        ctx.db,
        str(form.get("reviewer_id", "")),
        str(form.get("password", "")),
        config.session_hours,
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
        max_age=int(config.session_hours * 3600),
        httponly=True,
        samesite="strict",
        secure=ctx.secure_cookies,
    )
    response.delete_cookie(LOGIN_CSRF_COOKIE)
    return response


async def logout(request: Request) -> Response:
    me = await current(request)
    if me:
        await posted(request, me)
        await run_in_threadpool(repo.logout, context(request).db, request.cookies[SESSION_COOKIE])
    response = RedirectResponse("/login", 303)
    response.delete_cookie(SESSION_COOKIE)
    return response
