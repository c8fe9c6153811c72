"""An item's page for the admin: what the reviewers read, both reviews, and the forms to validate (reference scores),
decide an escalated item (core committee) and record an audit verdict."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import Response

from benchmark_platform.review import persist as repo
from benchmark_platform.review.models import Decision
from benchmark_platform.review.pages import context, error, page, posted, require_admin, scores_from_form
from benchmark_platform.review.rubrics import RubricSet
from benchmark_platform.store import Database


def admin_action(
    db: Database, item_id: str, round_: int, form: FormData, admin_id: str, rubrics: RubricSet, item_format: str
) -> str:
    """One form of the item page; a ValueError says in plain words why nothing was saved."""
    action = form.get("action")
    if action == "validate":
        repo.record_validation(
            db, item_id, round_, scores_from_form(form, rubrics, item_format), admin_id, rubrics.name
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


async def admin_item(request: Request) -> Response:
    me = await require_admin(request)
    ctx = context(request)
    item_id, round_ = request.path_params["item_id"], request.path_params["round"]
    message = ""
    detail = await run_in_threadpool(repo.item_detail, ctx.db, item_id, round_)
    if detail is None:
        return error(request, 404, "No such item.")
    if request.method == "POST":
        form = await posted(request, me)
        try:
            message = await run_in_threadpool(
                admin_action, ctx.db, item_id, round_, form, me.reviewer_id, ctx.site.rubrics, detail["format"]
            )
        except ValueError as exc:
            message = f"Not saved: {exc}"
        detail = await run_in_threadpool(repo.item_detail, ctx.db, item_id, round_)
    return page(request, "admin_item.html", me=me, item=detail, message=message)
