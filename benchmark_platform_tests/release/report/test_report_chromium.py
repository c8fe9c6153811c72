"""The release report in headless Chromium, opened as a file:// URL (no server, no network): every page loads without
a console error, the filters, search and pages of the item browser work on a 12,032-item release, an item's proving
fact links to its source record, the heat map has one cell per model and discipline with the missing one marked,
keyboard activation and form labels, no horizontal overflow at 1366x768 nor at phone width.

Screenshots (leaderboard, heat map, one item; phone width) and load times go to .local/test-artifacts/report/<name>/.
Built releases are checked too when BENCHMARK_PLATFORM_REPORT_RELEASES names a releases root (e.g. the folder of
`benchmark-platform run --releases-dir`): each must verify against its manifest, and its screenshots are the ones the
BENCHMARKS note describes."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import polars as pl
import pytest
from report_synthetic import DISCIPLINES, ITEMS, MISSING, MODELS

from benchmark_platform.paths import LOCAL_DIR
from benchmark_platform.release.bundle import verify_release
from benchmark_platform_tests.chromium import CHROMEDRIVER, CHROMIUM, start_chromium

WIDTH, HEIGHT, PHONE = 1366, 768, 390
ARTIFACTS = LOCAL_DIR / "test-artifacts" / "report"
RELEASES_ENV = "BENCHMARK_PLATFORM_REPORT_RELEASES"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs Debian's chromium and chromium-driver (apt-get install -y chromium chromium-driver)",
    ),
]


def _built_releases() -> list[object]:
    root = os.environ.get(RELEASES_ENV)
    found = sorted(p.parent.parent for p in Path(root).glob("*/*/report/index.html")) if root else []
    return found or [pytest.param(None, marks=pytest.mark.skip(reason=f"set {RELEASES_ENV} to a built releases root"))]


@pytest.fixture
def browser(tmp_path):
    driver = start_chromium(tmp_path / "profile", WIDTH, HEIGHT, console_log=True)
    yield driver
    driver.quit()


def _viewport(driver, width: int, height: int) -> None:
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800},
    )


class Report:
    """One report in the browser: navigation, screenshots, console errors, document widths."""

    def __init__(self, driver, index: Path, name: str) -> None:
        self.driver, self.url, self.folder = driver, index.resolve().as_uri(), ARTIFACTS / name
        self.folder.mkdir(parents=True, exist_ok=True)

    def open(self, page: str = "leaderboard") -> float:
        """Load the report afresh at `page`; milliseconds from navigation start until the page is drawn."""
        self.driver.get("about:blank")
        self.driver.get(f"{self.url}#{page}")
        return float(self.driver.execute_script("return window.reportReadyMs"))

    def go(self, page: str) -> None:
        self.driver.execute_script("location.hash = arguments[0]", page)
        self.wait(lambda d: d.find_element("id", f"page-{page.split('/')[0]}").is_displayed())

    def wait(self, condition):
        from selenium.webdriver.support.ui import WebDriverWait

        return WebDriverWait(self.driver, 60).until(condition)

    def errors(self) -> list[str]:
        return [e["message"] for e in self.driver.get_log("browser") if e["level"] in ("SEVERE", "ERROR")]

    def shot(self, name: str) -> None:
        """A screenshot of the viewport; the document must not be wider than the viewport."""
        width, viewport = self.driver.execute_script("return [document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= viewport, f"{name}: document {width} px wider than the viewport {viewport} px"
        self.driver.save_screenshot(str(self.folder / f"{name}.png"))

    def shot_element(self, name: str, element) -> None:
        """A screenshot of one element whole (the viewport grown to its height for the shot)."""
        viewport = self.driver.execute_script("return window.innerWidth")
        height = int(element.rect["height"]) + 20
        _viewport(self.driver, viewport, min(max(height, HEIGHT), 6000))
        self.driver.execute_script("arguments[0].scrollIntoView()", element)
        element.screenshot(str(self.folder / f"{name}.png"))
        _viewport(self.driver, viewport, HEIGHT)

    def count(self, selector: str) -> int:
        return int(self.driver.execute_script("return document.querySelectorAll(arguments[0]).length", selector))

    def text(self, element_id: str) -> str:
        """The element's text, shown or not."""
        return str(self.driver.execute_script("return document.getElementById(arguments[0]).textContent", element_id))

    def open_item(self, item_id: str):
        self.go(f"items/{item_id}")
        return self.wait(lambda d: d.find_element("css selector", f'details.item[open][data-item="{item_id}"]'))


def test_synthetic_release_of_mmlu_pro_size(browser, synthetic_report):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    report = Report(browser, synthetic_report, "synthetic_12k")
    timings = {"ready_ms": [report.open() for _ in range(3)]}
    report.shot("leaderboard")
    assert (
        report.count("table.leaderboard tbody tr") == MODELS and report.count("table.leaderboard svg.ci") == MODELS + 1
    )
    headers = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "table.leaderboard thead th")]
    assert {"Tier", "Answered", "Missing", "Unparsed"} <= set(headers)

    report.go("heatmap")
    assert report.count("td.heat-cell") == MODELS * len(DISCIPLINES)
    missing = browser.find_elements(By.CSS_SELECTOR, "td.heat-cell.missing")
    assert [m.get_attribute("aria-label") for m in missing] == [f"{MISSING[0]}, {MISSING[1]}: no data"]
    report.shot("heatmap")

    for page in ("stability", "selection", "audit", "datasheet"):
        report.go(page)
        report.shot(page)
    assert "Of the 29 pairs of neighbours" in report.text("stability-body")

    report.go("items")
    assert report.text("items-count") == f"{ITEMS} items"
    assert report.count("#items-list > li") == 50
    discipline = Select(browser.find_element(By.ID, "f-discipline"))
    started = time.perf_counter()
    discipline.select_by_visible_text(DISCIPLINES[3])
    timings["filter_ms"] = (time.perf_counter() - started) * 1000
    per_discipline = len(range(3, ITEMS, len(DISCIPLINES)))
    assert report.text("items-count") == f"{per_discipline} of {ITEMS} items match"
    assert {e.text for e in browser.find_elements(By.CSS_SELECTOR, "#items-list .badge.disc")} == {DISCIPLINES[3]}
    browser.find_element(By.CSS_SELECTOR, "#page-items .pager .next").click()
    assert browser.find_element(By.CSS_SELECTOR, "#page-items .pager .page-of").text == "page 2 of 18"
    Select(browser.find_element(By.ID, "f-status")).select_by_value("suspect")
    suspects = [i for i in range(0, ITEMS, 1000) if i % len(DISCIPLINES) == 3]
    assert report.text("items-count") == f"{len(suspects)} of {ITEMS} items match"
    discipline.select_by_index(0)
    Select(browser.find_element(By.ID, "f-status")).select_by_index(0)
    search = browser.find_element(By.ID, "f-search")
    search.send_keys("question 11999:")
    report.wait(lambda d: d.find_element(By.ID, "items-count").text == f"1 of {ITEMS} items match")
    search.send_keys(Keys.CONTROL, "a")
    search.send_keys(Keys.BACKSPACE)  # as a person clears it (WebDriver's clear() fires no input event)
    report.wait(lambda d: d.find_element(By.ID, "items-count").text == f"{ITEMS} items")
    labelled = browser.execute_script(
        "return [...document.querySelectorAll('select, input')].every(e => e.labels && e.labels.length)"
    )
    assert labelled

    item = report.open_item("item00010")
    link = item.find_element(By.CSS_SELECTOR, ".facts a.fact-source")
    assert link.get_attribute("href") == "https://example.org/records/10" and "Source number 1" in link.text
    answers = item.find_elements(By.CSS_SELECTOR, "table.answers tbody tr")
    assert len(answers) == MODELS
    report.shot_element("item", item)

    # keyboard: a section link is reached and followed with the keyboard alone
    browser.find_element(By.CSS_SELECTOR, '#tabs a[data-page="heatmap"]').send_keys(Keys.ENTER)
    report.wait(lambda d: d.find_element(By.ID, "page-heatmap").is_displayed())

    _viewport(browser, PHONE, 844)
    for page in ("leaderboard", "heatmap", "items"):
        report.go(page)
        report.shot(f"phone_{page}")
    _viewport(browser, WIDTH, HEIGHT)
    assert report.errors() == []
    (report.folder / "timings.json").write_text(json.dumps(timings, indent=2))


@pytest.mark.parametrize("release", _built_releases(), ids=lambda p: "-".join(p.parts[-2:]) if p else "none")
def test_built_release_report(browser, release):
    from selenium.webdriver.common.by import By

    assert verify_release(release) == []  # the report is listed in the manifest and matches it
    manifest = json.loads((release / "manifest.json").read_text())
    assert {"report/index.html", "report/data.js", "report/app.js", "report/style.css"} <= set(manifest["files"])
    spec = json.loads((release / "spec.json").read_text())
    name = f"{manifest['benchmark']}_{manifest['version']}"
    report = Report(browser, release / "report" / "index.html", name)
    timings = {"report_ready_ms": [report.open() for _ in range(3)]}
    report.shot("leaderboard")
    board = pl.read_parquet(release / "data" / "leaderboard.parquet")
    assert report.count("table.leaderboard tbody tr") == board.height

    report.go("heatmap")
    leaves = _leaves(spec["taxonomy"])
    assert report.count("td.heat-cell") == board.height * len(leaves)
    report.shot("heatmap")
    for page in ("stability", "selection", "audit", "datasheet"):
        report.go(page)
        report.shot(page)

    options = pl.read_parquet(release / "data" / "options.parquet")
    proven = options.filter(pl.col("proving_fact_ids").list.len() > 0)
    if proven.height:  # a generated release: the first item with a proved option, and that option's first fact
        item_id, fact_id = proven["item_id"][0], proven["proving_fact_ids"][0][0]
        facts = pl.read_parquet(release / "data" / "facts.parquet")
        url = facts.filter(pl.col("fact_id") == fact_id)["document_url"][0]
        item = report.open_item(item_id)
        for proofs in item.find_elements(By.CSS_SELECTOR, "details.proofs"):
            proofs.find_element(By.TAG_NAME, "summary").click()
        link = item.find_element(By.CSS_SELECTOR, f'a.fact-source[data-fact="{fact_id}"]')
        assert link.get_attribute("href") == url
    else:  # an item bank: the item shows where it came from
        item = report.open_item(options["item_id"][0])
        assert "row" in item.find_element(By.CSS_SELECTOR, ".provenance").text
    report.shot_element("item", item)
    assert report.errors() == []

    # the datasheet as the browser opens it from the file system, for the load-time ratio
    datasheet_ms = []
    for _ in range(3):
        browser.get("about:blank")
        browser.get((release / "datasheet.md").resolve().as_uri())
        datasheet_ms.append(
            float(browser.execute_script("return performance.getEntriesByType('navigation')[0].loadEventEnd"))
        )
    timings["datasheet_load_ms"] = datasheet_ms
    timings["report_bytes"] = {p: e["bytes"] for p, e in manifest["files"].items() if p.startswith("report/")}
    (report.folder / "timings.json").write_text(json.dumps(timings, indent=2))


def _leaves(nodes: list[dict]) -> list[str]:
    return [k for n in nodes for k in (_leaves(n["children"]) if n.get("children") else [n["key"]])]
