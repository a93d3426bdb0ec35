"""A checkout is refused only for what is certainly wrong; a relation the spec does not state is a warning: the
checkout is stored and exported exactly as sent, its warnings stored with it, answered, listed and counted
(docs/amounts.md)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from accounts.models import Register
from ledger.models import Checkout, Sale, SaleLine, SalePayment
from tests.support.admin import admin_url
from tests.support.api import AdminApi, PosApi, error_fields
from tests.support.checkouts import checkout_body

pytestmark = pytest.mark.usefixtures("register")


def _discounts_read_differently(identifier: str = "co-1") -> dict[str, Any]:
    """A sale whose amounts a shop app reads its own way: base_price 200, sub_total 250, total_discounts 0."""
    body = checkout_body(identifier=identifier, lines=[("p-1", "tops", 1, "250.00")])
    basket = body["sales"][0]["basket"]
    basket["line_items"][0].update(base_price=200, retail_price=200)
    basket.update(base_price=200, total_discounts=0)
    return body


def _codes(warnings: list[dict[str, str]]) -> dict[str, str]:
    return {w["field"]: w["code"] for w in warnings}


def test_total_discounts_not_base_price_less_sub_total_is_stored_as_sent_with_a_warning(pos: PosApi) -> None:
    body = _discounts_read_differently()

    response = pos.post("checkouts", body)

    assert response.status_code == 201, response.json()
    assert _codes(response.json()["warnings"]) == {"sales[0].basket.total_discounts": "total_discounts_mismatch"}
    sale = Sale.objects.get()
    summary = sale.document["summary"]
    assert (summary["base_price"], summary["sub_total"], summary["total_discounts"]) == (200, 250, 0)
    assert _codes(sale.warnings) == {"sales[0].basket.total_discounts": "total_discounts_mismatch"}
    assert Checkout.objects.get().warnings == response.json()["warnings"]


def test_a_replay_answers_the_stored_warnings(pos: PosApi) -> None:
    body = _discounts_read_differently()
    first = pos.post("checkouts", body)

    again = pos.post("checkouts", body)

    assert again.status_code == 200
    assert again.json()["warnings"] == first.json()["warnings"]


def test_the_read_api_lists_a_sales_warnings_and_filters_by_them(pos: PosApi, api: AdminApi) -> None:
    pos.post("checkouts", _discounts_read_differently())
    pos.post("checkouts", checkout_body(identifier="co-2"))

    listed = api.get("sales").json()["results"]
    with_warnings = api.get("sales", has_warnings="true").json()["results"]
    without = api.get("sales", has_warnings="false").json()["results"]
    checkout = api.get("checkouts", identifier="co-1").json()["results"][0]

    assert {s["identifier"]: len(s["warnings"]) for s in listed} == {"co-1-s1": 1, "co-2-s1": 0}
    assert [s["identifier"] for s in with_warnings] == ["co-1-s1"]
    assert [s["identifier"] for s in without] == ["co-2-s1"]
    assert checkout["warnings"][0]["code"] == "total_discounts_mismatch"


def test_the_admin_shows_a_sales_warnings(pos: PosApi, admin_client: Client) -> None:
    pos.post("checkouts", _discounts_read_differently())
    sale = Sale.objects.get()

    page = admin_client.get(admin_url(Sale, "change", sale.pk))
    listed = admin_client.get(admin_url(Sale, "changelist"), {"has_warnings": "yes"})

    assert page.status_code == 200
    assert "sales[0].basket.total_discounts" in page.content.decode()
    assert "total_discounts_mismatch" in page.content.decode()
    assert sale.identifier in listed.content.decode()


def test_warnings_are_counted_in_metrics_by_code(pos: PosApi) -> None:
    pos.post("checkouts", _discounts_read_differently("co-1"))
    pos.post("checkouts", _discounts_read_differently("co-2"))

    response = Client().get("/metrics")

    samples = {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.content.decode())
        for sample in family.samples
    }
    assert samples[("retail_sale_warnings", (("account", "acme"), ("code", "total_discounts_mismatch")))] == 2


def test_a_line_total_not_sub_total_plus_sales_tax_is_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")])
    line = body["sales"][0]["basket"]["line_items"][0]
    line["sub_total"] = 90.0  # a shop app with the discount left out of sub_total
    body["sales"][0]["basket"]["sub_total"] = 90.0

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert set(_codes(response.json()["warnings"]).values()) == {"line_total_mismatch", "total_discounts_mismatch"}
    assert SaleLine.objects.get().sub_total == Decimal("90.00")


def test_a_summary_amount_not_the_sum_of_its_lines_is_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")])
    body["sales"][0]["basket"]["base_price"] = 120.0
    body["sales"][0]["basket"]["total_discounts"] = 20.0

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert _codes(response.json()["warnings"]) == {"sales[0].basket.base_price": "line_sum_mismatch"}


def test_a_per_unit_retail_price_is_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 2, "199.95")])
    body["sales"][0]["basket"]["line_items"][0]["retail_price"] = 199.95

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    [warning] = response.json()["warnings"]
    assert (warning["field"], warning["code"]) == (
        "sales[0].basket.line_items[0].retail_price",
        "retail_price_per_unit",
    )
    assert "399.90" in warning["message"]


def test_a_margin_disagreeing_with_the_cost_is_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")])
    body["sales"][0]["basket"]["line_items"][0].update(margin_total=80, cost_price=50, margin=40)

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert _codes(response.json()["warnings"]) == {"sales[0].basket.line_items[0].margin": "margin_mismatch"}
    assert SaleLine.objects.get().margin == 40  # as sent


def test_payments_beyond_the_total_are_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")], payments=[("cash", "120.00")])

    response = pos.post("checkouts", body)

    assert response.status_code == 201
    assert _codes(response.json()["warnings"]) == {"payments": "payments_exceed_total"}


def test_payments_that_do_not_cover_the_total_are_refused(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")], payments=[("cash", "80.00")])

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert error_fields(response) == {"payments"}
    assert response.json()["errors"][0]["code"] == "payments_short"


def test_a_refund_short_of_the_returns_total_is_refused(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")], is_return=True, payments=[("cash", "-50.00")])

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert error_fields(response) == {"payments"}


def test_a_total_tax_amount_differing_from_its_parts_is_refused(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", "tops", 1, "100.00")])
    body["sales"][0]["basket"]["total_tax_amount"] = 25.0

    response = pos.post("checkouts", body)

    assert response.status_code == 400
    assert "sales[0].basket.total_tax_amount" in error_fields(response)


def test_an_unknown_expense_is_a_warning(pos: PosApi) -> None:
    body = checkout_body(lines=[("p-1", None, 1, "-40.00")], payments=[("cash", "-40.00")])
    body["sales"][0]["basket"]["line_items"][0]["behavior"] = {"expense": {"identifier": "coffee", "image_urls": []}}

    response = pos.post("checkouts", body)

    assert response.status_code == 201, response.json()
    assert _codes(response.json()["warnings"]) == {
        "sales[0].basket.line_items[0].behavior.expense.identifier": "unknown_expense"
    }


def test_an_exchange_without_split_payments_books_them_with_its_first_sale(pos: PosApi, register: Register) -> None:
    sale = checkout_body(lines=[("p-1", "tops", 1, "300.00")])["sales"][0]
    returned = checkout_body(lines=[("p-2", "tops", 1, "100.00")], is_return=True, sale_identifier="r-1")["sales"][0]
    body = checkout_body(payments=[("card.external", "200.00")])
    body["sales"] = [sale, {**returned, "sequence_number": 2}]

    response = pos.post("checkouts", body)

    assert response.status_code == 201, response.json()
    assert set(_codes(response.json()["warnings"]).values()) == {"payments_not_split"}
    payments = SalePayment.objects.filter(product_group=None)
    assert [(p.sale.identifier, p.amount) for p in payments] == [("co-1-s1", Decimal("200.00"))]
