"""Runtime integrations in Chromium: staff configure one from the form (the kind's placeholders listed beside the
URL, query parameters and headers as rows, the secret header masked once saved) and test it against a real
reference integrator on 127.0.0.1."""

from __future__ import annotations

from playwright.sync_api import Page, expect

from integrations.models import RuntimeIntegration
from tests.support import reference_server
from tests.support.browser import shoot
from tests.support.tenants import make_tenant


def add_row(page: Page, field: str, button: str, name: str, value: str) -> None:
    editor = page.locator(f".field-{field}")
    editor.get_by_role("button", name=button).click()
    row = editor.locator("tr.rows-row").last
    row.locator("[data-key=name]").fill(name)
    row.locator("[data-key=value]").fill(value)


def test_staff_configure_a_runtime_integration_and_test_it(admin_page: Page, settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    make_tenant("acme")
    page = admin_page
    with reference_server.running() as reference:
        page.goto("/admin/integrations/runtimeintegration/add/")
        page.select_option("#id_account", label="acme")
        page.select_option("#id_kind", "customer_lookup")
        expect(page.locator("#kind-placeholders-list")).to_contain_text("{search_term}")
        page.select_option("#id_method", "GET")
        page.fill("#id_url", reference.url + "/customers")
        add_row(page, "query", "Add a parameter", "q", "{search_term}")
        add_row(page, "query", "Add a parameter", "market", "{market}")
        add_row(page, "query", "Add a parameter", "shop_id", "{shop_id}")
        add_row(page, "headers", "Add a header", "Authorization", "Bearer s3cret-token")
        shoot(page, "runtime-integration-form")
        page.click("input[name=_continue]")
        expect(page.locator(".messagelist .success")).to_be_visible()

        integration = RuntimeIntegration.objects.get()
        assert integration.query == {"q": "{search_term}", "market": "{market}", "shop_id": "{shop_id}"}
        assert integration.headers == {"Authorization": "Bearer s3cret-token"}
        assert "s3cret-token" not in page.content()
        expect(page.locator(".field-headers input[type=password]")).to_have_value("********")

        page.click("a.test-integration-link")
        expect(page.locator(".test-ok")).to_contain_text("OK: the answer matches the spec")
        expect(page.locator(".test-status")).to_have_text("200")
        expect(page.locator("pre.test-data")).to_contain_text('"c-1"')
        shoot(page, "runtime-integration-test")
        sent = reference.requests[-1]
        assert sent.query["q"] == "jensen" and sent.headers["authorization"] == "Bearer s3cret-token"
