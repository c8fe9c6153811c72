"""End to end in headless Chromium (Debian's chromium + chromium-driver): log in, rate an item, check PostgreSQL."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import uvicorn

from benchmark_platform.review import repository as repo
from benchmark_platform.review.rubrics import RUBRICS
from benchmark_platform.review.web import create_app

from .conftest import PASSWORD

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
pytestmark = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
)


@pytest.fixture
def served(make_world) -> Iterator[tuple[str, object]]:
    """The review app on a free loopback port, in a thread of this process."""
    world = make_world(n_items=2, n_reviewers=2)
    repo.assign_partition(world.db, world.spec, world.discipline, repo.ReviewPolicy(), seed=1, phase="tournament")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(world.db), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert time.monotonic() < deadline, "review app did not start"
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}", world
    server.should_exit = True
    thread.join(10)


@pytest.fixture
def browser(tmp_path):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1200,1600",
        f"--user-data-dir={tmp_path / 'profile'}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(10)
    yield driver
    driver.quit()


@pytest.mark.slow
def test_reviewer_logs_in_and_rates_an_item_in_chromium(served, browser, tmp_path):
    from selenium.webdriver.common.by import By

    base, world = served
    reviewer = world.reviewers[0]
    browser.get(f"{base}/login")
    browser.find_element(By.ID, "reviewer_id").send_keys(reviewer)
    browser.find_element(By.ID, "password").send_keys(PASSWORD)
    browser.find_element(By.ID, "login").click()
    links = browser.find_elements(By.CSS_SELECTOR, "a.assignment")
    assert links, browser.page_source[:2000]
    blind_id = links[0].get_attribute("href").rsplit("/", 1)[1]
    links[0].click()
    assert "Question" in browser.page_source
    time.sleep(1.2)  # a reviewer reads before scoring: the page counts visible seconds
    for rubric in RUBRICS:
        browser.find_element(By.ID, f"{rubric}-4").click()
    browser.find_element(By.ID, "factuality-2").click()
    browser.find_element(By.ID, "verdict-revise").click()
    browser.find_element(By.ID, "comment").send_keys("Option B is also defensible under the cited source.")
    browser.save_screenshot(str(tmp_path / "review.png"))
    browser.find_element(By.ID, "submit-rating").click()
    assert "Done (1)" in browser.find_element(By.TAG_NAME, "main").text

    row = world.db.query(
        """SELECT a.item_id, a.reviewer_id, r.scores, r.verdict, r.comment, r.seconds_on_page
           FROM review_ratings r JOIN review_assignments a USING (assignment_id) WHERE a.blind_id = %s""",
        (blind_id,),
    )
    assert len(row) == 1
    rating = row[0]
    assert rating["reviewer_id"] == reviewer and rating["verdict"] == "revise"
    assert rating["scores"] == {**{k: 4 for k in RUBRICS}, "factuality": 2}
    assert rating["comment"].startswith("Option B")
    assert rating["seconds_on_page"] >= 1.0  # measured by the page's script (CSP allows it), capped by the server
    labels = world.db.query(
        "SELECT rubric, rating FROM gold_labels WHERE item_ref = %s AND reviewer = %s", (rating["item_id"], reviewer)
    )
    assert len(labels) == len(RUBRICS) + 1
