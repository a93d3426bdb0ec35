"""Every HTML page carries a Content-Security-Policy that runs no inline script, and no page
needs one: the admin (every model's list and add pages, the custom pages), the dashboard, the API docs, the
login and error pages. The API's JSON answers carry none (no browser runs them)."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import reverse

from tests.support.logs import make_sales_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    parsed = {}
    for part in policy.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


class _Scripts(HTMLParser):
    """Inline scripts and event-handler attributes of a page: what the policy would block."""

    def __init__(self) -> None:
        super().__init__()
        self.inline: list[str] = []
        self._open_inline = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        handlers = sorted(name for name in names if name.startswith("on"))
        if handlers:
            self.inline.append(f"<{tag} {' '.join(handlers)}>")
        if any(name == "href" and (value or "").strip().lower().startswith("javascript:") for name, value in attrs):
            self.inline.append(f"<{tag} href=javascript:>")
        self._open_inline = (
            tag == "script" and "src" not in names and dict(attrs).get("type") not in ("application/json",)
        )

    def handle_data(self, data: str) -> None:
        if self._open_inline and data.strip():
            self.inline.append(f"<script>{data.strip()[:80]}")

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._open_inline = False


def inline_scripts(html: str) -> list[str]:
    parser = _Scripts()
    parser.feed(html)
    return parser.inline


def assert_protected(response, url: str) -> None:
    assert response["Content-Type"].startswith("text/html"), url
    policy = directives(response)
    assert policy["script-src"] == ["'self'"], url
    assert policy["object-src"] == ["'none'"], url
    assert policy["frame-ancestors"] == ["'none'"], url
    assert policy["base-uri"] == ["'self'"], url
    assert not any("unsafe" in value for value in policy["default-src"] + policy["script-src"]), url
    assert inline_scripts(response.content.decode()) == [], url


def admin_pages() -> list[str]:
    urls = ["/admin/", "/admin/dashboard/"]
    for model in admin.site._registry:
        info = (model._meta.app_label, model._meta.model_name)
        urls.append(reverse("admin:{}_{}_changelist".format(*info)))
        urls.append(reverse("admin:{}_{}_add".format(*info)))
    return urls


def test_every_admin_page_has_the_policy_and_no_inline_script(admin_client: Client, tenant: Tenant) -> None:
    checked = 0
    for url in admin_pages():
        response = admin_client.get(url)
        if response.status_code == 403:  # a model without an add page (a log)
            continue
        assert response.status_code == 200, url
        assert_protected(response, url)
        checked += 1
    assert checked > 20


def test_the_custom_admin_pages_have_the_policy(admin_client: Client, tenant: Tenant) -> None:
    queue = make_sales_queue(tenant.account)
    for url in (
        reverse("admin:exports_exportqueue_change", args=[queue.pk]),
        reverse("admin:campaigns_campaign_changelist"),
        "/admin/password_change/",
    ):
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert_protected(response, url)


def test_the_login_page_and_the_html_404_have_the_policy() -> None:
    for url, status in (("/admin/login/", 200), ("/no-such-page", 404)):
        response = Client().get(url)
        assert response.status_code == status
        assert_protected(response, url)


def test_the_api_docs_page_has_the_policy_and_loads_its_start_up_script_from_a_file(client: Client) -> None:
    page = client.get("/api/docs/")
    assert page.status_code == 200
    assert_protected(page, "/api/docs/")
    script = re.search(r'<script src="([^"]*script=[^"]*)"', page.content.decode())
    assert script is not None

    start_up = client.get(script.group(1).replace("&amp;", "&"))

    assert start_up.status_code == 200
    assert start_up["Content-Type"].startswith("application/javascript")
    assert "SwaggerUIBundle" in start_up.content.decode()


def test_json_answers_carry_no_policy(client: Client) -> None:
    response = client.get("/api/v1/markets/")
    assert response["Content-Type"].startswith("application/json")
    assert "Content-Security-Policy" not in response


def test_no_template_of_the_project_holds_an_inline_script() -> None:
    templates = [*ROOT.glob("templates/**/*.html"), *ROOT.glob("*/templates/**/*.html")]
    assert templates
    for template in templates:
        text = template.read_text()
        # Django tags inside attributes are not HTML: drop them before parsing.
        found = inline_scripts(re.sub(r"{%.*?%}|{{.*?}}", "", text))
        assert found == [], template
