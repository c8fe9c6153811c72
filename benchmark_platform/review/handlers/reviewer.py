"""A reviewer's screens: the queue of their assignments (and why no new work comes) and the rating form."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from benchmark_platform.review import persist as repo
from benchmark_platform.review.models import Verdict
from benchmark_platform.review.pages import (
    VERDICT_HELP,
    Context,
    context,
    current,
    error,
    page,
    posted,
    scores_from_form,
    seconds_posted,
)


def _my_situation(ctx: Context, reviewer_id: str) -> dict[str, Any]:
    """How many items wait in the caller's disciplines and, if no new work comes, why (nothing about others)."""
    policy = ctx.site.config.policy
    mine = next(
        (r for r in repo.reviewer_overview(ctx.db, ctx.site.spec, policy) if r["reviewer"].reviewer_id == reviewer_id),
        None,
    )
    if mine is None:
        return {"waiting": 0, "why": "not eligible: this account has no reviewer record"}
    waiting = repo.waiting_items(ctx.db, ctx.site.spec)
    return {
        "waiting": sum(waiting.get(d, 0) for d in mine["reviewer"].disciplines),
        "why": mine["why_no_work"],
        "open": mine["open"],
        "cap": policy.wip_cap,
    }


async def home(request: Request) -> Response:
    me = await current(request)
    if me is None:
        return RedirectResponse("/login", 303)
    if me.role == "admin":
        return RedirectResponse("/admin", 303)
    ctx = context(request)
    queue = await run_in_threadpool(repo.reviewer_queue, ctx.db, me.reviewer_id)
    situation = await run_in_threadpool(_my_situation, ctx, me.reviewer_id)
    saved = request.query_params.get("saved") == "1"
    return page(request, "queue.html", me=me, queue=queue, situation=situation, saved=saved)


def _problems(form: Any, ctx: Context, item_format: str) -> list[str]:
    """Everything missing in one message, so one resubmit is enough."""
    scores = scores_from_form(form, ctx.site.rubrics, item_format)
    missing = [r.title for r in ctx.site.rubrics.applicable(item_format) if r.key not in scores]
    problems = [f"score {', '.join(missing)}"] if missing else []
    if str(form.get("verdict", "")) not in VERDICT_HELP:
        problems.append("choose a verdict: approve, revise, reject or escalate")
    return problems


async def review(request: Request) -> Response:
    me = await current(request)
    if me is None:
        return RedirectResponse("/login", 303)
    blind_id = request.path_params["blind_id"]
    if me.role != "reviewer":
        return error(request, 403, "Only reviewers rate items.")
    ctx = context(request)
    form = await posted(request, me) if request.method == "POST" else None
    item = await run_in_threadpool(repo.open_assignment, ctx.db, blind_id, me.reviewer_id)
    if item is None:
        return error(request, 404, "No such assignment.")
    if form is None:
        return page(request, "review.html", me=me, item=item, message="", values={})
    try:
        if problems := _problems(form, ctx, item["format"]):
            raise ValueError("please " + " and ".join(problems))
        outcome = await run_in_threadpool(
            repo.submit_rating,
            ctx.db,
            blind_id,
            me.reviewer_id,
            scores_from_form(form, ctx.site.rubrics, item["format"]),
            Verdict(str(form.get("verdict", ""))),
            str(form.get("comment", ""))[:20000],
            seconds_posted(form),
            ctx.site.rubrics.name,
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
