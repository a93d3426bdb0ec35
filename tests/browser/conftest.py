"""The admin in a real headless Chromium (Debian's package, driven by Playwright's sync API) against
pytest-django's live server."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, expect, sync_playwright

# Playwright's sync API keeps an event loop running in this thread, and Django refuses ORM calls from a
# thread with a running loop. The tests' ORM calls are plain synchronous code, so the guard does not apply.
os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
USERNAME = "staff"
PASSWORD = "correct horse battery staple"


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
    if not (os.path.isfile(executable) and os.access(executable, os.X_OK)):
        pytest.fail(
            f"No Chromium at {executable}. Install it with `apt-get install chromium`, or point CHROMIUM_PATH "
            "at a Chromium binary (`playwright install` is not used: its downloads are not available here).",
            pytrace=False,
        )
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser: Browser, live_server) -> Iterator[Page]:
    context = browser.new_context(base_url=live_server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(10_000)
    yield context.new_page()
    context.close()


@pytest.fixture
def superuser(transactional_db: None) -> User:
    return User.objects.create_superuser(USERNAME, "staff@example.com", PASSWORD)


def log_in(page: Page) -> None:
    page.goto("/admin/login/")
    page.fill("#id_username", USERNAME)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    expect(page).to_have_url(re.compile(r"/admin/$"))


@pytest.fixture
def admin_page(page: Page, superuser: User) -> Page:
    """A page logged in to the admin as a superuser."""
    log_in(page)
    return page


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS


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
