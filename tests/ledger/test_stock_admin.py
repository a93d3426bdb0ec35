"""Stock in the admin: levels and events are listed, filtered and searched, never added, changed or deleted."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from ledger.models import StockEvent, StockLevel
from tests.support.admin import admin_url, listed
from tests.support.tenants import Tenant


@pytest.fixture
def rows(tenant: Tenant) -> tuple[StockLevel, StockEvent]:
    level = StockLevel.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, product_id="1001", quantity=Decimal("4")
    )
    event = StockEvent.objects.create(
        account=tenant.account,
        stock_location=tenant.stock_location,
        product_id="1001",
        type="received",
        adjustment=Decimal("4"),
        timestamp=datetime(2025, 1, 15, tzinfo=UTC),
    )
    return level, event


@pytest.mark.parametrize("model", [StockLevel, StockEvent])
def test_stock_rows_are_listed_with_the_stock_location_filter(admin_client, rows, tenant, model):
    response = admin_client.get(admin_url(model, "changelist"), {"stock_location__id__exact": tenant.stock_location.pk})
    assert len(listed(response)) == 1


def test_stock_events_are_filtered_by_type(admin_client, rows):
    assert listed(admin_client.get(admin_url(StockEvent, "changelist"), {"type__exact": "sale"})) == []
    assert len(listed(admin_client.get(admin_url(StockEvent, "changelist"), {"type__exact": "received"}))) == 1


@pytest.mark.parametrize("model", [StockLevel, StockEvent])
def test_stock_rows_are_searched_by_product_id(admin_client, rows, model):
    assert len(listed(admin_client.get(admin_url(model, "changelist"), {"q": "1001"}))) == 1
    assert listed(admin_client.get(admin_url(model, "changelist"), {"q": "nothing"})) == []


@pytest.mark.parametrize("index", [0, 1], ids=["level", "event"])
def test_a_stock_row_cannot_be_changed_or_deleted(admin_client, rows, index):
    row = rows[index]
    assert admin_client.post(admin_url(row, "delete", row.pk), {"post": "yes"}).status_code == 403
    assert admin_client.post(admin_url(row, "change", row.pk), {"product_id": "x"}).status_code == 403
    assert type(row).objects.get(pk=row.pk).product_id == "1001"


@pytest.mark.parametrize("model", [StockLevel, StockEvent])
def test_stock_rows_cannot_be_added(admin_client, tenant, model):
    assert admin_client.get(admin_url(model, "add")).status_code == 403
