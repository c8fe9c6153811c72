"""Debian's headless Chromium driven by selenium, as the browser tests (review app, release report) use it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def start_chromium(profile: Path, width: int, height: int, console_log: bool = False) -> Any:
    """A headless Chromium whose page area is width x height (whatever room the window keeps for its frame), with a
    profile of its own and no background traffic (this machine's network is closed); `console_log` keeps the page's
    console messages for `driver.get_log("browser")`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        f"--window-size={width},{height}",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    if console_log:
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 800},
    )
    driver.implicitly_wait(10)
    return driver
