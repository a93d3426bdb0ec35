"""Exports in Chromium: staff build a web hook queue with a CSV transform from the typed form (columns as rows),
preview it on a real order on the same page, send a test delivery to a real receiver on 127.0.0.1 and read its
answer, see a failed delivery's reason in the export log and retry it to success.

With ``SCREENSHOTS=1`` the pages are also saved to ``docs/screenshots/`` (``make screenshots``)."""

from __future__ import annotations

import re

from playwright.sync_api import Page, expect
from rest_framework.test import APIClient

from exports import services
from exports.models import ExportItem, ExportQueue, ExportStatus
from tests.support.browser import rows, shoot
from tests.support.imports import import_orders
from tests.support.receivers import running_receiver
from tests.support.tenants import make_tenant


def deliver_pending(item: ExportItem) -> None:
    """Run the item's delivery here, unless a worker (an eager Celery) already did."""
    item.refresh_from_db()
    assert item.delivery_id is not None
    services.deliver(delivery_pk=item.delivery_id)
    item.refresh_from_db()


def add_column(page: Page, header: str, path: str, column_format: str = "") -> None:
    editor = page.locator(".field-transform__columns")
    editor.get_by_role("button", name="Add a column").click()
    row = editor.locator("tr.rows-row").last
    row.get_by_label("Header").fill(header)
    row.get_by_label("Value path").fill(path)
    if column_format:
        row.get_by_label("Format").fill(column_format)


def test_staff_build_a_csv_web_hook_queue_preview_it_test_it_and_retry_a_failed_delivery(
    admin_page: Page, settings
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the live server runs in this process
    tenant = make_tenant("acme")
    import_orders(APIClient(), tenant, "WEB-10041")  # a stored order to preview on (no queue yet: no export)
    page = admin_page
    with running_receiver() as receiver:
        page.goto("/admin/exports/exportqueue/add/")
        page.select_option("#id_account", label="acme")
        page.fill("#id_name", "orders to erp")
        page.select_option("#id_entity_type", "incoming_order_state_changes")

        # "Daily at" only for daily queues.
        page.select_option("#id_trigger", "daily")
        expect(page.locator(".form-row.field-daily_at")).to_be_visible()
        page.select_option("#id_trigger", "realtime")
        expect(page.locator(".form-row.field-daily_at")).to_be_hidden()

        # Only the chosen transform's fields; the entity type's fields listed beside the columns.
        page.select_option("#id_transform__type", "csv")
        expect(page.locator(".form-row.field-transform__template")).to_be_hidden()
        expect(page.locator(".form-row.field-transform__columns")).to_be_visible()
        expect(page.locator("#entity-paths")).to_contain_text("order.order_identifier")
        add_column(page, "Order", "order.order_identifier")
        page.locator("#entity-paths code", has_text="state.order_state").click()  # a field clicked: a column
        page.select_option("#id_transform__decimal_separator", ".")

        page.select_option("#id_delivery__type", "webhook")
        expect(page.locator(".form-row.field-delivery__recipients")).to_be_hidden()
        page.fill("#id_delivery__url", receiver.url)
        headers = page.locator(".field-delivery__headers")
        headers.get_by_role("button", name="Add a header").click()
        headers.get_by_label("Header").fill("X-Shop")
        headers.get_by_label("Value").fill("acme")

        page.click("#preview-button")
        expect(page.locator("#preview-output")).to_contain_text("Order;order_state")
        expect(page.locator("#preview-output")).to_contain_text("WEB-10041;")
        expect(page.locator("#preview-note")).to_contain_text("Nothing was saved or sent")
        shoot(page, "export-queue-form-csv-webhook")

        page.click("input[name=_save]")
        expect(page.locator(".messagelist")).to_contain_text("Web hook signing secret (shown once, copy it now)")
        secret = page.locator("code.webhook-secret").inner_text()
        queue = ExportQueue.objects.get()
        assert queue.delivery["secret"] == secret and queue.account == tenant.account
        assert queue.transform == {
            "type": "csv",
            "decimal_separator": ".",
            "columns": [
                {"header": "Order", "path": "order.order_identifier"},
                {"header": "order_state", "path": "state.order_state"},
            ],
        }
        assert queue.delivery["headers"] == {"X-Shop": "acme"}

        # A test delivery of the saved queue: the receiver's answer on the page, nothing in the export log.
        page.goto(f"/admin/exports/exportqueue/{queue.pk}/change/")
        assert secret not in page.content()
        page.click("button.test-delivery-button")
        expect(page.locator(".messagelist .success")).to_contain_text("the destination answered HTTP 200: ok")
        shoot(page, "export-queue-test-delivery")
        [tested] = receiver.received
        assert tested.headers["webhook-id"].startswith("test_") and b"WEB-10041" in tested.body
        assert not ExportItem.objects.exists()

        # A real export that fails: its reason in the export log list, then a retry from the list.
        receiver.script = [500]
        import_orders(APIClient(), tenant, "WEB-10042")
        item = ExportItem.objects.get()
        deliver_pending(item)
        assert item.status == ExportStatus.FAILURE
        page.goto("/admin/exports/exportitem/")
        page.locator("#changelist-filter details[data-filter-title='status'] a", has_text="Failure").click()
        expect(page).to_have_url(re.compile(r"status__exact=failure"))
        expect(rows(page)).to_have_count(1)
        expect(rows(page).locator("td.field-status")).to_have_text("Failure")
        expect(rows(page).locator("td.field-status_code")).to_have_text("500")
        expect(rows(page).locator("td.field-reason")).to_have_text("HTTP 500: ok")
        shoot(page, "export-log-failure", width=1900)

        page.check(f"input[name=_selected_action][value='{item.pk}']")
        page.select_option("select[name=action]", "retry_selected")
        page.click("button[name=index]")
        expect(page.locator(".messagelist .success")).to_contain_text("Retried 1 item(s).")

        deliver_pending(item)  # the receiver answers 200 now
        page.goto("/admin/exports/exportitem/")
        expect(rows(page).locator("td.field-status")).to_have_text("Success")

    real = receiver.received[1:]
    assert [r.body for r in real] == [real[0].body] * 2 and real[0].body.startswith(b"Order;order_state\r\nWEB-10042;")
    assert len({r.headers["webhook-id"] for r in real}) == 2  # a retry is a new delivery


def test_a_mustache_template_lists_the_entity_fields_and_inserts_one(admin_page: Page) -> None:
    tenant = make_tenant("acme")
    import_orders(APIClient(), tenant, "WEB-7")
    page = admin_page
    page.goto("/admin/exports/exportqueue/add/")
    page.select_option("#id_account", label="acme")
    page.select_option("#id_entity_type", "incoming_order_state_changes")
    page.select_option("#id_transform__type", "mustache")
    expect(page.locator(".form-row.field-transform__columns")).to_be_hidden()
    page.fill("#id_transform__template", "{{#elements}}")
    page.locator("#id_transform__template").press("End")
    page.locator("#entity-paths code", has_text="order.order_identifier").click()
    page.locator("#id_transform__template").press("End")
    page.locator("#id_transform__template").type("{{/elements}}")
    expect(page.locator("#id_transform__template")).to_have_value(
        "{{#elements}}{{order.order_identifier}}{{/elements}}"
    )
    page.select_option("#id_preview_object", index=1)
    page.click("#preview-button")
    expect(page.locator("#preview-output")).to_have_text("WEB-7")
    shoot(page, "export-queue-form-mustache")

    # "Edit the JSON instead" starts from the fields as they are.
    page.locator("fieldset.config-json summary").click()
    page.check("#id_edit_json")
    expect(page.locator("#id_transform")).to_have_value(re.compile(r'"template": "\{\{#elements\}\}\{\{order'))
    expect(page.locator(".config-transform")).to_be_hidden()


def test_a_guarded_destination_warns_on_save_naming_the_setting(admin_page: Page) -> None:
    make_tenant("acme")
    page = admin_page
    page.goto("/admin/exports/exportqueue/add/")
    page.select_option("#id_account", label="acme")
    page.fill("#id_name", "to a private host")
    page.select_option("#id_entity_type", "sales")
    page.fill("#id_delivery__url", "http://10.1.2.3/hook")
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist .warning")).to_contain_text("OUTBOUND_ALLOWED_NETWORKS")
    shoot(page, "export-queue-guard-warning")


def test_editing_a_column_keeps_the_keys_no_input_shows(admin_page: Page) -> None:
    tenant = make_tenant("acme")
    columns = [{"header": "Name", "path": "order.basket.line_items[0].name", "language": ["da", "en"]}]
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name="names",
        entity_type="incoming_order_state_changes",
        transform={"type": "csv", "columns": columns},
        delivery={"type": "email", "recipients": ["ops@example.com"]},
    )
    page = admin_page
    page.goto(f"/admin/exports/exportqueue/{queue.pk}/change/")
    page.locator(".field-transform__columns").get_by_label("Header").fill("Product")
    page.click("input[name=_continue]")
    expect(page.locator(".messagelist .success")).to_be_visible()
    queue.refresh_from_db()
    assert queue.transform["columns"] == [{**columns[0], "header": "Product"}]
