"""The Content-Security-Policy in Chromium: Swagger UI (served locally) and the admin's script-driven forms work
under it, with no violation reported, and an injected inline script does not run."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

# Registered before any page script: every violation the browser reports on the page, as "directive blocked-uri".
WATCH = """
window.__violations = [];
document.addEventListener('securitypolicyviolation', (event) => {
    window.__violations.push(event.violatedDirective + ' ' + event.blockedURI);
});
"""


@pytest.fixture
def watched(page: Page) -> Iterator[Page]:
    page.add_init_script(WATCH)
    yield page


def violations(page: Page) -> list[str]:
    return page.evaluate("window.__violations")


def test_swagger_ui_renders_the_operations_under_the_policy(watched: Page, transactional_db: None) -> None:
    response = watched.goto("/api/docs/")

    assert response is not None
    assert "script-src 'self'" in response.headers["content-security-policy"]
    # The page fetches and lays out the whole document (about 1 MB): a wider wait than the 5 s default.
    expect(watched.locator(".swagger-ui .info .title")).to_contain_text(
        "Retail back-office integration API", timeout=30_000
    )
    expect(watched.locator(".opblock").first).to_be_visible()
    assert violations(watched) == []


def test_the_admins_script_driven_forms_work_under_the_policy(watched: Page, superuser) -> None:
    watched.goto("/admin/login/")
    watched.fill("#id_username", "staff")
    watched.fill("#id_password", "correct horse battery staple")
    watched.click("input[type=submit]")
    watched.goto("/admin/exports/exportqueue/add/")

    # queue_form.js shows the rows of the chosen delivery type only; rows.js draws the headers table.
    watched.select_option("#id_delivery__type", "ftp")
    expect(watched.locator(".field-delivery__host")).to_be_visible()
    expect(watched.locator(".field-delivery__url")).to_be_hidden()
    watched.goto("/admin/django_celery_beat/periodictask/add/")
    expect(watched.locator("#id_name")).to_be_visible()
    assert violations(watched) == []


def test_an_injected_inline_script_does_not_run(watched: Page, transactional_db: None) -> None:
    watched.goto("/admin/login/")

    watched.evaluate(
        """() => {
            const script = document.createElement('script');
            script.textContent = 'window.__ran = true;';
            document.body.appendChild(script);
        }"""
    )

    assert watched.evaluate("window.__ran === true") is False
    assert any(v.startswith("script-src") for v in violations(watched))
