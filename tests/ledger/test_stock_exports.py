"""Stock events as exported (spec: Stock event, export element; Events, Stock Events)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from exports.entities import REGISTRY
from exports.entities.stock_events import ENTITY
from exports.models import ExportItem, ExportQueue, Trigger
from ledger.models import StockEvent
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

load = ENTITY.load
AT = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)


def stored(tenant: Tenant, **fields: Any) -> StockEvent:
    values: dict[str, Any] = {
        "account": tenant.account,
        "stock_location": tenant.stock_location,
        "product_id": "1001",
        "type": "received",
        "adjustment": Decimal("5"),
        "timestamp": AT,
    }
    values.update(fields)
    return StockEvent.objects.create(**values)


def test_a_sale_event_is_exported_with_its_sale_id_and_nothing_else(tenant):
    event = stored(tenant, type="sale", adjustment=Decimal("-2"), sale_id="sale-7")
    assert load([event.pk]) == {
        event.pk: {
            "adjustment": -2,
            "product_id": "1001",
            "sale_id": "sale-7",
            "stock_location_id": "shop-1",
            "timestamp": "2025-01-15T09:30:00Z",
            "type": "sale",
        }
    }


def test_a_stock_count_is_exported_with_its_count_figures(tenant):
    event = stored(
        tenant,
        type="stock_count_reset",
        adjustment=None,
        new_stock_value=Decimal("12"),
        variant_id="m",
        stock_count_id="count-1",
        stock_count_expected=Decimal("14.5"),
        stock_count_diff=Decimal("-2.5"),
    )
    assert load([event.pk])[event.pk] == {
        "new_stock_value": 12,
        "product_id": "1001",
        "variant_id": "m",
        "stock_location_id": "shop-1",
        "stock_count_diff": Decimal("-2.5"),
        "stock_count_expected": Decimal("14.5"),
        "stock_count_id": "count-1",
        "timestamp": "2025-01-15T09:30:00Z",
        "type": "stock_count_reset",
    }


def test_a_received_event_has_no_variant_sale_or_count_fields(tenant):
    event = stored(tenant)
    assert set(load([event.pk])[event.pk]) == {"adjustment", "product_id", "stock_location_id", "timestamp", "type"}


def test_fractional_quantities_keep_their_decimals(tenant):
    event = stored(tenant, adjustment=Decimal("0.375"))
    assert load([event.pk])[event.pk]["adjustment"] == Decimal("0.375")


def test_the_timestamp_is_iso_8601_in_utc_with_milliseconds_when_it_has_them(tenant):
    event = stored(tenant, timestamp=datetime(2025, 1, 15, 9, 30, 0, 250_000, tzinfo=UTC))
    assert load([event.pk])[event.pk]["timestamp"] == "2025-01-15T09:30:00.250Z"


def test_many_events_load_in_one_query(tenant):
    ids = [stored(tenant, product_id=f"p{i}").pk for i in range(20)]
    with CaptureQueriesContext(connection) as queries:
        loaded = load(ids)
    assert len(loaded) == 20
    assert len(queries.captured_queries) == 1


def test_a_missing_event_is_left_out(tenant):
    assert load([987654]) == {}


def test_the_registry_finds_the_newest_event_of_the_account(tenant, other_tenant):
    stored(tenant)
    newest = stored(tenant, product_id="2002")
    assert REGISTRY["stock_events"].find(tenant.account.pk, None) == (newest.pk, f"stock-event-{newest.pk}")
    assert REGISTRY["stock_events"].find(other_tenant.account.pk, None) is None


def test_a_pos_stock_event_enters_a_queue_unless_its_type_is_ignored(pos, tenant):
    counts = ExportQueue.objects.create(
        account=tenant.account,
        name="counts only",
        entity_type="stock_events",
        trigger=Trigger.DAILY,
        filters={"ignore_stock_event_types": ["received", "sale", "return"]},
    )
    received = {"type": "received", "product_id": "1001", "stock_location_id": "shop-1", "adjustment": 1}
    count = {**received, "type": "stock_count_reset", "adjustment": None, "new_stock_value": 3, "stock_count_id": "c"}
    assert pos.post("stock-events", [received, count]).status_code == 201
    [item] = ExportItem.objects.filter(queue=counts)
    assert StockEvent.objects.get(pk=item.object_id).type == "stock_count_reset"
