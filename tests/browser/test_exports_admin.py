"""Exports in Chromium: staff create a web hook queue, preview its transform on a real order, see a failed
delivery in the export log and retry it to success against a real receiver on 127.0.0.1."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Page, expect
from rest_framework.test import APIClient

from exports import services
from exports.models import ExportItem, ExportQueue, ExportStatus
from tests.conftest import make_tenant
from tests.exports.receiver import running_receiver
from tests.exports.test_outbox import import_orders

pytestmark = pytest.mark.browser


def rows(page: Page):
    return page.locator("#result_list tbody tr")


def deliver_pending(item: ExportItem) -> None:
    """Run the item's delivery here, unless a worker (an eager Celery) already did."""
    item.refresh_from_db()
    assert item.delivery_id is not None
    services.deliver(delivery_pk=item.delivery_id)
    item.refresh_from_db()


def test_staff_preview_a_web_hook_queue_and_retry_a_failed_delivery(admin_page: Page, settings) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # the live server runs in this process
    tenant = make_tenant("acme")
    page = admin_page
    with running_receiver() as receiver:
        page.goto("/admin/exports/exportqueue/add/")
        page.select_option("#id_account", label="acme")
        page.fill("#id_name", "orders to erp")
        page.select_option("#id_entity_type", "incoming_order_state_changes")
        page.select_option("#id_trigger", "realtime")
        page.fill("#id_transform", '{"type": "identity"}')
        page.fill("#id_delivery", json.dumps({"type": "webhook", "url": receiver.url, "headers": {}}))
        page.click("input[name=_save]")

        expect(page.locator(".messagelist")).to_contain_text("Web hook signing secret (shown once, copy it now)")
        secret = page.locator("code.webhook-secret").inner_text()
        queue = ExportQueue.objects.get()
        assert queue.delivery["secret"] == secret and queue.account == tenant.account

        receiver.script = [500]
        import_orders(APIClient(), tenant, "WEB-10042")
        item = ExportItem.objects.get()

        page.goto(f"/admin/exports/exportqueue/{queue.pk}/change/")
        assert secret not in page.content()
        page.click("a.preview-link")
        expect(page.locator("pre.preview-output")).to_contain_text('"order_identifier":"WEB-10042"')

        deliver_pending(item)
        assert item.status == ExportStatus.FAILURE
        page.goto("/admin/exports/exportitem/")
        page.locator("#changelist-filter details[data-filter-title='status'] a", has_text="Failure").click()
        expect(page).to_have_url(re.compile(r"status__exact=failure"))
        expect(rows(page)).to_have_count(1)
        expect(rows(page).locator("td.field-status")).to_have_text("Failure")
        expect(rows(page).locator("td.field-status_code")).to_have_text("500")

        page.check(f"input[name=_selected_action][value='{item.pk}']")
        page.select_option("select[name=action]", "retry_selected")
        page.click("button[name=index]")
        expect(page.locator(".messagelist .success")).to_contain_text("Retried 1 item(s).")

        deliver_pending(item)  # the receiver answers 200 now
        page.goto("/admin/exports/exportitem/")
        expect(rows(page).locator("td.field-status")).to_have_text("Success")

    assert [r.body for r in receiver.received] == [receiver.received[0].body] * 2
    assert len({r.headers["webhook-id"] for r in receiver.received}) == 2  # a retry is a new delivery
