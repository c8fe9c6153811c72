"""The README's review section, followed step by step in headless Chromium on a fresh partition: the admin account
from the CLI, `review serve` as a real process on loopback, onboarding two new reviewers (one in the app, one with
`review edit-reviewer`), assignment by the sensor, rating with validation, settlement and the ledger. Every page is
screenshot at 1366x768 and must not overflow horizontally (document width <= viewport width)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import dagster as dg
import pytest
import yaml

from benchmark_platform.defs.common import DatabaseResource
from benchmark_platform.defs.review import build_defs
from benchmark_platform.review import persist as repo
from benchmark_platform.store import Database
from benchmark_platform_tests.chromium import CHROMEDRIVER, CHROMIUM, start_chromium

from .conftest import APPLICABLE, PASSWORD, spec_for

CLI = Path(sys.executable).with_name("benchmark-platform")
WIDTH, HEIGHT = 1366, 768
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)


def message_text(browser) -> str:
    """The page's #message once shown: a re-render may replace the element between finding and reading it (a stale
    reference), so it is found again until its text can be read (the bound only keeps a broken page from hanging)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    return str(
        WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,)).until(
            lambda b: b.find_element(By.ID, "message").text or False
        )
    )


def follow(browser, by: str, value: str) -> None:
    """Click a link or a form's submit button and wait until the next page replaced this one: reading the page
    before that would read the old page's message (a race that failed CI once)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions
    from selenium.webdriver.support.ui import WebDriverWait

    old = browser.find_element(By.TAG_NAME, "html")
    browser.find_element(by, value).click()
    WebDriverWait(browser, 60).until(expected_conditions.staleness_of(old))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cli(env: dict[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run([str(CLI), *args], input=stdin, env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture
def browser(tmp_path):
    driver = start_chromium(tmp_path / "profile", WIDTH, HEIGHT)
    yield driver
    driver.quit()


@pytest.fixture
def db(fresh_database) -> Database:
    """A fresh, empty database (not migrated): the README's first command must set it up."""
    return Database(fresh_database())


class Pages:
    """Screenshots and document widths of every page visited."""

    def __init__(self, driver, folder: Path) -> None:
        self.driver, self.folder, self.widths = driver, folder, {}
        folder.mkdir(parents=True, exist_ok=True)

    def shot(self, name: str) -> None:
        width, viewport = self.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        self.widths[name] = {"document_width": width, "viewport_width": viewport}
        self.driver.save_screenshot(str(self.folder / f"{name}.png"))
        assert viewport <= WIDTH and width <= viewport, f"{name}: document {width} px wider than viewport {viewport} px"


@pytest.mark.slow
def test_readme_review_section_in_chromium(db, make_world, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    # 1. the admin account from the CLI on a fresh database (the command migrates it), then the app as its own process
    env = {**os.environ, "BENCHMARK_PLATFORM_DATABASE_URL": db.url}
    admin, alice, bob = "principal", "alice", "bob"
    cli(env, "review", "add-reviewer", admin, "--role", "admin", stdin=PASSWORD + "\n")
    world = make_world(n_items=3, n_reviewers=0, ava_source=True)  # the items a pipeline run would have written
    d = world.discipline
    spec = spec_for(world, policy={"wip_cap": 3, "tau": 0.8}, currency="EUR")
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(yaml.safe_dump(spec.model_dump(mode="json", exclude_defaults=True)), encoding="utf-8")
    pages = Pages(browser, Path(os.environ.get("REVIEW_SCREENSHOTS", tmp_path / "screens")))
    port = free_port()
    server = subprocess.Popen(
        [str(CLI), "review", "serve", "--spec", str(spec_file), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        while True:  # until the server answers (or dies, which fails the test with its error output)
            assert server.poll() is None, server.stderr.read().decode()
            try:
                urllib.request.urlopen(f"{base}/login")
                break
            except OSError:
                time.sleep(0.2)

        def log_in(name: str) -> None:
            browser.get(f"{base}/login")
            browser.find_element(By.ID, "reviewer_id").send_keys(name)
            browser.find_element(By.ID, "password").send_keys(PASSWORD)
            follow(browser, By.ID, "login")

        def log_out() -> None:
            follow(browser, By.ID, "logout")

        browser.get(f"{base}/login")
        pages.shot("01_login")

        # 2. onboarding: alice in the app (account, then her exams on her page); bob's account in the app, exams by CLI
        log_in(admin)
        follow(browser, By.LINK_TEXT, "Reviewers")
        # a mistake first: a misspelt discipline key is refused with the valid keys, and the form keeps the entries
        assert browser.find_element(By.ID, "new-password").get_attribute("minlength") == "12"
        browser.find_element(By.ID, "new-name").send_keys(alice)
        browser.find_element(By.ID, "new-password").send_keys(PASSWORD)
        browser.find_element(By.ID, "new-disciplines").send_keys("wine_regions")
        browser.find_element(By.ID, "new-affiliation").send_keys("Université de Bordeaux")
        follow(browser, By.ID, "create")
        assert message_text(browser) == (
            f"Not saved: unknown discipline 'wine_regions'; the discipline keys of spec '{world.spec}' are: {d}"
        )
        assert browser.find_element(By.ID, "new-name").get_attribute("value") == alice
        assert browser.find_element(By.ID, "new-affiliation").get_attribute("value") == "Université de Bordeaux"
        assert browser.find_element(By.ID, "new-password").get_attribute("value") == ""
        pages.shot("02a_reviewers_typo")
        for field in ("new-name", "new-disciplines", "new-affiliation"):
            browser.find_element(By.ID, field).clear()
        for name, affiliation in ((alice, "Université de Bordeaux"), (bob, "UC Davis")):
            browser.find_element(By.ID, "new-name").send_keys(name)
            browser.find_element(By.ID, "new-password").send_keys(PASSWORD)
            browser.find_element(By.ID, "new-disciplines").send_keys(d)
            browser.find_element(By.ID, "new-affiliation").send_keys(affiliation)
            browser.find_element(By.ID, "new-level").send_keys("WSET Diploma")
            follow(browser, By.ID, "create")
            assert "created" in message_text(browser)
        table = browser.find_element(By.ID, "reviewers").text
        assert table.count(f"not eligible: both exam rounds not yet passed in {d}") == 2
        assert f"Waiting for reviewers: 3 in {d}" in browser.find_element(By.ID, "waiting").text
        pages.shot("02_reviewers_new")
        follow(browser, By.LINK_TEXT, alice)
        # a mistake on her page: a misspelt extra discipline refuses the save and keeps every entry
        browser.find_element(By.ID, "other-disciplines").send_keys("wine_regions")
        Select(browser.find_element(By.ID, f"exam-{d}-1")).select_by_visible_text("passed")
        browser.find_element(By.ID, "edit-level").clear()
        browser.find_element(By.ID, "edit-level").send_keys("WSET Diploma, DipWSET")
        follow(browser, By.ID, "save-reviewer")
        assert message_text(browser).startswith("Not saved: unknown discipline 'wine_regions'")
        assert browser.find_element(By.ID, "edit-level").get_attribute("value") == "WSET Diploma, DipWSET"
        assert Select(browser.find_element(By.ID, f"exam-{d}-1")).first_selected_option.text == "passed"
        pages.shot("03a_reviewer_edit_typo")
        browser.find_element(By.ID, "other-disciplines").clear()
        for round_ in (1, 2):
            Select(browser.find_element(By.ID, f"exam-{d}-{round_}")).select_by_visible_text("passed")
        follow(browser, By.ID, "save-reviewer")
        assert message_text(browser) == "Saved."
        pages.shot("03_reviewer_edit")
        follow(browser, By.LINK_TEXT, "← Reviewers")
        assert f"no second reviewer: nobody else independent is eligible in {d}" in browser.page_source
        edit = ("review", "edit-reviewer", bob, "--spec", str(spec_file))
        typo = subprocess.run(
            [str(CLI), *edit, "--exam", "wine_regions:1:passed"], env=env, capture_output=True, text=True
        )
        assert typo.returncode == 2 and typo.stderr.splitlines() == [  # a misspelt key is refused, the valid ones named
            f"error: unknown discipline 'wine_regions'; the discipline keys of spec '{world.spec}' are: {d}"
        ]
        cli(env, *edit, "--exam", f"{d}:1:passed", "--exam", f"{d}:2:passed")
        browser.refresh()
        assert browser.find_element(By.ID, "reviewers").text.count("gets work") == 2
        pages.shot("04_reviewers_ready")
        log_out()

        # 3. assignment by the sensor: its run request is what `make dev`'s daemon launches
        defs = build_defs(spec)
        resources = {"database": DatabaseResource(url=world.db.url)}
        tick = defs.sensors[0](dg.build_sensor_context(resources=resources))
        (request,) = tick.run_requests
        (asset,) = [a for a in defs.assets if a.key.path[-1] == "review_assignments"]
        assert dg.materialize([asset], partition_key=request.partition_key, resources=resources).success
        assert world.db.scalar("SELECT count(*) FROM review_assignments WHERE spec = %s", (world.spec,)) == 6

        # 4. both reviewers rate; alice first meets the validation, then the confirmation
        ava_item = world.items[0]["item_id"]
        for name, verdicts in ((alice, ("approve", "revise", "approve")), (bob, ("approve", "approve", "approve"))):
            log_in(name)
            links = browser.find_elements(By.CSS_SELECTOR, "a.assignment")
            assert len(links) == 3
            assert "0 items in your disciplines wait" in browser.find_element(By.ID, "situation").text
            assert "WIP cap reached: 3 open items (cap 3)" in browser.find_element(By.ID, "why").text
            if name == alice:
                pages.shot("05_queue")
            blind = world.db.query(
                "SELECT blind_id, item_id FROM review_assignments WHERE reviewer_id = %s ORDER BY item_id <> %s",
                (name, ava_item),
            )
            for k, row in enumerate(blind):
                browser.get(f"{base}/review/{row['blind_id']}")
                if row["item_id"] == ava_item:
                    source = browser.find_element(By.CSS_SELECTOR, "figure.source")
                    assert source.find_element(By.TAG_NAME, "mark").text == "within: North Coast"
                    assert "state: CA" in source.text and "contains: Big Valley" in source.text
                    assert "FeatureCollection" not in browser.page_source
                    link = source.find_element(By.CSS_SELECTOR, "a.provenance").get_attribute("href")
                    assert link.startswith("https://github.com/UCDavisLibrary/ava/blob/") and link.endswith(
                        "avas/clear_lake.geojson"
                    )
                    na = browser.find_element(By.ID, "combinatorial_validity-na").text
                    assert na == "Not applicable to 4-option items: not scored."
                if name == alice:  # every item page a reviewer reads
                    pages.shot(f"06_review_form_{k}")
                time.sleep(1.2)  # a reviewer reads before scoring: the page counts visible seconds
                reference = next(i["reference"] for i in world.items if i["item_id"] == row["item_id"])
                for rubric in APPLICABLE:  # alice reads closely (the human ratings), bob gives 4 throughout
                    browser.find_element(By.ID, f"{rubric}-{reference[rubric] if name == alice else 4}").click()
                browser.find_element(By.ID, f"verdict-{verdicts[k]}").click()
                browser.find_element(By.ID, "comment").send_keys(f"{name}: statement 2 needs its source year.")
                if name == alice and k == 0:  # a missing score that bypasses the browser's check
                    browser.execute_script(
                        "document.querySelectorAll('[required]').forEach(e => e.removeAttribute('required'));"
                        "document.querySelectorAll('input[name=factuality]').forEach(e => e.checked = false);"
                    )
                    follow(browser, By.ID, "submit-rating")
                    error = browser.find_element(By.ID, "form-error").text
                    assert error == "Not saved: Please score Factuality. Your choices below are kept."
                    pages.shot("07_review_validation")
                    browser.find_element(By.ID, f"factuality-{reference['factuality']}").click()
                follow(browser, By.ID, "submit-rating")
                assert "Your rating is saved" in browser.find_element(By.ID, "saved").text
                if name == alice and k == 0:
                    pages.shot("08_confirmation")
            assert "Done (3)" in browser.find_element(By.TAG_NAME, "main").text
            assert len(browser.find_elements(By.CSS_SELECTOR, "#done a.done")) == 3
            log_out()
        rated = world.db.query(
            """SELECT r.seconds_on_page, r.scores FROM review_ratings r JOIN review_assignments a USING (assignment_id)
               WHERE a.spec = %s""",
            (world.spec,),
        )
        assert len(rated) == 6 and all(
            r["seconds_on_page"] >= 1.0 and set(r["scores"]) == set(APPLICABLE) for r in rated
        )

        # 5. the admin validates each rated item and settles the round; the ledger pays in the spec's currency
        log_in(admin)
        rows = browser.find_elements(By.CSS_SELECTOR, "#rated-items tbody tr")
        assert sum(1 for r in rows if d in r.text and "not validated" in r.text) == 3
        # a mistake first: settling before validating is warned about, and says what it did not pay
        warning = browser.find_element(By.ID, "unvalidated").text
        assert warning.startswith(f"Not validated yet: 3 fully rated items in {d}.") and "base wage only" in warning
        Select(browser.find_element(By.ID, "settle-discipline")).select_by_visible_text(d)
        follow(browser, By.ID, "settle")
        assert f"Settled {d}: 3 fully rated items; 3 not validated: their reviews got the base wage only" in (
            message_text(browser)
        )
        pages.shot("08a_admin_settled_unvalidated")
        for n, item in enumerate(world.items):
            browser.get(f"{base}/admin/item/{item['item_id']}/1")
            for rubric in APPLICABLE:
                Select(browser.find_element(By.ID, f"validate-{rubric}")).select_by_value(
                    str(item["reference"][rubric])
                )
            follow(browser, By.ID, "save-validation")
            assert message_text(browser) == "Validation saved."
            explanation = browser.find_element(By.CSS_SELECTOR, "p.explanation").text
            assert explanation.split() == item["explanation"].split()  # the admin judges what the reviewers read
            assert not browser.find_elements(By.ID, "committee-form")  # nobody escalated
            pages.shot(f"09_admin_item_{n}")
        browser.get(f"{base}/admin")
        Select(browser.find_element(By.ID, "settle-discipline")).select_by_visible_text(d)
        follow(browser, By.ID, "settle")
        assert message_text(browser) == f"Settled {d}: 3 fully rated items. The ledger below is up to date."
        payouts = browser.find_element(By.ID, "payouts").text
        assert "Base wage" in payouts and "base_wage" not in browser.page_source
        (alice_row,) = [r.text for r in browser.find_elements(By.CSS_SELECTOR, "#payouts tbody tr") if alice in r.text]
        assert alice_row.endswith("30.00 EUR 60.00 EUR 0.00 EUR 90.00 EUR")  # 3 base wages of 10, 3 bonuses of 20
        (mine,) = [r for r in browser.find_elements(By.CSS_SELECTOR, "#agreement tbody tr") if d in r.text]
        kappa = mine.find_elements(By.TAG_NAME, "td")[4].text
        assert kappa == "n/a"  # bob approved everything: a constant rater leaves kappa undefined
        pages.shot("10_admin_settled")
        overview = {
            r.find_element(By.TAG_NAME, "a").text: r.text
            for r in browser.find_elements(By.CSS_SELECTOR, "#round-overview tbody tr")
        }
        # per reviewer: assigned, rated, validated, settled, bonuses, paid
        assert overview[alice].endswith("3 3 3 3 3 90.00 EUR") and overview[bob].startswith(f"{bob} 3 3 3 3")
        follow(browser, By.LINK_TEXT, "Reviewers")
        pages.shot("11_reviewers_after")
    finally:
        server.terminate()
        server.wait()

    ledger = world.db.query(
        "SELECT reviewer_id, kind, amount FROM review_ledger WHERE spec = %s ORDER BY reviewer_id, kind", (world.spec,)
    )
    assert sum(1 for e in ledger if e["kind"] == "base") == 6
    assert {e["reviewer_id"] for e in ledger} == {alice, bob}
    assert repo.payouts(world.db)  # the admin's table reads the same ledger
    (pages.folder / "widths.json").write_text(json.dumps(pages.widths, indent=1), encoding="utf-8")
    if os.environ.get("REVIEW_SCREENSHOTS"):
        shutil.copy(spec_file, pages.folder / "spec.yaml")
