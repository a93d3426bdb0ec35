"""The admin in a real browser: signing in as the browser tests' superuser, saving screenshots, and where the
Chromium binary is (``CHROMIUM_PATH``, else Debian's ``/usr/bin/chromium``)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

USERNAME = "staff"
PASSWORD = "correct horse battery staple"


def log_in(page: Page) -> None:
    page.goto("/admin/login/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(re.compile(r"/admin/$"))


SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


def shoot(page: Page, name: str, width: int | None = None) -> None:
    """With ``SCREENSHOTS=1`` (``make screenshots``), save the whole page as ``docs/screenshots/<name>.png``
    (``width``: in a window that wide, for a list whose columns run off the usual one)."""
    if not os.environ.get("SCREENSHOTS"):
        return
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    size = page.viewport_size
    if width and size:
        page.set_viewport_size({"width": width, "height": size["height"]})
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True, animations="disabled")
    if width and size:
        page.set_viewport_size(size)


def chromium_or_skip() -> str:
    """The Chromium binary to drive. Where there is none the test is skipped, with how to get one; with
    ``REQUIRE_BROWSER=1`` (as ``.ci/run`` sets) it fails instead, so a run that must drive a browser cannot pass
    without one."""
    executable = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if os.path.isfile(executable) and os.access(executable, os.X_OK):
        return executable
    message = (
        f"No Chromium at {executable}. Install it with `apt-get install chromium`, or point CHROMIUM_PATH "
        "at a Chromium binary (`playwright install` is not used: its downloads are not available here)."
    )
    if os.environ.get("REQUIRE_BROWSER") == "1":
        pytest.fail(f"{message} REQUIRE_BROWSER=1: the browser tests must run.", pytrace=False)
    pytest.skip(message)


def rows(page: Page) -> Locator:
    """The rows of the changelist on the page."""
    return page.locator("#result_list tbody tr")
