"""Sales and returns move stock (spec: Stock event, types sale and return; Sale, line items)."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Register, StockLocation
from exports.models import ExportItem, ExportQueue, Trigger
from ledger.models import RegisterPeriod, Sale, SaleKind, StockEvent, StockLevel
from ledger.services.stock import record_sale_stock_events
from tests.factories import StockLocationFactory
from tests.support.checkouts import checkout_body, exchange_body
from tests.support.statements import store_sale
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db
SOLD_AT = datetime(2025, 1, 15, 9, 30, tzinfo=UTC)
_numbers = itertools.count(1)


def line(product_id: str | None = "1001", quantity: Any = 1, **extra: Any) -> dict[str, Any]:
    item: dict[str, Any] = {"line_item_id": f"l-{next(_numbers)}", "quantity": quantity, "total": Decimal("10")}
    if product_id is not None:
        item["id"] = product_id
    item.update(extra)
    return item


def make_sale(
    tenant: Tenant,
    register: Register,
    lines: list[dict[str, Any]],
    *,
    kind: str = SaleKind.SALE,
    voided: bool = False,
    stock_location: StockLocation | None = None,
) -> Sale:
    """A stored sale (with its checkout and an open register period), as the checkout service stores one."""
    location = stock_location or tenant.stock_location
    period = RegisterPeriod.objects.filter(register=register, closed_at__isnull=True).first()
    if period is None:
        period = RegisterPeriod.objects.create(
            account=tenant.account, register=register, sequence_number=1, opened_at=SOLD_AT
        )
    n = next(_numbers)
    return store_sale(
        account=tenant.account,
        register=register,
        stock_location=location,
        period=period,
        number=n,
        kind=kind,
        voided=voided,
        total=Decimal("10"),
        at=SOLD_AT,
        document={"identifier": f"sale-{n}", "summary": {"is_return": kind == SaleKind.RETURN, "line_items": lines}},
    )


def record(tenant: Tenant, sales: list[Sale]) -> list[StockEvent]:
    with transaction.atomic():  # as the checkout service calls it: inside the transaction storing the sales
        return record_sale_stock_events(account=tenant.account, sales=sales)


def level(location: StockLocation, product_id: str, variant_id: str = "") -> Decimal:
    return StockLevel.objects.get(stock_location=location, product_id=product_id, variant_id=variant_id).quantity


def test_a_sale_lowers_stock_by_the_quantity_sold(tenant, register):
    record(tenant, [make_sale(tenant, register, [line("1001", 2)])])
    assert level(tenant.stock_location, "1001") == Decimal("-2")


def test_a_sale_line_becomes_a_sale_event_with_the_sale_id_and_the_sale_time(tenant, register):
    sale = make_sale(tenant, register, [line("1001", 3, variant_id="1001-m")])
    [event] = record(tenant, [sale])
    assert event.type == "sale"
    assert event.adjustment == Decimal("-3")
    assert event.new_stock_value is None
    assert event.sale_id == sale.identifier
    assert event.variant_id == "1001-m"
    assert event.timestamp == SOLD_AT
    assert event.stock_location_id == tenant.stock_location.pk


def test_a_return_raises_stock_with_a_return_event(tenant, register):
    StockLevel.objects.create(account=tenant.account, stock_location=tenant.stock_location, product_id="1001")
    [event] = record(tenant, [make_sale(tenant, register, [line("1001", -2)], kind=SaleKind.RETURN)])
    assert event.type == "return"
    assert event.adjustment == Decimal("2")
    assert level(tenant.stock_location, "1001") == Decimal("2")


def test_fractional_quantities_move_stock_exactly(tenant, register):
    record(tenant, [make_sale(tenant, register, [line("cheese", Decimal("0.375"))])])
    assert level(tenant.stock_location, "cheese") == Decimal("-0.375")


def test_variants_have_their_own_levels(tenant, register):
    record(tenant, [make_sale(tenant, register, [line("1001", 1, variant_id="m"), line("1001", 2, variant_id="l")])])
    assert level(tenant.stock_location, "1001", "m") == -1
    assert level(tenant.stock_location, "1001", "l") == -2
    assert not StockLevel.objects.filter(product_id="1001", variant_id="").exists()


def test_two_lines_of_one_product_make_two_events_and_add_up(tenant, register):
    events = record(tenant, [make_sale(tenant, register, [line("1001", 1), line("1001", 4)])])
    assert len(events) == 2
    assert level(tenant.stock_location, "1001") == -5


def test_stock_may_go_negative(tenant, register):
    record(tenant, [make_sale(tenant, register, [line("1001", 7)])])
    assert level(tenant.stock_location, "1001") == -7


def test_an_existing_level_is_lowered(tenant, register):
    StockLevel.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, product_id="1001", quantity=10
    )
    record(tenant, [make_sale(tenant, register, [line("1001", 3)])])
    assert level(tenant.stock_location, "1001") == 7


def test_a_voided_sale_moves_no_stock(tenant, register):
    assert record(tenant, [make_sale(tenant, register, [line("1001", 1)], voided=True)]) == []
    assert not StockLevel.objects.exists()


def test_a_line_without_a_product_id_moves_no_stock(tenant, register):
    assert record(tenant, [make_sale(tenant, register, [line(None, 1)])]) == []


def test_a_line_fulfilled_by_the_ecommerce_system_moves_no_stock(tenant, register):
    assert record(tenant, [make_sale(tenant, register, [line("1001", 1, ecom_id="web-7")])]) == []


def test_a_line_with_a_null_ecom_id_moves_stock(tenant, register):
    assert len(record(tenant, [make_sale(tenant, register, [line("1001", 1, ecom_id=None)])])) == 1


@pytest.mark.parametrize(
    "behavior",
    [
        {"giftcard": {"code": "G1", "integration_id": "gc"}},
        {"voucher": {"code": "V1", "integration_id": "vc"}},
        {"giftcard_use": {"code": "G1", "integration_id": "gc"}},
        {"voucher_use": {"code": "V1", "integration_id": "vc"}},
        {"expense": {"identifier": "coffee", "image_urls": []}},
        {"customer_account_deposit": {"customer_id": "c-1", "payment_type_id": "ca"}},
        {"container_deposit": {"product_id": "pant", "tag": "pant", "rule_id": "r", "parent_line_item_id": "l-1"}},
    ],
    ids=lambda b: next(iter(b)),
)
def test_a_line_whose_behavior_moves_no_goods_moves_no_stock(tenant, register, behavior):
    assert record(tenant, [make_sale(tenant, register, [line("1001", 1, behavior=behavior)])]) == []


def test_a_shipping_line_with_a_product_id_moves_stock(tenant, register):
    # Shipping from the shop without ecom_id is the shop's own goods leaving; only ecom_id lines are skipped.
    sale = make_sale(tenant, register, [line("1001", 1, behavior={"shipping": {"method_id": "gls"}})])
    assert len(record(tenant, [sale])) == 1


def test_a_zero_quantity_line_records_no_event(tenant, register):
    assert record(tenant, [make_sale(tenant, register, [line("1001", 0)])]) == []


def test_the_sale_stock_location_is_the_one_moved(tenant, register):
    warehouse = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="wh-1")
    record(tenant, [make_sale(tenant, register, [line("1001", 1)], stock_location=warehouse)])
    assert level(warehouse, "1001") == -1
    assert not StockLevel.objects.filter(stock_location=tenant.stock_location).exists()


def test_many_sale_lines_take_a_handful_of_queries_not_one_per_line(tenant, register):
    sales = [make_sale(tenant, register, [line(f"p{i}-{j}", 1) for j in range(20)]) for i in range(5)]
    with CaptureQueriesContext(connection) as queries:
        events = record(tenant, sales)
    assert len(events) == 100
    # Savepoints, insert-missing, lock, update, insert events (SQLite splits it by its parameter limit), queues.
    assert len(queries.captured_queries) <= 12


def test_sale_events_enter_the_stock_event_queues_with_type_and_location(tenant, register):
    everything = ExportQueue.objects.create(
        account=tenant.account, name="all", entity_type="stock_events", trigger=Trigger.DAILY
    )
    no_sales = ExportQueue.objects.create(
        account=tenant.account,
        name="no sales",
        entity_type="stock_events",
        trigger=Trigger.DAILY,
        filters={"ignore_stock_event_types": ["sale"]},
    )
    [sold] = record(tenant, [make_sale(tenant, register, [line("1001", 1)])])
    [returned] = record(tenant, [make_sale(tenant, register, [line("1001", -1)], kind=SaleKind.RETURN)])
    assert set(ExportItem.objects.filter(queue=everything).values_list("object_id", flat=True)) == {
        sold.pk,
        returned.pk,
    }
    assert list(ExportItem.objects.filter(queue=no_sales).values_list("object_id", "element_key")) == [
        (returned.pk, f"stock-event-{returned.pk}")
    ]


# --- End to end: POST /api/v1/pos/checkouts ----------------------------------------------------------------


def test_posting_a_checkout_moves_stock_and_records_sale_events(pos, tenant, register):
    StockLevel.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, product_id="p-1", quantity=10
    )
    assert pos.post("checkouts", checkout_body(lines=[("p-1", "tops", 3, 100)])).status_code == 201
    assert level(tenant.stock_location, "p-1") == 7
    [event] = StockEvent.objects.all()
    assert (event.type, event.adjustment, event.sale_id) == ("sale", -3, "co-1-s1")

    # An exchange: one T-shirt (p-2) sold, one p-1 returned.
    assert pos.post("checkouts", exchange_body(identifier="co-2")).status_code == 201
    assert level(tenant.stock_location, "p-1") == 8
    assert level(tenant.stock_location, "p-2") == -1
    assert set(StockEvent.objects.filter(sale_id__startswith="co-2").values_list("type", "sale_id")) == {
        ("sale", "co-2-sale"),
        ("return", "co-2-return"),
    }


def test_a_voided_checkout_moves_no_stock(pos, tenant, register):
    assert pos.post("checkouts", checkout_body(voided=True)).status_code == 201
    assert not StockEvent.objects.exists() and not StockLevel.objects.exists()
