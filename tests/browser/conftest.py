"""The admin in a real headless Chromium (Debian's package, driven by Playwright's sync API) against
pytest-django's live server. Without Chromium the tests are skipped, unless ``REQUIRE_BROWSER=1``
(``tests/support/browser.py``)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Browser, Page, sync_playwright

from tests.support.browser import PASSWORD, USERNAME, chromium_or_skip, log_in

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


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    executable = chromium_or_skip()
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


@pytest.fixture
def admin_page(page: Page, superuser: User) -> Page:
    """A page logged in to the admin as a superuser."""
    log_in(page)
    return page


@pytest.fixture(scope="session")
def artifacts() -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    return ARTIFACTS
