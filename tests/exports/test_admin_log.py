"""The export log and the import log answer "why" in their lists: the reason, the status code, the attempts and
the next retry, a link to the entity, filters by queue, status and date."""

from __future__ import annotations

import re
import uuid

from django.utils import timezone

from exports.models import ExportDelivery, ExportItem, ExportStatus
from imports.models import ImportItem, ImportStatus
from tests.support.admin import admin_url
from tests.support.queues import failed_item, make_queue


def test_the_export_log_list_shows_why_an_item_failed(admin_client, tenant) -> None:
    item = failed_item(make_queue(tenant, "https://example.com/a"), "k-1")
    ExportDelivery.objects.filter(pk=item.delivery_id).update(error="HTTP 500: the ERP is down for maintenance")

    page = admin_client.get(admin_url(ExportItem, "changelist")).content.decode()

    assert "HTTP 500: the ERP is down for maintenance" in page
    assert '<td class="field-status_code">500</td>' in page
    assert '<td class="field-attempts">1</td>' in page


def test_a_pending_retry_shows_when_it_is_next_tried(admin_client, tenant) -> None:
    item = failed_item(make_queue(tenant, "https://example.com/a"), "k-1", status=ExportStatus.PENDING)

    page = admin_client.get(admin_url(ExportItem, "changelist")).content.decode()

    cell = re.search(r'<td class="field-next_retry[^"]*">([^<]*)</td>', page)
    assert cell is not None and "2025" in cell.group(1), "the pending delivery's next attempt time is shown"
    assert item.delivery is not None


def test_an_item_links_to_its_entity_and_its_delivery(admin_client, tenant, settings) -> None:
    item = failed_item(make_queue(tenant, "https://example.com/a"), "k-1")
    assert item.entity_type == "incoming_order_state_changes"

    page = admin_client.get(admin_url(ExportItem, "change", item.pk)).content.decode()

    assert f"/admin/orders/orderstatechange/{item.object_id}/change/" in page
    assert f"/admin/exports/exportdelivery/{item.delivery_id}/change/" in page


def test_the_export_log_filters_by_date(admin_client, tenant) -> None:
    failed_item(make_queue(tenant, "https://example.com/a"), "k-1")
    url = admin_url(ExportItem, "changelist")
    # As the admin's date filter links it: midnight with the time zone's offset (an aware datetime).
    today = timezone.localtime().replace(hour=0, minute=0, second=0, microsecond=0)
    answer = admin_client.get(url, {"created_at__gte": str(today)})
    assert answer.status_code == 200 and "k-1" in answer.content.decode()
    tomorrow = today + timezone.timedelta(days=1)
    assert "k-1" not in admin_client.get(url, {"created_at__gte": str(tomorrow)}).content.decode()


def test_the_import_log_list_shows_the_first_error_with_its_field(admin_client, tenant) -> None:
    ImportItem.objects.create(
        account=tenant.account,
        integration=tenant.integration,
        kind="incoming_order",
        identifier="web-2",
        request_id=uuid.uuid4(),
        index=0,
        status=ImportStatus.REJECTED,
        payload={},
        errors=[
            {"field": "basket.line_items[0].price", "message": "must be positive", "code": "out_of_range"},
            {"field": "basket.currency", "message": "unknown currency", "code": "invalid_choice"},
        ],
    )

    page = admin_client.get(admin_url(ImportItem, "changelist")).content.decode()

    assert "basket.line_items[0].price: must be positive (+1 more)" in page
