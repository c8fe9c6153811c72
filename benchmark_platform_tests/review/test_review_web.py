"""The review web app over the real database: login, sessions, CSRF, roles, and attempts to break double-blindness."""

from __future__ import annotations

import re
import time

import pytest
from starlette.testclient import TestClient

from benchmark_platform.review import persist as repo
from benchmark_platform.review.config import ReviewConfig
from benchmark_platform.review.rubrics import RUBRICS
from benchmark_platform.review.security import hash_password
from benchmark_platform.review.web import SESSION_COOKIE, ReviewSite, create_app

from .conftest import APPLICABLE, PASSWORD

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def site(world, **review: object) -> ReviewSite:
    config = ReviewConfig.model_validate({"session_hours": 1.0, **review})
    return ReviewSite(spec=world.spec, seed=5, disciplines=(world.discipline,), config=config)


def client(world, **review: object) -> TestClient:
    return TestClient(create_app(world.db, site(world, **review)))


def log_in(c: TestClient, name: str, password: str = PASSWORD):
    token = CSRF.search(c.get("/login").text).group(1)
    return c.post(
        "/login", data={"reviewer_id": name, "password": password, "csrf_token": token}, follow_redirects=False
    )


def assigned(world) -> dict[str, list[dict]]:
    """reviewer -> their assignment rows (blind ids), from the database."""
    out: dict[str, list[dict]] = {}
    for r in world.db.query("SELECT * FROM review_assignments WHERE spec = %s ORDER BY assignment_id", (world.spec,)):
        out.setdefault(r["reviewer_id"], []).append(r)
    return out


def rating_form(c: TestClient, blind_id: str, verdict: str = "approve", comment: str = "", **scores: int) -> dict:
    token = CSRF.search(c.get(f"/review/{blind_id}").text).group(1)
    return {
        **{k: str(scores.get(k, 5)) for k in RUBRICS},
        "verdict": verdict,
        "comment": comment,
        "seconds_on_page": "30",
        "csrf_token": token,
    }


@pytest.fixture
def world(make_world):
    w = make_world(n_items=4, n_reviewers=3)
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(wip_cap=3), seed=1, phase="tournament")
    return w


def test_passwords_are_stored_as_salted_scrypt_hashes(world):
    rows = world.db.query("SELECT password_hash FROM review_reviewers WHERE reviewer_id = ANY(%s)", (world.reviewers,))
    hashes = [r["password_hash"] for r in rows]
    assert all(h.startswith("scrypt$") and PASSWORD not in h for h in hashes)
    assert len(set(hashes)) == len(hashes)  # same password, different salts


def test_login_session_logout_and_expiry(world):
    c = client(world)
    assert log_in(c, world.reviewers[0], "wrong password!!").status_code == 401
    assert log_in(c, "' OR '1'='1", PASSWORD).status_code == 401
    assert log_in(c, "nobody-" + world.spec, PASSWORD).status_code == 401
    ok = log_in(c, world.reviewers[0])
    assert ok.status_code == 303 and ok.headers["location"] == "/"
    cookie = ok.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Max-Age=3600" in cookie
    assert c.get("/").status_code == 200
    token = c.cookies[SESSION_COOKIE]
    # expire the session server-side: the same cookie no longer works
    with world.db.transaction() as conn, conn.cursor() as cur:
        cur.execute(
            "UPDATE review_sessions SET expires_at = now() - interval '1 second' WHERE reviewer_id = %s",
            (world.reviewers[0],),
        )
    assert c.get("/", follow_redirects=False).headers["location"] == "/login"
    log_in(c, world.reviewers[0])
    home = c.get("/")
    c.post("/logout", data={"csrf_token": CSRF.search(home.text).group(1)})
    assert repo.session(world.db, token) is None
    assert c.get("/", follow_redirects=False).headers["location"] == "/login"


def test_login_form_needs_its_csrf_cookie(world):
    c = client(world)
    token = CSRF.search(c.get("/login").text).group(1)
    c.cookies.clear()
    r = c.post("/login", data={"reviewer_id": world.reviewers[0], "password": PASSWORD, "csrf_token": token})
    assert r.status_code == 403


def test_reviewer_reaches_only_own_assignments_and_never_the_other_reviewer(world):
    mine = assigned(world)
    a, b = sorted(mine, key=lambda r: -len(mine[r]))[:2]
    shared_item = next(x["item_id"] for x in mine[a] if x["item_id"] in {y["item_id"] for y in mine[b]})
    blind_a = next(x["blind_id"] for x in mine[a] if x["item_id"] == shared_item)
    blind_b = next(x["blind_id"] for x in mine[b] if x["item_id"] == shared_item)

    ca, cb = client(world), client(world)
    log_in(ca, a), log_in(cb, b)
    home = ca.get("/").text
    assert all(x["blind_id"] in home for x in mine[a]) and blind_b not in home
    assert b not in home and shared_item not in home  # neither the co-reviewer nor the item id leaks

    # B's handle is not reachable by A: same answer as for a handle that does not exist
    assert ca.get(f"/review/{blind_b}").status_code == 404
    assert ca.get("/review/not-a-handle").status_code == 404
    forged = rating_form(ca, blind_a, comment="forged")
    assert ca.post(f"/review/{blind_b}", data=forged).status_code == 404
    assert (
        world.db.scalar(
            "SELECT count(*) FROM review_ratings r JOIN review_assignments a USING (assignment_id) WHERE a.blind_id = %s",
            (blind_b,),
        )
        == 0
    )

    # B rates with a distinctive comment; A's page must show none of it, before or after A rates
    marker = "MARKER-" + world.spec
    assert (
        cb.post(
            f"/review/{blind_b}", data=rating_form(cb, blind_b, "reject", marker, factuality=1), follow_redirects=False
        ).status_code
        == 303
    )
    page = ca.get(f"/review/{blind_a}").text
    assert marker not in page and b not in page and "reject" not in page.split('name="verdict"')[0]
    assert ca.post(f"/review/{blind_a}", data=rating_form(ca, blind_a), follow_redirects=False).status_code == 303
    page = ca.get(f"/review/{blind_a}").text
    assert marker not in page and b not in page and "You have rated this item" in page
    assert ca.get("/admin").status_code == 403
    assert ca.get(f"/admin/item/{shared_item}/1").status_code == 403


def test_rating_needs_csrf_same_origin_and_is_final(world):
    rid = next(iter(assigned(world)))
    blind = assigned(world)[rid][0]["blind_id"]
    c = client(world)
    log_in(c, rid)
    form = rating_form(c, blind, "revise", "statement 3 misquotes the source", logical_rigor=2)
    assert c.post(f"/review/{blind}", data={**form, "csrf_token": "guess"}).status_code == 403
    assert c.post(f"/review/{blind}", data=form, headers={"origin": "http://evil.example"}).status_code == 403
    bad = c.post(f"/review/{blind}", data={**form, "factuality": "9"})
    assert bad.status_code == 400 and "Not saved: Factuality must be one of 1 (fails)" in bad.text
    missing = c.post(f"/review/{blind}", data={**form, "factuality": ""})  # what a browser check would have caught
    assert missing.status_code == 400 and "Not saved: Please score Factuality." in missing.text
    assert "invalid literal" not in missing.text
    no_verdict = c.post(f"/review/{blind}", data={**form, "verdict": ""})
    assert no_verdict.status_code == 400 and "Please choose a verdict" in no_verdict.text
    assert (
        world.db.scalar(
            "SELECT count(*) FROM review_ratings r JOIN review_assignments a USING (assignment_id) WHERE a.blind_id = %s",
            (blind,),
        )
        == 0
    )  # nothing half-written
    done = c.post(f"/review/{blind}", data=form, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/?saved=1"
    assert "Your rating is saved" in c.get("/?saved=1").text
    assert c.post(f"/review/{blind}", data=form).status_code == 409
    row = world.db.query(
        """SELECT r.* , a.item_id FROM review_ratings r JOIN review_assignments a USING (assignment_id) WHERE a.blind_id = %s""",
        (blind,),
    )[0]
    assert row["verdict"] == "revise" and row["scores"]["logical_rigor"] == 2 and 0 <= row["seconds_on_page"] <= 30
    labels = world.db.query(
        "SELECT rubric, rating FROM gold_labels WHERE item_ref = %s AND reviewer = %s", (row["item_id"], rid)
    )
    assert {r["rubric"]: r["rating"] for r in labels} == {
        **{k: 5.0 for k in APPLICABLE},
        "logical_rigor": 2.0,
        "approve": 0.0,
    }


def test_security_headers(world):
    r = client(world).get("/login")
    assert r.headers["x-frame-options"] == "DENY" and "frame-ancestors 'none'" in r.headers["content-security-policy"]
    assert r.headers["cache-control"] == "no-store"


def test_admin_sees_both_reviews_and_records_validation_committee_and_audit(world):
    rows = assigned(world)
    for rid, mine in rows.items():
        c = client(world)
        log_in(c, rid)
        for x in mine:
            c.post(f"/review/{x['blind_id']}", data=rating_form(c, x["blind_id"], comment=f"note by {rid}"))
    admin = client(world)
    assert log_in(admin, world.admin).headers["location"] == "/admin"
    page = admin.get("/admin")
    assert page.status_code == 200 and world.discipline in page.text and "Agreement" in page.text
    item = world.items[0]["item_id"]
    detail = admin.get(f"/admin/item/{item}/1").text
    pair = [r for r, mine in rows.items() if any(x["item_id"] == item for x in mine)]
    assert all(f"note by {r}" in detail for r in pair)
    token = CSRF.search(detail).group(1)
    saved = admin.post(
        f"/admin/item/{item}/1", data={"csrf_token": token, "action": "validate", **{k: "4" for k in RUBRICS}}
    )
    assert "Validation saved." in saved.text
    assert world.db.scalar("SELECT reference->>'factuality' FROM review_validations WHERE item_id = %s", (item,)) == "4"
    forged = admin.post(  # nobody escalated this item: a hand-made committee form is refused by the server
        f"/admin/item/{item}/1", data={"csrf_token": token, "action": "committee", "decision": "rejected"}
    ).text
    assert "Not saved: no reviewer escalated item" in forged and "the committee decides escalated items only" in forged
    assert world.db.scalar("SELECT count(*) FROM review_committee_decisions WHERE item_id = %s", (item,)) == 0
    assert (
        "not drawn for audit"
        in admin.post(f"/admin/item/{item}/1", data={"csrf_token": token, "action": "audit", "flawed": "yes"}).text
    )
    assert admin.post(f"/admin/item/{item}/1", data={"csrf_token": "x", "action": "validate"}).status_code == 403


@pytest.fixture
def fresh_address(world):
    """The test client's address starts and ends without recorded failures (other tests log in wrongly too)."""

    def clear() -> None:
        with world.db.transaction() as conn, conn.cursor() as cur:
            cur.execute("DELETE FROM review_login_failures WHERE scope = 'address' AND key = 'testclient'")

    clear()
    yield
    clear()


@pytest.mark.slow  # over 3 s with its setup: the full suite only
@pytest.mark.production_scrypt
def test_login_backs_off_after_failures_per_account_and_rehashes_old_hashes(world, fresh_address):
    """30 wrong passwords: the first 5 are heard, then the account backs off; attempts during the backoff are refused
    without a password check (even the right password) and are not counted. After the backoff the right password
    works, and the old-cost hash it was checked against is replaced by one at today's cost."""
    name = world.reviewers[0]
    with world.db.transaction() as conn, conn.cursor() as cur:  # an account created under the old scrypt cost
        cur.execute(
            "UPDATE review_reviewers SET password_hash = %s WHERE reviewer_id = %s",
            (hash_password(PASSWORD, n=2**15), name),
        )
    c = client(world, login_throttle={"free_failures_per_account": 5, "first_delay_seconds": 5})
    statuses, waits = [], []
    for _ in range(30):
        r = log_in(c, name, "wrong password, again")
        statuses.append(r.status_code)
        waits.append(int(r.headers.get("retry-after", 0)))
    assert statuses[:5] == [401] * 5 and waits[:4] == [0] * 4 and waits[4] == 5  # the 5th failure starts a 5 s backoff
    assert statuses[5:].count(429) >= 20  # refused unheard (a very slow machine may outlive one backoff)
    heard = world.db.scalar("SELECT failures FROM review_login_failures WHERE scope = 'account' AND key = %s", (name,))
    assert 5 <= heard <= 6 and statuses.count(401) == heard
    throttled = log_in(c, name)
    assert throttled.status_code == 429 and "Too many failed logins" in throttled.text  # right password, refused
    time.sleep(int(throttled.headers["retry-after"]) + 0.2)  # wait out the backoff, as a person would
    ok = log_in(c, name)
    assert ok.status_code == 303
    stored = world.db.scalar("SELECT password_hash FROM review_reviewers WHERE reviewer_id = %s", (name,))
    assert stored.startswith("scrypt$131072$8$1$")  # transparently rehashed at N = 2^17
    assert log_in(client(world), name).status_code == 303  # and the new hash verifies
    assert world.db.scalar("SELECT count(*) FROM review_login_failures WHERE key = %s", (name,)) == 0


def test_one_address_guessing_many_names_backs_off(world, fresh_address):
    c = client(world, login_throttle={"free_failures_per_address": 3, "first_delay_seconds": 60})
    statuses = [log_in(c, f"nobody{k}-{world.spec}", "wrong password, again").status_code for k in range(5)]
    assert statuses == [401, 401, 401, 429, 429]


def test_oenobench_rubric_set_pass_warn_fail_with_guidance(make_world):
    w = make_world(n_items=2, n_reviewers=2)
    repo.assign_partition(w.db, w.spec, w.discipline, repo.ReviewPolicy(), seed=1, phase="tournament")
    c = client(w, policy={"rubric_set": "oenobench8"})
    log_in(c, w.reviewers[0])
    blind = assigned(w)[w.reviewers[0]][0]["blind_id"]
    page = c.get(f"/review/{blind}").text
    assert "OenoBench&#39;s eight rubrics (pass / warn / fail)" in page and "Verbatim copying" in page
    assert "escalate: a borderline or cross-discipline case for the core committee" in page  # verdicts explained
    assert page.count('class="guidance"') == 8 and "Not applicable" not in page  # all eight fit 4-option items
    keys = re.findall(r'name="([a-z_]+)" value="2"', page)
    assert len(keys) == 8
    form = {"csrf_token": CSRF.search(page).group(1), "verdict": "revise", "seconds_on_page": "5"}
    bad = c.post(f"/review/{blind}", data={**form, **{k: "2" for k in keys}, "ambiguity": "5"})
    assert bad.status_code == 400 and "Ambiguity must be one of 0 (fail), 1 (warn), 2 (pass), got 5" in bad.text
    ok = c.post(f"/review/{blind}", data={**form, **{k: "2" for k in keys}, "ambiguity": "0"}, follow_redirects=False)
    assert ok.status_code == 303
    stored = w.db.scalar(
        "SELECT r.scores FROM review_ratings r JOIN review_assignments a USING (assignment_id) WHERE a.blind_id = %s",
        (blind,),
    )
    assert stored == {**{k: 2 for k in keys}, "ambiguity": 0}


def test_a_new_reviewer_is_told_why_no_work_comes(make_world):
    w = make_world(n_items=2, n_reviewers=0)
    name = f"newcomer-{w.spec}"
    repo.add_reviewer(
        w.db, repo.Reviewer(reviewer_id=name, disciplines=frozenset({w.discipline})), "reviewer", PASSWORD
    )
    c = client(w)
    log_in(c, name)
    page = c.get("/").text
    assert "Nothing to review right now." in page and "2</strong> items in your disciplines wait" in page
    assert f"not eligible: both exam rounds not yet passed in {w.discipline}" in page
    assert "Ask the review admin to record your disciplines and exam rounds." in page
    with pytest.raises(ValueError, match="already exists; change it with"):
        repo.add_reviewer(w.db, repo.Reviewer(reviewer_id=name, disciplines=frozenset()), "reviewer", PASSWORD)
