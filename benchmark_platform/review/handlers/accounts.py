"""The admin's reviewer screens: every reviewer with why no new work comes, a new account, and one reviewer's page
(disciplines, exam rounds, whitelist, password). A refused form keeps what was entered (the password excepted)."""

from __future__ import annotations

from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from benchmark_platform.review import persist as repo
from benchmark_platform.review.models import Reviewer, check_disciplines, name_set
from benchmark_platform.review.pages import ReviewSite, context, error, page, posted, require_admin
from benchmark_platform.store import Database


def create_account(db: Database, form: FormData, admin_id: str, site: ReviewSite) -> str:
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


def change_from_form(form: FormData, site: ReviewSite) -> repo.ReviewerChange:
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


def entered(form: FormData) -> dict[str, Any]:
    """What a refused edit form held, to show it again as entered: the checked disciplines, each exam select, the
    text fields and the whitelist box (never the password)."""
    return {
        "disciplines": {str(d) for d in form.getlist("discipline")},
        "exams": {k: str(v) for k, v in form.multi_items() if k.startswith("exam:")},
        "whitelisted": form.get("whitelisted") == "yes",
        **{k: str(form.get(k, "")) for k in ("other_disciplines", "affiliation", "level", "conflicts")},
    }


async def admin_reviewers(request: Request) -> Response:
    me = await require_admin(request)
    ctx = context(request)
    site, db = ctx.site, ctx.db
    message, values = "", {}
    if request.method == "POST":
        form = await posted(request, me)
        try:
            message = await run_in_threadpool(create_account, db, form, me.reviewer_id, site)
        except ValueError as exc:
            message = f"Not saved: {exc}"
            values = {k: str(v) for k, v in form.items() if k not in ("password", "csrf_token")}
    overview = await run_in_threadpool(repo.reviewer_overview, db, site.spec, site.config.policy)
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
        wip_cap=site.config.policy.wip_cap,
    )


async def admin_reviewer(request: Request) -> Response:
    me = await require_admin(request)
    ctx = context(request)
    reviewer_id = request.path_params["reviewer_id"]
    message, kept = "", None
    if request.method == "POST":
        form = await posted(request, me)
        try:
            change = change_from_form(form, ctx.site)
            await run_in_threadpool(repo.edit_reviewer, ctx.db, reviewer_id, change, me.reviewer_id)
            message = "Saved."
        except ValueError as exc:
            message, kept = f"Not saved: {exc}", entered(form)
    reviewer = next(
        (r for r in await run_in_threadpool(repo.load_reviewers, ctx.db) if r.reviewer_id == reviewer_id), None
    )
    if reviewer is None:
        return error(request, 404, "No such reviewer.")
    results = (await run_in_threadpool(repo.exams, ctx.db)).get(reviewer_id, {})
    known = sorted(set(ctx.site.disciplines) | reviewer.disciplines | set(results))
    return page(
        request,
        "admin_reviewer.html",
        me=me,
        reviewer=reviewer,
        exams=results,
        known=known,
        message=message,
        kept=kept,
    )
