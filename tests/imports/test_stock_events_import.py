"""POST /imports/stock_events: external stock resets, applied in the request (spec: Stock event)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from exports.models import ExportItem, ExportQueue, Trigger
from imports.models import ImportItem, ImportKind, ImportStatus
from ledger.models import StockEvent, StockLevel
from tests.factories import StockLocationFactory
from tests.support.imports import post
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def reset(product_id: str = "1001", **fields: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"product_id": product_id, "stock_location_id": "shop-1", "new_stock_value": 10}
    body.update(fields)
    return {k: v for k, v in body.items() if v is not None}


def level(tenant: Tenant, product_id: str = "1001") -> Decimal:
    return StockLevel.objects.get(stock_location=tenant.stock_location, product_id=product_id).quantity


def test_a_reset_sets_the_level_and_answers_ok(client, tenant):
    response = post(client, tenant, "stock_events", {"stock_events": [reset(new_stock_value=42)]})
    assert response.status_code == 200, response.json()
    assert response.json() == {"status": "OK", "message": "Import of 1 stock event(s) completed"}
    assert level(tenant) == 42


def test_an_imported_event_is_an_external_reset(client, tenant):
    post(client, tenant, "stock_events", {"stock_events": [reset()]})
    assert StockEvent.objects.get().type == "external_reset"


def test_a_reset_may_adjust(client, tenant):
    StockLevel.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, product_id="1001", quantity=5
    )
    post(client, tenant, "stock_events", {"stock_events": [reset(new_stock_value=None, adjustment=-7)]})
    assert level(tenant) == -2


def test_resets_apply_in_the_order_posted(client, tenant):
    body = {
        "stock_events": [reset(new_stock_value=3), reset(new_stock_value=None, adjustment=2, type="external_reset")]
    }
    post(client, tenant, "stock_events", body)
    assert level(tenant) == 5


@pytest.mark.parametrize("kind", ["received", "stock_count_reset", "sale", "return"])
def test_only_external_resets_can_be_imported(client, tenant, kind):
    response = post(client, tenant, "stock_events", {"stock_events": [reset(type=kind)]})
    assert response.status_code == 400
    [failed] = response.json()["failed"]
    assert failed["index"] == 0 and failed["id"] == "1001"
    assert [(e["field"], e["code"]) for e in failed["errors"]] == [("type", "not_allowed")]
    assert not StockEvent.objects.exists()


def test_valid_resets_are_applied_and_bad_ones_reported(client, tenant):
    body = {
        "stock_events": [
            reset("1001"),
            reset("2002", stock_location_id="nowhere"),
            reset("3003", new_stock_value="ten"),
            reset("4004", adjustment=1),
        ]
    }
    response = post(client, tenant, "stock_events", body)
    assert response.status_code == 207
    assert response.json()["status"] == "PARTIAL"
    failed = {f["index"]: [(e["field"], e["code"]) for e in f["errors"]] for f in response.json()["failed"]}
    assert failed == {
        1: [("stock_location_id", "unknown")],
        2: [("new_stock_value", "invalid_type")],
        3: [("adjustment", "exactly_one")],
    }
    assert list(StockLevel.objects.values_list("product_id", "quantity")) == [("1001", 10)]


def test_every_posted_event_is_in_the_import_log(client, tenant):
    post(client, tenant, "stock_events", {"stock_events": [reset("1001"), reset("2002", stock_location_id="x")]})
    rows = list(ImportItem.objects.order_by("index").values_list("kind", "status", "identifier", "stock_location"))
    assert rows == [
        (ImportKind.STOCK_EVENT, ImportStatus.SUCCESS, "1001", tenant.stock_location.pk),
        (ImportKind.STOCK_EVENT, ImportStatus.REJECTED, "2002", None),
    ]
    assert ImportItem.objects.get(index=0).payload == reset("1001")


def test_the_reset_names_any_stock_location_of_the_account(client, tenant):
    warehouse = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="wh-1")
    post(client, tenant, "stock_events", {"stock_events": [reset(stock_location_id="wh-1")]})
    assert StockLevel.objects.get().stock_location == warehouse


def test_a_stock_location_of_another_account_is_unknown(client, tenant, other_tenant):
    StockLocationFactory(account=other_tenant.account, market=other_tenant.market, identifier="theirs")
    response = post(client, tenant, "stock_events", {"stock_events": [reset(stock_location_id="theirs")]})
    assert response.status_code == 400
    assert not StockLevel.objects.exists()


def test_a_timestamp_is_kept(client, tenant):
    post(client, tenant, "stock_events", {"stock_events": [reset(timestamp="2025-01-15T06:00:00Z")]})
    assert StockEvent.objects.get().timestamp.isoformat() == "2025-01-15T06:00:00+00:00"


def test_imported_resets_are_exported(client, tenant):
    queue = ExportQueue.objects.create(
        account=tenant.account, name="stock", entity_type="stock_events", trigger=Trigger.DAILY
    )
    post(client, tenant, "stock_events", {"stock_events": [reset()]})
    assert ExportItem.objects.filter(queue=queue, object_id=StockEvent.objects.get().pk).exists()


def test_the_body_must_hold_stock_events(client, tenant):
    response = post(client, tenant, "stock_events", [reset()])
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == "body"


def test_an_empty_list_is_refused(client, tenant):
    response = post(client, tenant, "stock_events", {"stock_events": []})
    assert response.status_code == 400


def test_truncated_json_is_refused(client, tenant):
    response = post(client, tenant, "stock_events", None, raw=b'{"stock_events": [{"product_id": "1')
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "invalid_json"


def test_an_item_that_is_not_an_object_is_reported(client, tenant):
    response = post(client, tenant, "stock_events", {"stock_events": ["1001", reset()]})
    assert response.status_code == 207
    assert response.json()["failed"][0]["index"] == 0


def test_the_imports_scope_is_required(client, tenant):
    response = post(client, tenant, "stock_events", {"stock_events": [reset()]}, key=tenant.pos_key)
    assert response.status_code == 403
    assert not StockLevel.objects.exists()


def test_the_path_with_a_trailing_slash_works_too(client, tenant):
    assert post(client, tenant, "stock_events/", {"stock_events": [reset()]}).status_code == 200
