"""POST /api/v1/pos/checkouts and the reads /api/v1/checkouts/ and /api/v1/sales/ (spec: Checkout, Sale)."""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Register
from exports.models import ExportDelivery, ExportItem
from ledger.models import Checkout, Expense, RegisterPeriod, Sale, SaleLine, SalePayment, SaleTax, StockEvent
from ledger.services.checkouts import record_checkout
from tests.factories import MarketFactory, RegisterFactory, StockLocationFactory
from tests.support.api import AdminApi, PosApi, error_fields, errors_of, results
from tests.support.checkouts import (
    checkout_body,
    exchange_body,
    export_queue,
    post_ok,
)
from tests.support.tenants import Tenant

pytestmark = pytest.mark.usefixtures("register")


# --- Posting: created, replayed, conflicting ------------------------------------------------------------


def test_a_new_checkout_is_created_with_its_sale(pos: PosApi) -> None:
    body = post_ok(pos, checkout_body())

    assert body["created"] is True
    assert body["identifier"] == "co-1"
    assert body["register"] == "reg-1"
    assert body["stock_location"] == "shop-1"
    assert [(s["identifier"], s["kind"], s["total"]) for s in body["sales"]] == [("co-1-s1", "sale", 200)]


def test_posting_the_same_checkout_again_answers_the_stored_one(pos: PosApi) -> None:
    first = post_ok(pos, checkout_body())

    again = pos.post("checkouts", checkout_body())

    assert again.status_code == 200
    assert again.json()["created"] is False
    assert again.json()["id"] == first["id"]
    assert Checkout.objects.count() == 1
    assert Sale.objects.count() == 1
    assert SaleLine.objects.count() == 1


def test_a_replay_with_reordered_keys_and_reformatted_numbers_is_the_same_checkout(pos: PosApi) -> None:
    body = checkout_body()
    post_ok(pos, body)
    text = json.dumps(body, sort_keys=True, indent=2).replace('"total": 200', '"total": 200.000')

    again = pos.post("checkouts", text)

    assert again.status_code == 200
    assert again.json()["created"] is False


def test_a_different_body_under_a_used_identifier_is_a_conflict(pos: PosApi) -> None:
    post_ok(pos, checkout_body())

    response = pos.post("checkouts", checkout_body(lines=[("p-1", "tops", 3, 100)], sale_identifier="other-sale"))

    assert response.status_code == 409
    assert error_fields(response) == {"identifier"}
    assert Checkout.objects.count() == 1


def test_a_sale_identifier_used_by_another_checkout_is_a_conflict(pos: PosApi) -> None:
    post_ok(pos, checkout_body(identifier="co-1", sale_identifier="sale-1"))

    response = pos.post("checkouts", checkout_body(identifier="co-2", sale_identifier="sale-1"))

    assert response.status_code == 409
    assert error_fields(response) == {"sales[0].identifier"}
    assert Checkout.objects.count() == 1


def test_two_sales_of_one_checkout_with_one_identifier_are_refused(pos: PosApi) -> None:
    body = exchange_body()
    body["sales"][1]["identifier"] = body["sales"][0]["identifier"]

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert errors_of(response) == {"sales[1].identifier": "duplicate"}


def test_the_same_checkout_identifier_may_be_used_by_another_account(
    pos: PosApi, other_tenant: Tenant, client: Any
) -> None:
    post_ok(pos, checkout_body())
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-1")

    response = PosApi(client, other_tenant).post("checkouts", checkout_body())

    assert response.status_code == 201


def test_a_checkout_needs_the_pos_scope(pos: PosApi, tenant: Tenant, client: Any) -> None:
    response = client.post(
        f"/api/v1/pos/checkouts?{tenant.query(tenant.admin_key)}",
        json.dumps(checkout_body()),
        content_type="application/json",
    )

    assert response.status_code == 403
    assert Checkout.objects.count() == 0


# --- What is stored -----------------------------------------------------------------------------------


def test_the_sale_row_keeps_kind_total_timestamp_and_period(pos: PosApi, register: Register) -> None:
    post_ok(pos, checkout_body())

    sale = Sale.objects.get()
    assert sale.kind == "sale"
    assert sale.total == Decimal("200")
    assert sale.timestamp.isoformat() == "2025-01-15T09:05:00+00:00"
    assert sale.period == RegisterPeriod.objects.get(register=register, closed_at__isnull=True)
    assert sale.checkout.period_id == sale.period_id
    assert sale.stock_location.identifier == "shop-1"


def test_each_line_item_becomes_a_sale_line_with_its_figures(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 2, 100), ("p-2", None, 1, "49.95")])
    line = body["sales"][0]["basket"]["line_items"][0]
    line.update(base_price=250, retail_price=250, sub_total=200, cost_price=60)
    basket = body["sales"][0]["basket"]
    basket.update(base_price=299.95, total_discounts=50)
    post_ok(pos, body)

    rows = {row.product_group: row for row in SaleLine.objects.all()}
    assert set(rows) == {"tops", ""}
    tops = rows["tops"]
    assert (tops.quantity, tops.base_price, tops.sub_total, tops.total) == (2, 250, 200, 200)
    assert tops.total_discounts == Decimal(50)
    assert (tops.vat_amount, tops.total_tax_amount, tops.sales_tax_amount) == (Decimal(40), Decimal(40), 0)
    # Amounts (docs/amounts.md): margin_total the net amount, margin the net less the line's cost_price.
    assert tops.margin_total == Decimal(200 - 40)
    assert tops.margin == Decimal(200 - 40 - 60)
    assert rows[""].margin_total == Decimal("49.95") - rows[""].vat_amount
    assert rows[""].margin == rows[""].margin_total  # no cost known: nothing to take off
    assert {row.kind for row in rows.values()} == {"sale"}


def test_a_posted_margin_total_is_kept_and_the_margin_is_it_less_the_cost(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["line_items"][0].update(margin_total=150, cost_price=100)
    post_ok(pos, body)

    row = SaleLine.objects.get()
    assert (row.margin_total, row.margin) == (Decimal(150), Decimal(50))


def test_a_posted_margin_is_kept(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["line_items"][0].update(margin=12.5, cost_price=1000)
    post_ok(pos, body)

    assert SaleLine.objects.get().margin == Decimal("12.5")


def test_only_successful_payments_become_payment_rows(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "99.75")], payments=[("cash", 100), ("cash.rounding", "-0.25")])
    body["payments"].append(
        {"amount": 99.75, "identifier": "pay-x", "payment_type": "card.external", "success": False, "error": "Declined"}
    )
    body["payments"][0]["foreign_currency"] = "EUR"
    body["payments"][0]["foreign_currency_amount"] = 13.4
    post_ok(pos, body)

    rows = sorted(
        SalePayment.objects.filter(product_group=None).values_list(
            "payment_type", "amount", "foreign_currency", "foreign_currency_amount"
        )
    )
    assert rows == [("cash", Decimal(100), "EUR", Decimal("13.4")), ("cash.rounding", Decimal("-0.25"), "", None)]


def test_each_payment_is_stored_with_its_parts_by_product_group(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "60.00"), ("p-2", None, 1, "39.75")], payments=[("cash", 100)])
    body["payments"].append({"amount": -0.25, "identifier": "r", "payment_type": "cash.rounding", "success": True})
    body["payments"][0]["foreign_currency"] = "EUR"
    body["payments"][0]["foreign_currency_amount"] = 13.4
    post_ok(pos, body)

    rows = sorted(
        SalePayment.objects.exclude(product_group=None).values_list(
            "payment_type", "product_group", "amount", "foreign_currency", "foreign_currency_amount"
        )
    )
    # By each group's share of the 99.75 (39.75 : 60.00), rounded to the cent; the last group takes the rest.
    assert rows == [
        ("cash", "", Decimal("39.85"), "EUR", Decimal("5.34")),  # 100 x 39.75 / 99.75 = 39.849..; 13.4 x .. = 5.339..
        ("cash", "tops", Decimal("60.15"), "EUR", Decimal("8.06")),
        ("cash.rounding", "", Decimal("-0.10"), "", None),  # -0.25 x 39.75 / 99.75 = -0.0996..
        ("cash.rounding", "tops", Decimal("-0.15"), "", None),
    ]


def test_summary_taxes_and_line_taxes_become_tax_rows(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, 100), ("p-2", None, 1, 100)])
    body["sales"][0]["basket"]["taxes"][0] = {"amount": 40, "rate": 0.25, "tax_name": "Moms", "type": "vat"}
    post_ok(pos, body)

    rows = set(SaleTax.objects.values_list("product_group", "name", "amount"))
    assert rows == {("", "VAT", Decimal(20)), (None, "Moms", Decimal(40)), ("tops", "VAT", Decimal(20))}


def test_a_checkout_books_into_the_open_period_of_its_register(pos: PosApi, register: Register) -> None:
    post_ok(pos, checkout_body(identifier="co-1"))
    post_ok(pos, checkout_body(identifier="co-2"))

    assert RegisterPeriod.objects.filter(register=register).count() == 1
    assert {c.period_id for c in Checkout.objects.all()} == {RegisterPeriod.objects.get().pk}


def test_a_checkout_takes_a_bounded_number_of_queries(pos: PosApi) -> None:
    lines = [(f"p-{n}", "tops", 1, 10) for n in range(50)]
    post_ok(pos, checkout_body(identifier="co-0", lines=lines[:1]))

    with CaptureQueriesContext(connection) as queries:
        post_ok(pos, checkout_body(identifier="co-1", lines=lines))

    assert len(queries) <= 30  # independent of the number of lines


# --- Documents (the exported JSON) ---------------------------------------------------------------------


def test_the_sale_document_is_the_spec_sale_model(pos: PosApi) -> None:
    body = checkout_body()
    body["receipt_metadata"] = {"footer": "Tak!", "vat_number": "DK12345678"}
    body["sales"][0]["fiscal_rules_data"] = {"signature": "abc"}
    post_ok(pos, body)

    document = Sale.objects.get().document
    assert set(document) == {
        "base_currency_code",
        "identifier",
        "payments",
        "receipt_metadata",
        "sequence_number",
        "source",
        "summary",
        "timing",
        "voided",
        "checkout_identifier",
        "fiscal_rules_data",
    }
    assert document["identifier"] == "co-1-s1"
    assert document["checkout_identifier"] == "co-1"
    assert document["summary"]["line_items"][0]["id"] == "p-1"
    assert document["payments"][0]["payment_type"] == "card.external"
    assert document["voided"] is False
    assert document["fiscal_rules_data"] == {"signature": "abc"}


def test_the_sale_document_has_no_receipt_metadata_or_fiscal_data_when_none_was_sent(pos: PosApi) -> None:
    post_ok(pos, checkout_body())

    document = Sale.objects.get().document
    assert "receipt_metadata" not in document
    assert "fiscal_rules_data" not in document


def test_the_source_is_filled_in_from_the_records(pos: PosApi, tenant: Tenant, register: Register) -> None:
    register.name = "Till 1"
    register.save(update_fields=["name"])
    post_ok(pos, checkout_body())

    source = Checkout.objects.get().document["source"]
    assert source == {
        "register_id": "reg-1",
        "register_name": "Till 1",
        "shop_id": "shop-1",
        "shop_name": tenant.stock_location.name,
        "market_id": "dk",
        "market_name": tenant.market.name,
        "cashier_id": "cashier-7",
        "cashier_name": "AB",
    }
    assert Sale.objects.get().document["source"] == source


def test_a_posted_shop_name_is_kept(pos: PosApi) -> None:
    body = checkout_body()
    body["source"]["shop_name"] = "Strøget"
    post_ok(pos, body)

    assert Checkout.objects.get().document["source"]["shop_name"] == "Strøget"


def test_the_checkout_document_is_the_cleaned_body(pos: PosApi) -> None:
    body = checkout_body()
    body["unknown_field"] = "ignored"
    post_ok(pos, body)

    document = Checkout.objects.get().document
    assert "unknown_field" not in document
    assert document["voided"] is False
    assert document["timing"]["timestamp_date_string"] == "2025-01-15-10-05"
    assert document["sales"][0]["basket"]["total"] == 200


def test_unicode_text_is_stored_as_sent(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["line_items"][0]["name"] = {"da": "Trøje 👕", "ja": "シャツ"}
    body["sales"][0]["basket"]["comment"] = "Kunde ønskede gavekvittering"
    post_ok(pos, body)

    summary = Sale.objects.get().document["summary"]
    assert summary["line_items"][0]["name"] == {"da": "Trøje 👕", "ja": "シャツ"}
    assert summary["comment"] == "Kunde ønskede gavekvittering"


# --- Timing -------------------------------------------------------------------------------------------


def test_timing_strings_are_derived_in_the_posted_time_zone(pos: PosApi) -> None:
    post_ok(pos, checkout_body(timestamp=1736931900))

    timing = Sale.objects.get().document["timing"]
    assert timing["timezone"] == "Europe/Copenhagen"
    assert timing["timestamp_string"] == "2025-01-15T10:05:00.000+01:00"
    assert timing["timestamp_date_string"] == "2025-01-15-10-05"
    assert timing["timestamp_week_string"] == "2025-03"


def test_the_week_string_uses_the_iso_week_year(pos: PosApi) -> None:
    post_ok(pos, checkout_body(timestamp=1735552800))  # 2024-12-30T10:00:00Z, a Monday of ISO week 2025-01

    timing = Sale.objects.get().document["timing"]
    assert timing["timestamp_date_string"] == "2024-12-30-11-00"
    assert timing["timestamp_week_string"] == "2025-01"


def test_without_a_time_zone_the_account_time_zone_is_used(pos: PosApi, tenant: Tenant) -> None:
    tenant.account.timezone = "America/New_York"
    tenant.account.save(update_fields=["timezone"])

    post_ok(pos, checkout_body(timezone=None, timestamp=1736931900))

    timing = Sale.objects.get().document["timing"]
    assert timing["timezone"] == "America/New_York"
    assert timing["timestamp_string"] == "2025-01-15T04:05:00.000-05:00"


def test_timing_strings_sent_by_the_register_are_kept(pos: PosApi) -> None:
    body = checkout_body()
    body["timing"]["timestamp_week_string"] = "2025-3"
    post_ok(pos, body)

    assert Sale.objects.get().document["timing"]["timestamp_week_string"] == "2025-3"


def test_an_unknown_time_zone_is_refused(pos: PosApi) -> None:
    response = pos.post("checkouts", checkout_body(timezone="Mars/Olympus_Mons"))

    assert response.status_code == 400
    assert error_fields(response) == {"timing.timezone"}


def test_a_timestamp_in_milliseconds_is_refused(pos: PosApi) -> None:
    response = pos.post("checkouts", checkout_body(timestamp=1736931900000))

    assert response.status_code == 400
    assert error_fields(response) == {"timing.timestamp"}


def test_a_fractional_timestamp_is_kept_to_the_microsecond(pos: PosApi) -> None:
    post_ok(pos, checkout_body(timestamp=Decimal("1736931900.123456")))

    assert Sale.objects.get().timestamp.microsecond == 123456


# --- Customers -----------------------------------------------------------------------------------------


CUSTOMER = {
    "identifier": "C-42",
    "name": "Jane Doe",
    "street": "Vesterbrogade 1",
    "city": "København",
    "postal_code": "1620",
    "country_code": "DK",
    "email": "jane@example.com",
    "phone": "+4512345678",
}


def test_only_the_identifier_of_a_private_customer_is_stored(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["customer"] = dict(CUSTOMER)
    post_ok(pos, body)

    assert Sale.objects.get().document["summary"]["customer"] == {"identifier": "C-42"}
    assert Checkout.objects.get().document["sales"][0]["basket"]["customer"] == {"identifier": "C-42"}


def test_a_business_customer_is_stored_with_name_and_address(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["customer"] = {**CUSTOMER, "organization_number": "DK12345678"}
    post_ok(pos, body)

    assert Sale.objects.get().document["summary"]["customer"] == {**CUSTOMER, "organization_number": "DK12345678"}


def test_a_blank_organization_number_is_a_private_customer(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["basket"]["customer"] = {**CUSTOMER, "organization_number": " "}
    post_ok(pos, body)

    assert Sale.objects.get().document["summary"]["customer"] == {"identifier": "C-42"}


# --- Source ---------------------------------------------------------------------------------------------


def test_an_unknown_register_is_refused(pos: PosApi) -> None:
    response = pos.post("checkouts", checkout_body(register_id="reg-404"))

    assert response.status_code == 400
    assert error_fields(response) == {"source.register_id"}


def test_a_register_of_another_account_is_refused(pos: PosApi, other_tenant: Tenant) -> None:
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-2")

    response = pos.post("checkouts", checkout_body(register_id="reg-2"))

    assert response.status_code == 400
    assert error_fields(response) == {"source.register_id"}


def test_a_shop_other_than_the_registers_is_refused(pos: PosApi, tenant: Tenant) -> None:
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    body = checkout_body()
    body["source"]["shop_id"] = "shop-2"

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert error_fields(response) == {"source.shop_id"}


def test_a_market_other_than_the_registers_is_refused(pos: PosApi) -> None:
    body = checkout_body()
    body["source"]["market_id"] = "se"

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert error_fields(response) == {"source.market_id"}


def test_a_currency_other_than_the_markets_is_refused(pos: PosApi) -> None:
    response = pos.post("checkouts", checkout_body(currency="EUR"))

    assert response.status_code == 400
    assert error_fields(response) == {"base_currency_code"}


def test_amounts_compare_at_the_minor_unit_of_the_currency(pos: PosApi, tenant: Tenant) -> None:
    market = MarketFactory(account=tenant.account, identifier="jp", currency="JPY")
    shop = StockLocationFactory(account=tenant.account, market=market, identifier="tokyo")
    RegisterFactory(account=tenant.account, stock_location=shop, identifier="reg-jp")
    body = checkout_body(register_id="reg-jp", currency="JPY", vat_rate="0.10", lines=[("p-1", None, 1, 1100)])
    body["payments"][0]["amount"] = 1100.4  # below half a yen: the same amount

    post_ok(pos, body)

    assert Sale.objects.get().base_currency_code == "JPY"


# --- Returns, exchanges, expenses, shipping ------------------------------------------------------------


def test_a_return_is_stored_as_a_return(pos: PosApi) -> None:
    post_ok(pos, checkout_body(is_return=True))

    sale = Sale.objects.get()
    assert sale.kind == "return"
    assert sale.total == Decimal(-200)
    assert SaleLine.objects.get().kind == "return"
    assert SalePayment.objects.get(product_group=None).amount == Decimal(-200)


def test_an_exchange_stores_a_sale_and_a_return_with_their_own_payments(pos: PosApi) -> None:
    body = post_ok(pos, exchange_body())

    assert [(s["identifier"], s["kind"]) for s in body["sales"]] == [("co-x-sale", "sale"), ("co-x-return", "return")]
    payments = dict(SalePayment.objects.filter(product_group=None).values_list("sale__identifier", "amount"))
    assert payments == {"co-x-sale": Decimal(300), "co-x-return": Decimal(-100)}
    documents = {s.identifier: s.document for s in Sale.objects.all()}
    assert {d["checkout_identifier"] for d in documents.values()} == {"co-x"}
    assert documents["co-x-return"]["payments"][0]["amount"] == -100


def test_an_exchange_without_payments_on_each_sale_is_stored_with_a_warning(pos: PosApi) -> None:
    # Per-sale payments are this service's extension, not the spec's: not a reason to refuse.
    body = exchange_body()
    del body["sales"][1]["payments"]

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert {w["field"]: w["code"] for w in response.json()["warnings"]} == {"sales[1].payments": "payments_not_split"}


def test_an_exchange_whose_sale_payments_differ_from_the_sale_is_stored_with_a_warning(pos: PosApi) -> None:
    body = exchange_body()
    body["sales"][0]["payments"][0]["amount"] = 250

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert {w["field"]: w["code"] for w in response.json()["warnings"]} == {
        "sales[0].payments": "sale_payments_mismatch"
    }


def test_an_exchange_whose_checkout_payments_do_not_cover_both_sales_is_refused(pos: PosApi) -> None:
    body = exchange_body()
    body["payments"][0]["amount"] = 100  # the net of the exchange is 200

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert errors_of(response) == {"payments": "payments_short"}


def test_a_checkout_with_two_returns_is_refused(pos: PosApi) -> None:
    body = exchange_body()
    second = copy.deepcopy(body["sales"][1])
    second["identifier"] = "co-x-return-2"
    body["sales"].append(second)
    body["payments"][0]["amount"] = 100

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert errors_of(response) == {"sales[2].basket.is_return": "one_return"}


def expense_body(*, expense_id: str = "coffee", amount: int = -50) -> dict[str, Any]:
    body = checkout_body(identifier="co-e", lines=[("", None, 1, amount)], payments=[("cash", amount)])
    line = body["sales"][0]["basket"]["line_items"][0]
    del line["id"]
    line["behavior"] = {"expense": {"identifier": expense_id, "image_urls": ["https://img.example.com/r.jpg"]}}
    return body


def test_an_expense_is_stored_as_an_expense(pos: PosApi, tenant: Tenant) -> None:
    Expense.objects.create(account=tenant.account, expense_id="coffee", name="Coffee")

    post_ok(pos, expense_body())

    sale = Sale.objects.get()
    assert sale.kind == "expense"
    assert sale.total == Decimal(-50)
    assert SaleLine.objects.get().kind == "expense"
    assert SalePayment.objects.get(product_group=None).amount == Decimal(-50)


def test_an_expense_not_configured_for_the_account_is_stored_with_a_warning(pos: PosApi, other_tenant: Tenant) -> None:
    Expense.objects.create(account=other_tenant.account, expense_id="coffee", name="Coffee")

    response = pos.post("checkouts", expense_body())

    assert response.status_code == 201
    assert {w["field"]: w["code"] for w in response.json()["warnings"]} == {
        "sales[0].basket.line_items[0].behavior.expense.identifier": "unknown_expense"
    }


def test_ecommerce_groups_are_shown_on_the_sale(pos: PosApi, api: AdminApi) -> None:
    body = checkout_body(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 50), ("p-3", None, 1, 20)])
    lines = body["sales"][0]["basket"]["line_items"]
    lines[0]["ecom_id"] = "web-1"
    lines[1]["ecom_id"] = "web-1"
    lines[1]["behavior"] = {"shipping": {"method_id": "gls", "address": {"city": "Aarhus"}}}
    post_ok(pos, body)

    (sale,) = results(api.get("sales"))

    assert sale["ecommerce_groups"] == [
        {
            "ecom_id": "web-1",
            "line_item_ids": ["li-1", "li-2"],
            "shipping": {"method_id": "gls", "address": {"city": "Aarhus"}},
        }
    ]


def test_an_ecommerce_group_without_a_shipping_item_is_refused(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", None, 1, 100), ("p-2", None, 1, 50)])
    body["sales"][0]["basket"]["line_items"][1]["ecom_id"] = "web-1"

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert errors_of(response) == {"sales[0].basket.line_items[1].behavior.shipping": "shipping_required"}


# --- Voided checkouts ----------------------------------------------------------------------------------


def test_a_voided_checkout_is_recorded_without_ledger_rows(pos: PosApi) -> None:
    body = checkout_body(voided=True, payments=[])

    post_ok(pos, body)

    checkout = Checkout.objects.get()
    assert checkout.voided is True
    assert checkout.document["voided"] is True
    sale = Sale.objects.get()
    assert sale.voided is True
    assert sale.document["voided"] is True
    assert (SaleLine.objects.count(), SalePayment.objects.count(), SaleTax.objects.count()) == (0, 0, 0)


def test_a_voided_checkout_moves_no_stock(pos: PosApi) -> None:

    post_ok(pos, checkout_body(voided=True, payments=[]))

    assert StockEvent.objects.count() == 0


def test_a_voided_checkout_is_exported_as_voided(pos: PosApi, tenant: Tenant) -> None:
    export_queue(tenant, "sales")

    post_ok(pos, checkout_body(voided=True, payments=[]))

    item = ExportItem.objects.get()
    assert Sale.objects.get(pk=item.object_id).document["voided"] is True


def test_a_voided_checkout_still_needs_a_total_tax_amount_that_is_its_parts(pos: PosApi) -> None:
    body = checkout_body(voided=True, payments=[])
    body["sales"][0]["basket"]["total_tax_amount"] = 1

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert "sales[0].basket.total_tax_amount" in error_fields(response)


# --- Exports ----------------------------------------------------------------------------------------------


def test_the_checkout_and_each_sale_are_put_into_their_export_queues(pos: PosApi, tenant: Tenant) -> None:
    checkouts_queue = export_queue(tenant, "checkouts")
    sales_queue = export_queue(tenant, "sales")

    post_ok(pos, exchange_body())

    checkout_items = ExportItem.objects.filter(queue=checkouts_queue)
    sale_items = ExportItem.objects.filter(queue=sales_queue)
    assert [(i.element_key, i.entity_type) for i in checkout_items] == [("co-x", "checkouts")]
    assert sorted(i.element_key for i in sale_items) == ["co-x-return", "co-x-sale"]
    assert {i.object_id for i in sale_items} == set(Sale.objects.values_list("pk", flat=True))


def test_a_checkout_into_an_open_period_goes_to_the_queues_its_lock_read_as_their_filters_say(
    pos: PosApi, tenant: Tenant
) -> None:
    post_ok(pos, checkout_body(identifier="co-0"))  # the period is open: the next lock reads the queues with it

    here = export_queue(tenant, "sales", name="shop-1 sales", filters={"stock_locations": ["shop-1"]})
    export_queue(tenant, "sales", name="se sales", filters={"markets": ["se"]})
    export_queue(tenant, "sales", name="sales off", enabled=False)
    stock = export_queue(tenant, "stock_events", trigger="realtime", filters={"ignore_stock_event_types": ["return"]})

    post_ok(pos, checkout_body(identifier="co-1"))

    items = list(ExportItem.objects.order_by("pk"))
    assert [(i.queue_id, i.element_key, i.delivery_id is None) for i in items] == [
        (here.pk, "co-1-s1", True),
        (stock.pk, f"stock-event-{StockEvent.objects.latest('pk').pk}", False),
    ]
    assert ExportDelivery.objects.get(pk=items[1].delivery_id).queue_id == stock.pk


def test_a_replayed_checkout_is_not_exported_again(pos: PosApi, tenant: Tenant) -> None:
    export_queue(tenant, "checkouts")
    export_queue(tenant, "sales")
    post_ok(pos, checkout_body())

    pos.post("checkouts", checkout_body())

    assert ExportItem.objects.count() == 2


def test_a_refused_checkout_is_not_exported(pos: PosApi, tenant: Tenant) -> None:
    export_queue(tenant, "checkouts")

    pos.post("checkouts", checkout_body(currency="EUR"))

    assert ExportItem.objects.count() == 0


def test_export_items_are_written_in_the_transaction_of_the_checkout(tenant: Tenant, register: Register) -> None:

    export_queue(tenant, "checkouts")
    body = checkout_body()
    with pytest.raises(RuntimeError), transaction.atomic():
        record_checkout(account=tenant.account, body=json.loads(json.dumps(body), parse_float=Decimal))
        assert ExportItem.objects.count() == 1
        raise RuntimeError("roll back")

    assert (Checkout.objects.count(), ExportItem.objects.count()) == (0, 0)


# --- Hostile input -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        "{",
        '{"identifier": "co-1", "sales": [',
        "[]",
        '"a string"',
        "null",
        "42",
        "{}",
        '{"identifier": 5}',
        '{"identifier": "co-1", "sales": "many"}',
        '{"identifier": "co-1", "timing": {"timestamp": NaN}}',
        '{"identifier": "\\u0000"}',
    ],
)
def test_malformed_bodies_are_refused_with_400(pos: PosApi, raw: str) -> None:
    response = pos.post("checkouts", raw)

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        (("timing", "timestamp"), "yesterday", "timing.timestamp"),
        (("timing", "timestamp"), -1, "timing.timestamp"),
        (("base_currency_code",), "KRONER", "base_currency_code"),
        (("payments", 0, "amount"), "200", "payments[0].amount"),
        (("payments", 0, "success"), "yes", "payments[0].success"),
        (("sales", 0, "sequence_number"), 1.5, "sales[0].sequence_number"),
        (("sales", 0, "basket", "total"), 1e300, "sales[0].basket.total"),
        (("sales", 0, "basket", "line_items"), {}, "sales[0].basket.line_items"),
        (("sales", 0, "basket", "line_items", 0, "quantity"), None, "sales[0].basket.line_items[0].quantity"),
        (("sales", 0, "basket", "is_return"), "false", "sales[0].basket.is_return"),
        (("sales",), [], "sales"),
        (("source",), "reg-1", "source"),
    ],
)
def test_a_field_of_the_wrong_type_is_named(pos: PosApi, path: tuple[Any, ...], value: Any, field: str) -> None:
    body = checkout_body()
    target: Any = body
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert field in error_fields(response)


@pytest.mark.parametrize("name", ["identifier", "timing", "source", "base_currency_code", "payments", "sales"])
def test_a_missing_required_field_is_named(pos: PosApi, name: str) -> None:
    body = checkout_body()
    del body[name]

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert name in error_fields(response)


@pytest.mark.parametrize("text", ["nul \x00 byte", "lone \ud83d surrogate"])
def test_unstorable_text_in_a_free_form_field_is_refused(pos: PosApi, text: str) -> None:
    body = checkout_body()
    body["payments"][0]["metadata"] = {"note": text}
    body["sales"][0]["fiscal_rules_data"] = {text: 1}

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    fields = error_fields(response)
    assert "payments[0].metadata.note" in fields
    assert any(field.startswith("sales[0].fiscal_rules_data.") for field in fields)
    assert Checkout.objects.count() == 0


def test_a_deeply_nested_body_is_refused(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"][0]["fiscal_rules_data"] = json.loads("[" * 500 + "]" * 500)

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    [field] = error_fields(response)
    assert field.startswith("sales[0].fiscal_rules_data[0]")
    assert response.json()["errors"][0]["code"] == "too_deep"


def test_a_large_line_cost_price_is_stored_as_a_line_amount(pos: PosApi) -> None:
    # cost_price is the line's (not multiplied by the quantity): any amount the spec's limits allow fits.
    body = checkout_body(lines=[("p-1", None, 900_000_000, "0.01")])
    body["sales"][0]["basket"]["line_items"][0]["cost_price"] = 900_000_000_000

    post_ok(pos, body)

    row = SaleLine.objects.get()
    assert row.margin == row.margin_total - 900_000_000_000


def test_too_many_sales_are_refused(pos: PosApi) -> None:
    body = checkout_body()
    body["sales"] = [dict(body["sales"][0], identifier=f"s-{n}") for n in range(11)]

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert error_fields(response) == {"sales"}


# --- Reads -----------------------------------------------------------------------------------------------


def test_checkouts_are_listed_newest_first_with_their_sales(pos: PosApi, api: AdminApi) -> None:
    post_ok(pos, checkout_body(identifier="co-1", timestamp=1736931900))
    post_ok(pos, checkout_body(identifier="co-2", timestamp=1736935500))

    listed = results(api.get("checkouts"))

    assert [c["identifier"] for c in listed] == ["co-2", "co-1"]
    assert listed[0]["sales"][0]["identifier"] == "co-2-s1"
    assert listed[0]["document"]["identifier"] == "co-2"


def test_a_checkout_is_read_by_id(pos: PosApi, api: AdminApi) -> None:
    created = post_ok(pos, checkout_body())

    response = api.get(f"checkouts/{created['id']}")

    assert response.status_code == 200
    assert response.json()["identifier"] == "co-1"


def test_a_sale_is_read_by_id(pos: PosApi, api: AdminApi) -> None:
    created = post_ok(pos, checkout_body())

    response = api.get(f"sales/{created['sales'][0]['id']}")

    assert response.status_code == 200
    body = response.json()
    assert (body["identifier"], body["checkout_identifier"], body["kind"], body["is_return"]) == (
        "co-1-s1",
        "co-1",
        "sale",
        False,
    )
    assert body["total"] == 200
    assert body["document"]["summary"]["total"] == 200


def test_another_accounts_checkout_and_sale_are_not_found(pos: PosApi, other_tenant: Tenant, client: Any) -> None:
    created = post_ok(pos, checkout_body())
    other = AdminApi(client, other_tenant)

    assert other.get(f"checkouts/{created['id']}").status_code == 404
    assert other.get(f"sales/{created['sales'][0]['id']}").status_code == 404
    assert results(other.get("checkouts")) == []
    assert results(other.get("sales")) == []


def test_a_non_numeric_id_is_not_found(api: AdminApi) -> None:
    assert api.get("sales/abc").status_code == 404
    assert api.get("checkouts/99999999999999999999999").status_code == 404


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({}, ["co-x-return", "co-x-sale", "co-1-s1"]),
        ({"is_return": "true"}, ["co-x-return"]),
        ({"is_return": "false"}, ["co-x-sale", "co-1-s1"]),
        ({"kind": "sale"}, ["co-x-sale", "co-1-s1"]),
        ({"checkout_identifier": "co-x"}, ["co-x-return", "co-x-sale"]),
        ({"identifier": "co-1-s1"}, ["co-1-s1"]),
        ({"register": "reg-1"}, ["co-x-return", "co-x-sale", "co-1-s1"]),
        ({"register": "reg-2"}, []),
        ({"stock_location": "shop-1"}, ["co-x-return", "co-x-sale", "co-1-s1"]),
        ({"voided": "true"}, []),
        ({"voided": ""}, ["co-x-return", "co-x-sale", "co-1-s1"]),
        ({"from": "2025-01-15T10:00:00Z"}, ["co-x-return", "co-x-sale"]),
        ({"to": "2025-01-15T10:00:00Z"}, ["co-1-s1"]),
    ],
)
def test_sales_are_filtered(pos: PosApi, api: AdminApi, params: dict[str, str], expected: list[str]) -> None:
    post_ok(pos, checkout_body(identifier="co-1", timestamp=1736931900))  # 09:05Z
    x = exchange_body()
    x["timing"]["timestamp"] = 1736935500  # 10:05Z
    post_ok(pos, x)

    listed = results(api.get("sales", **params))

    assert [s["identifier"] for s in listed] == expected


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"voided": "true"}, ["co-v"]),
        ({"voided": "false"}, ["co-1"]),
        ({"identifier": "co-1"}, ["co-1"]),
        ({"from": "2025-01-15T09:05:00Z", "to": "2025-01-15T09:05:01Z"}, ["co-1"]),
    ],
)
def test_checkouts_are_filtered(pos: PosApi, api: AdminApi, params: dict[str, str], expected: list[str]) -> None:
    post_ok(pos, checkout_body(identifier="co-1", timestamp=1736931900))
    post_ok(pos, checkout_body(identifier="co-v", timestamp=1736935500, voided=True, payments=[]))

    assert [c["identifier"] for c in results(api.get("checkouts", **params))] == expected


@pytest.mark.parametrize("params", [{"from": "yesterday"}, {"voided": "maybe"}, {"kind": "refund"}])
def test_a_bad_filter_is_a_400(api: AdminApi, params: dict[str, str]) -> None:
    response = api.get("sales", **params)

    assert response.status_code == 400
    assert error_fields(response) == set(params)


def test_the_sales_list_is_paginated(pos: PosApi, api: AdminApi) -> None:
    for n in range(3):
        post_ok(pos, checkout_body(identifier=f"co-{n}"))

    body = api.get("sales", limit="2").json()

    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"]


def test_reads_need_the_admin_scope(pos: PosApi, tenant: Tenant, client: Any) -> None:
    response = client.get(f"/api/v1/sales/?{tenant.query(tenant.pos_key)}")

    assert response.status_code == 403
