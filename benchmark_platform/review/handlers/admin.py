"""The admin's main screen: settle a discipline's round, the round overview per reviewer, payouts, agreement and the
rated items."""

from __future__ import annotations

from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

from benchmark_platform.review import persist as repo
from benchmark_platform.review.metrics import agreement
from benchmark_platform.review.pages import context, money, page, posted, require_admin
from benchmark_platform.review.workflow import settlement_text


async def admin(request: Request) -> Response:
    me = await require_admin(request)
    ctx = context(request)
    site, db = ctx.site, ctx.db
    message = ""
    if request.method == "POST":
        form = await posted(request, me)
        discipline = str(form.get("discipline", ""))
        if discipline not in site.disciplines:
            message = f"Not settled: {discipline!r} is not a discipline of {site.spec}."
        else:
            outcomes = await run_in_threadpool(
                repo.settle_partition, db, site.spec, discipline, site.config.policy_for(discipline), site.seed
            )
            message = f"Settled {discipline}: {settlement_text(outcomes)}. The ledger below is up to date."
    pairs = await run_in_threadpool(repo.rating_pairs, db)
    return page(
        request,
        "admin.html",
        me=me,
        message=message,
        overview=await run_in_threadpool(repo.round_overview, db, site.spec),
        payouts=await run_in_threadpool(repo.payouts, db),
        agreement=agreement(pairs),
        pairs=pairs,
        disciplines=site.disciplines,
        unvalidated=await run_in_threadpool(repo.unvalidated_counts, db, site.spec, site.rubrics.name),
        money=lambda amount: money(amount, site.config.currency),
    )
