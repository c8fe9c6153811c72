"""What a team trips over after its first round (issue 36): typed discipline names checked against the spec, forms
that keep what was entered and report every problem at once, settlement that says what it did not pay."""

from __future__ import annotations

import re

import pytest

from benchmark_platform.review import persist as repo
from benchmark_platform.review.rubrics import RUBRICS
from benchmark_platform.review.sources import link_titles
from benchmark_platform.spec import load_spec

from .conftest import PASSWORD
from .test_review_web import CSRF, assigned, client, log_in, rating_form

WINE_KEYS = ", ".join(load_spec("wine").discipline_keys)


@pytest.fixture
def world(make_world):
    w = make_world(n_items=4, n_reviewers=3)
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(wip_cap=3), seed=1, phase="tournament")
    return w


def test_cli_rejects_unknown_discipline_names_naming_the_valid_keys(make_world, monkeypatch, capsys):
    from benchmark_platform.cli.main import main

    world = make_world(n_items=1, n_reviewers=1)
    monkeypatch.setenv("BENCHMARK_PLATFORM_DATABASE_URL", world.db.url)
    name = world.reviewers[0]
    before = repo.exams(world.db)[name]
    expected = f"error: unknown discipline 'wine_regions'; the discipline keys of spec 'wine' are: {WINE_KEYS}"
    for args in (
        ["review", "edit-reviewer", name, "--exam", "wine_regions:1:passed"],
        ["review", "edit-reviewer", name, "--add-disciplines", "wine_regions"],
        ["review", "edit-reviewer", name, "--disciplines", "regions,wine_regions"],
        ["review", "add-reviewer", f"carol-{world.spec}", "--disciplines", "wine_regions"],
    ):
        capsys.readouterr()
        assert main(args) == 2
        assert capsys.readouterr().err.splitlines() == [expected]
    assert repo.exams(world.db)[name] == before  # nothing recorded
    assert f"carol-{world.spec}" not in {r.reviewer_id for r in repo.load_reviewers(world.db)}
    with pytest.raises(SystemExit):
        main(["review", "edit-reviewer", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "e.g. regions:1:passed" in help_text and "wine_regions" not in help_text


def test_new_account_form_checks_disciplines_and_keeps_what_was_entered(world):
    admin = client(world)
    log_in(admin, world.admin)
    page = admin.get("/admin/reviewers").text
    assert 'minlength="12"' in page
    form = {
        "csrf_token": CSRF.search(page).group(1),
        "reviewer_id": f"carol-{world.spec}",
        "password": PASSWORD,
        "role": "reviewer",
        "disciplines": "wine_regions",
        "affiliation": "Université de Bordeaux",
        "level": "WSET Diploma",
    }
    bad = admin.post("/admin/reviewers", data=form).text
    assert (
        f"Not saved: unknown discipline &#39;wine_regions&#39;; the discipline keys of spec &#39;{world.spec}&#39;"
        in bad
    )
    assert f"are: {world.discipline}" in bad
    assert f'value="carol-{world.spec}"' in bad and 'value="Université de Bordeaux"' in bad
    assert 'value="WSET Diploma"' in bad and 'value="wine_regions"' in bad
    assert PASSWORD not in bad  # the password is never sent back
    short = admin.post("/admin/reviewers", data={**form, "disciplines": world.discipline, "password": "short"}).text
    assert "Not saved: passwords need at least 12 characters" in short
    assert f'value="carol-{world.spec}"' in short and 'value="Université de Bordeaux"' in short
    assert f"carol-{world.spec}" not in {r.reviewer_id for r in repo.load_reviewers(world.db)}
    ok = admin.post("/admin/reviewers", data={**form, "disciplines": world.discipline}).text
    assert f"Account &#39;carol-{world.spec}&#39; created" in ok
    # the edit form's free list is checked too
    edit = admin.get(f"/admin/reviewers/carol-{world.spec}").text
    assert 'minlength="12"' in edit
    token = CSRF.search(edit).group(1)
    bad_edit = admin.post(
        f"/admin/reviewers/carol-{world.spec}", data={"csrf_token": token, "other_disciplines": "wine_regions"}
    ).text
    assert "Not saved: unknown discipline &#39;wine_regions&#39;" in bad_edit


def test_review_form_reports_every_missing_field_at_once(world):
    rid = next(iter(assigned(world)))
    blind = assigned(world)[rid][0]["blind_id"]
    c = client(world)
    log_in(c, rid)
    form = rating_form(c, blind, comment="keep this report")
    r = c.post(f"/review/{blind}", data={**form, "factuality": "", "logical_rigor": "", "verdict": ""})
    assert r.status_code == 400
    message = re.search(r'id="form-error">([^<]*)<', r.text).group(1)
    assert message == (
        "Not saved: Please score Factuality, Logical rigor and choose a verdict: approve, revise, reject or escalate."
        " Your choices below are kept."
    )
    assert "keep this report" in r.text


def test_settling_unvalidated_items_is_warned_before_and_reported_after(make_world):
    w = make_world(n_items=2, n_reviewers=2)
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(wip_cap=3), seed=1, phase="tournament")
    for rid, mine in assigned(w).items():
        c = client(w)
        log_in(c, rid)
        for x in mine:
            c.post(f"/review/{x['blind_id']}", data=rating_form(c, x["blind_id"]))
    admin = client(w)
    log_in(admin, w.admin)
    page = admin.get("/admin").text
    warning = re.search(r'id="unvalidated">([^<]*)<', page).group(1)
    assert warning.startswith(f"Not validated yet: 2 fully rated items in {w.discipline}.")
    assert "Settling now pays their reviews the base wage only, no bonus" in page
    rows = [r for r in page.split("<tr>") if f"<td>{w.discipline}</td>" in r]  # this world's (the db is shared)
    assert sum("<td>not validated</td>" in r for r in rows) == 2
    validated = w.items[0]["item_id"]
    token = CSRF.search(page).group(1)
    admin.post(
        f"/admin/item/{validated}/1", data={"csrf_token": token, "action": "validate", **{k: "5" for k in RUBRICS}}
    )
    page = admin.get("/admin").text
    assert f"Not validated yet: 1 fully rated item in {w.discipline}." in page
    assert "Settling now pays its reviews the base wage only" in page
    settled = admin.post("/admin", data={"csrf_token": token, "discipline": w.discipline}).text
    message = re.search(r'id="message">([^<]*)<', settled).group(1)
    assert message == (
        f"Settled {w.discipline}: 2 fully rated items; 1 not validated: its reviews got the base wage only and no bonus"
        " (the bonus needs your reference scores: validate on the item page, then settle again)."
        " The ledger below is up to date."
    )
    kinds = w.db.query("SELECT item_id, kind FROM review_ledger WHERE spec = %s", (w.spec,))
    assert {e["item_id"] for e in kinds if e["kind"] == "bonus"} <= {validated}
    assert sum(1 for e in kinds if e["kind"] == "base") == 4


def test_item_pages_keep_line_breaks_and_the_admin_sees_explanation_and_sources(make_world):
    w = make_world(n_items=1, n_reviewers=2, ava_source=True)
    item = w.items[0]["item_id"]
    stem = "Which statements are true?\n1. Clear Lake lies within North Coast.\n2. Clear Lake lies in Oregon."
    explanation = "Statement 1 is in the AVA file.\n\nStatement 2 is false: the file says state: CA."
    with w.db.transaction() as conn, conn.cursor() as cur:
        cur.execute("UPDATE items SET question = %s, explanation = %s WHERE item_id = %s", (stem, explanation, item))
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(wip_cap=3), seed=1, phase="tournament")
    rid, (row,) = next(iter(assigned(w).items()))
    reviewer = client(w)
    log_in(reviewer, rid)
    admin = client(w)
    log_in(admin, w.admin)
    css = admin.get("/static/review.css").text
    assert "p.question, p.explanation, .options .option { white-space: pre-line; }" in css
    for page in (reviewer.get(f"/review/{row['blind_id']}").text, admin.get(f"/admin/item/{item}/1").text):
        assert f'<p class="question">{stem}</p>' in page  # the line breaks reach the page; the CSS shows them
        assert f'<p class="explanation">{explanation}</p>' in page
        assert "<mark>within: North Coast</mark>" in page and 'class="provenance"' in page
        assert "UC Davis Library AVA project, from US TTB rulemaking" in page


def test_committee_form_only_when_someone_escalated_with_nothing_preselected(make_world):
    w = make_world(n_items=2, n_reviewers=2)
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(wip_cap=3), seed=1, phase="tournament")
    escalated = w.items[0]["item_id"]
    for rid, mine in assigned(w).items():
        c = client(w)
        log_in(c, rid)
        for x in mine:
            verdict = "escalate" if x["item_id"] == escalated and rid == w.reviewers[0] else "approve"
            c.post(f"/review/{x['blind_id']}", data=rating_form(c, x["blind_id"], verdict))
    admin = client(w)
    log_in(admin, w.admin)
    quiet = admin.get(f"/admin/item/{w.items[1]['item_id']}/1").text
    assert "Core committee" not in quiet and 'name="decision"' not in quiet
    page = admin.get(f"/admin/item/{escalated}/1").text
    form = page[page.index('id="committee-form"') : page.index("</form>", page.index('id="committee-form"'))]
    assert "Core committee: a reviewer escalated this item" in page
    assert "<label>Committee decision <select" in form and 'id="committee-decision" required' in form
    assert re.findall(r"<option[^>]*selected[^>]*>([^<]*)<", form) == ["choose"]  # no verdict chosen for the admin
    token = CSRF.search(page).group(1)
    saved = admin.post(
        f"/admin/item/{escalated}/1", data={"csrf_token": token, "action": "committee", "decision": "revise"}
    )
    assert "Committee decision saved." in saved.text
    assert re.findall(r"<option[^>]*selected[^>]*>([^<]*)<", saved.text.split('id="committee-form"')[1]) == ["revise"]


def test_done_lists_the_rated_items_and_links_stay_with_their_item(world):
    rid = max(assigned(world), key=lambda r: len(assigned(world)[r]))
    mine = assigned(world)[rid]
    c = client(world)
    log_in(c, rid)
    links = dict(re.findall(r'href="/review/([^"]+)">Review item ([^<]+)</a>', c.get("/").text))
    assert len(links) == len(mine) >= 2 and all(links[b] == b[:6] for b in links)
    first, *rest = (x["blind_id"] for x in mine)
    c.post(f"/review/{first}", data=rating_form(c, first))
    home = c.get("/").text
    after = dict(re.findall(r'href="/review/([^"]+)">Review item ([^<]+)</a>', home))
    assert after == {b: links[b] for b in rest}  # the remaining links keep their names and targets
    assert "Done (1)" in home
    assert re.findall(r'<a class="done" href="/review/([^"]+)">Item ([^<]+)</a>', home) == [(first, first[:6])]
    assert "You have rated this item" in c.get(f"/review/{first}").text


def test_source_links_are_titled_by_their_own_document():
    links = ["https://example.org/rules/cassis.pdf", "https://example.org/rules/bandol.pdf", "https://x.org/a"]
    titles = link_titles(['Cahier des charges de l\'AOC "Cassis"**', "Wine rulebook", "Wine rulebook"], links)
    assert titles == [
        'Cahier des charges de l\'AOC "Cassis"',
        "Wine rulebook (bandol.pdf)",
        "Wine rulebook (a)",
    ]
    assert link_titles(["Clear Lake", "Clear Lake"], [links[0], links[0]]) == ["Clear Lake", "Clear Lake"]
    assert link_titles([""], [links[1]]) == [links[1]]


def test_admin_reviewer_exam_table_is_labelled_and_unknown_addresses_stay_in_the_layout(world):
    admin = client(world)
    log_in(admin, world.admin)
    page = admin.get(f"/admin/reviewers/{world.reviewers[0]}").text
    d = world.discipline
    assert f'id="discipline-{d}" aria-label="{d}: reviews it"' in page
    assert f'id="exam-{d}-1" aria-label="{d}: round 1 (depth test)"' in page
    assert f'id="exam-{d}-2" aria-label="{d}: round 2 (item simulation)"' in page
    missing = admin.get("/no/such/page")
    assert missing.status_code == 404
    assert "There is no page at this address." in missing.text and "Payouts and ratings</a>" in missing.text
    anonymous = client(world).get("/nowhere")
    assert anonymous.status_code == 404 and 'href="/static/review.css"' in anonymous.text


def test_each_handler_serves_alone_on_its_own_app(world):
    """Issue 37: a handler is a plain endpoint over the app's Context, mounted here without the other routes."""
    from starlette.routing import Route
    from starlette.testclient import TestClient

    from benchmark_platform.review.handlers import items, login
    from benchmark_platform.review.pages import Context
    from benchmark_platform.review.web import build_app

    from .test_review_web import site

    context = Context(world.db, site(world))
    alone = TestClient(
        build_app(
            context,
            [
                Route("/login", login.login_page, methods=["GET"]),
                Route("/login", login.login_submit, methods=["POST"]),
                Route("/admin/item/{item_id}/{round:int}", items.admin_item, methods=["GET", "POST"]),
            ],
        ),
        base_url="http://testserver",
    )
    log_in(alone, world.admin)
    item = world.items[0]["item_id"]
    page = alone.get(f"/admin/item/{item}/1")
    assert page.status_code == 200 and "Save validation" in page.text
    assert alone.get("/admin").status_code == 404  # not mounted: the admin screen is another handler


def test_the_reviewer_edit_page_keeps_its_entries_when_refused(world):
    admin = client(world)
    log_in(admin, world.admin)
    name, d = world.reviewers[0], world.discipline
    token = CSRF.search(admin.get(f"/admin/reviewers/{name}").text).group(1)
    refused = admin.post(
        f"/admin/reviewers/{name}",
        data={
            "csrf_token": token,
            f"exam:{d}:1": "failed",
            "other_disciplines": "wine_regions",
            "affiliation": "Institut des Sciences de la Vigne",
            "level": "DNO",
            "conflicts": "mallory",
        },
    ).text
    assert "Not saved: unknown discipline 'wine_regions'" in refused.replace("&#39;", "'")
    assert 'id="kept"' in refused and 'value="Institut des Sciences de la Vigne"' in refused
    assert 'value="DNO"' in refused and 'value="mallory"' in refused and 'value="wine_regions"' in refused
    assert re.search(rf'id="discipline-{d}"[^>]*>', refused) and " checked" not in re.search(
        rf'id="discipline-{d}"[^>]*>', refused
    ).group(0)  # unticked in the refused form stays unticked
    chosen = refused.split(f'id="exam-{d}-1"')[1].split("</select>")[0]
    assert re.findall(r'<option value="(\w*)" selected', chosen) == ["failed"]
    assert repo.exams(world.db)[name].get(d, {}).get(1) is not False  # nothing was saved


def test_round_overview_counts_per_reviewer(world):
    rows = assigned(world)
    rid = max(rows, key=lambda r: len(rows[r]))
    c = client(world)
    log_in(c, rid)
    first = rows[rid][0]
    c.post(f"/review/{first['blind_id']}", data=rating_form(c, first["blind_id"]))
    admin = client(world)
    log_in(admin, world.admin)
    table = admin.get("/admin").text.split('id="round-overview"')[1].split("</table>")[0]
    cells = {
        name: re.findall(r'<td class="num">([^<]*)</td>', row)
        for name, row in re.findall(r'href="/admin/reviewers/([^"]+)">[^<]*</a></td>(.*?)</tr>', table, re.S)
    }
    assert set(cells) == set(rows)
    assert cells[rid] == [str(len(rows[rid])), "1", "0", "0", "0", "not settled"]
    overview = {r["reviewer_id"]: r for r in repo.round_overview(world.db, world.spec)}
    assert {r: o["assigned"] for r, o in overview.items()} == {r: len(a) for r, a in rows.items()}
