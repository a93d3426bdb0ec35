"""Compatibility over real-shaped data (docs/amounts.md): a register day posted through the POS API of a
live server, exported by a real Celery worker to a real web hook reachable_receiver, and read field by field the way the
platform's tools read it: a line's discount is ``retail_price - sub_total``, a unit cost ``cost_price / quantity``,
a period's cost ``margin_total - margin``, and every statement's totals add up."""

from __future__ import annotations

import csv as stdlib_csv
import io
import json
from decimal import Decimal
from typing import Any

import pytest
import requests

from exports.models import ExportItem, ExportStatus
from tests.factories import RegisterFactory
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.register_day import CLOSE_BODY, register_day
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import CeleryWorkerProcess

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

D = Decimal
FIGURES = ("base_price", "sub_total", "total", "total_discounts", "total_tax_amount", "vat_amount", "margin")
CSV_CONFIG: dict[str, Any] = {
    "type": "csv",
    "rows": "line_items",
    "separator": ";",
    "decimal_separator": ".",
    "language": ["da", "en"],
    "required_values": ["id"],
    "columns": [
        {"header": "Sale", "path": "entity.identifier"},
        {"header": "Type", "derived": "type"},
        {"header": "Shop", "value": "Main street"},
        {"header": "Name", "path": "name"},
        {"header": "Quantity", "path": "quantity"},
        {"header": "Retail price", "path": "retail_price", "format": "money"},
        {"header": "Sub total", "path": "sub_total", "format": "money"},
        {"header": "Cost", "path": "cost_price", "format": "money"},
    ],
}


def call(live_server: Any, tenant: Tenant, key: str, path: str, body: Any) -> dict[str, Any]:
    response = requests.post(
        f"{live_server.url}/api/v1/{path}?{tenant.query(key)}",
        data=json.dumps(body),
        headers={"Content-Type": "application/json", "Connection": "close"},
        timeout=30,
    )
    assert response.status_code in (200, 201), (path, response.status_code, response.text)
    return response.json()


def decimals(body: bytes) -> Any:
    return json.loads(body, parse_float=Decimal)


def test_a_register_day_reads_as_the_platforms_tools_read_it(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, celery_worker_process: CeleryWorkerProcess
) -> None:
    make_queue(tenant, f"{reachable_receiver.url}/sales", name="sales", entity_type="sales")
    make_queue(tenant, f"{reachable_receiver.url}/csv", name="sales csv", entity_type="sales", transform=CSV_CONFIG)
    make_queue(
        tenant, f"{reachable_receiver.url}/statements", name="statements", entity_type="register_close_statements"
    )
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    call(live_server, tenant, tenant.admin_key, "expenses", {"id": "coffee", "name": {"da": "Kaffe", "en": "Coffee"}})

    for body in register_day():
        answer = call(live_server, tenant, tenant.pos_key, "pos/checkouts", body)
        assert answer["warnings"] == [], answer["warnings"]  # real data: nothing odd, nothing refused
    call(live_server, tenant, tenant.pos_key, "pos/registers/reg-1/close", CLOSE_BODY)

    def at(path: str) -> list[bytes]:
        return [got.body for got in reachable_receiver.received if got.path.split("?")[0].endswith(path)]

    wait_until(
        lambda: (len(at("/sales")), len(at("/csv")), len(at("/statements"))) == (5, 5, 1),
        120,
        message="5 sales as JSON, 5 as CSV and the statement delivered",
    )
    wait_until(
        lambda: not ExportItem.objects.filter(account=tenant.account).exclude(status=ExportStatus.SUCCESS).exists(),
        60,
        message="every export item logged as a success",
    )
    sales = {key: sale for body in at("/sales") for key, sale in decimals(body).items()}
    [statement] = [next(iter(decimals(body).values())) for body in at("/statements")]

    _check_sales(sales)
    _check_statement(statement, sales)
    _check_csv([body.decode("utf-8") for body in at("/csv")])


def _check_sales(sales: dict[str, Any]) -> None:
    assert set(sales) == {"co-1-s1", "co-2-s1", "co-3-s1", "co-4-s1", "co-5-s1"}
    for sale in sales.values():
        summary = sale["summary"]
        for line in summary["line_items"]:
            # The CSV exporter's discount: the line's price before discounts less its sub_total.
            discounts = sum((d["amount"] for d in line.get("discounts", ())), D(0))
            assert line["retail_price"] - line["sub_total"] == discounts, (sale["identifier"], line)
            assert line["base_price"] == line["retail_price"]
        assert summary["total_discounts"] == summary["base_price"] - summary["sub_total"]
        assert sum(line["total"] for line in summary["line_items"]) == summary["total"]
    tshirts, socks = sales["co-1-s1"]["summary"]["line_items"]
    # The bookkeeping transform's unit cost: cost_price / quantity.
    assert (tshirts["cost_price"] / tshirts["quantity"], socks["cost_price"] / socks["quantity"]) == (D(60), D(15))
    assert (tshirts["retail_price"], tshirts["sub_total"], tshirts["vat_amount"]) == (
        D("399.90"),
        D("359.90"),
        D("71.98"),
    )
    # Margins as sent, in the platform's meaning: net amount and profit; their difference the line's cost.
    assert (tshirts["margin_total"], tshirts["margin"]) == (D("287.92"), D("167.92"))
    assert tshirts["margin_total"] - tshirts["margin"] == tshirts["cost_price"]
    # The B2B customer keeps name and address; the return names its sale; the voided sale says so.
    assert sales["co-1-s1"]["summary"]["customer"]["organization_number"] == "DK12345678"
    assert sales["co-3-s1"]["summary"]["return_reference"] == "co-1-s1"
    assert sales["co-5-s1"]["voided"] is True
    eur = sales["co-2-s1"]["payments"][0]
    assert (eur["foreign_currency"], eur["foreign_currency_amount"], eur["amount"]) == ("EUR", D(10), D("74.5"))


def _check_statement(statement: dict[str, Any], sales: dict[str, Any]) -> None:
    summary = statement["register_summary"]
    costs = {"sales": D(0), "returns": D(0), "expenses": D(0)}
    for sale in sales.values():
        if sale["voided"]:
            continue  # a voided sale is in no summary
        part = "returns" if sale["summary"]["is_return"] else "sales"
        if any("expense" in line.get("behavior", {}) for line in sale["summary"]["line_items"]):
            part = "expenses"
        costs[part] += sum((line.get("cost_price", D(0)) for line in sale["summary"]["line_items"]), D(0))
    assert costs == {"sales": D("215.00"), "returns": D("-60.00"), "expenses": D(0)}

    # The statement exporter's cost of the period: margin_total - margin.
    for part, cost in costs.items():
        assert summary[part]["margin_total"] - summary[part]["margin"] == cost, part
    assert summary["all"]["margin_total"] - summary["all"]["margin"] == D("155.00")
    assert summary["sales"]["margin_total"] == sum(
        (line["sub_total"] - line["vat_amount"] for key in ("co-1-s1", "co-2-s1") for line in _lines(sales, key)),
        D(0),
    )

    for name, part in [(k, summary[k]) for k in ("all", "sales", "returns", "expenses")]:
        assert part["total_discounts"] == part["base_price"] - part["sub_total"], name
        assert sum((p["totals"]["total"] for p in part["payments"]), D(0)) == part["total"], name
        assert sum((t["amount"] for t in part["tax_summaries"]), D(0)) == part["total_tax_amount"], name
    for figure in (*FIGURES, "margin_total", "count", "item_count"):
        parts = sum((summary[k][figure] for k in ("sales", "returns", "expenses")), D(0))
        assert summary["all"][figure] == parts, figure
    for figure in FIGURES:
        by_group = sum((g[figure] for g in summary["all_by_product_group"].values()), D(0))
        assert by_group == summary["all"][figure], figure
    assert summary["voided_count"] == 1
    assert summary["all"]["total"] == D("459.80") + D("150.00") - D("179.95") - D("40.00")

    _check_payments_by_product_group(summary)

    reconciliations = {(r["payment_type_identifier"], r["currency_code"]): r for r in statement["reconciliations"]}
    assert reconciliations[("cash", "DKK")]["total"] == D("35.50")
    assert reconciliations[("cash", "EUR")]["depositing"] == "automatic"


def _per_type(payments: list[dict[str, Any]]) -> dict[tuple[str, str], Decimal]:
    """Amounts per payment type: the total, the base currency's and each foreign currency's."""
    sums: dict[tuple[str, str], Decimal] = {}
    for payment in payments:
        totals = payment["totals"]
        amounts = {"total": totals["total"], "base": totals["base_currency_total"], **totals["foreign_currencies"]}
        for name, amount in amounts.items():
            sums[(payment["type"], name)] = sums.get((payment["type"], name), D(0)) + amount
    return sums


def _check_payments_by_product_group(summary: dict[str, Any]) -> None:
    def in_short(groups: dict[str, Any]) -> dict[str, dict[str, tuple[Decimal, int]]]:
        return {
            group: {p["type"]: (p["totals"]["total"], p["totals"]["transaction_count"]) for p in part["payments"]}
            for group, part in groups.items()
        }

    # Worked out by hand. co-1's two card payments split over its groups by their shares of its 459.80
    # (accessories 99.90, clothing 359.90; the last group takes the rest): 400.00 -> 86.91 + 313.09 and
    # 59.80 -> 12.99 + 46.81; each counts once in each group. co-2 is all accessories, co-3 clothing, co-4 none.
    accessories = {"card.external": (D("99.90"), 2), "cash": (D("150.00"), 3)}  # 74.50 (10 EUR) + 80 - 4.50
    assert in_short(summary["sales_by_product_group"]) == {
        "accessories": accessories,
        "clothing": {"card.external": (D("359.90"), 2)},
    }
    assert in_short(summary["returns_by_product_group"]) == {"clothing": {"card.external": (D("-179.95"), 1)}}
    assert in_short(summary["all_by_product_group"]) == {
        "__none__": {"cash": (D("-40.00"), 1)},
        "accessories": accessories,
        "clothing": {"card.external": (D("179.95"), 3)},
    }
    [eur] = [p for p in summary["all_by_product_group"]["accessories"]["payments"] if p["type"] == "cash"]
    assert (eur["totals"]["base_currency_total"], eur["totals"]["foreign_currencies"]) == (D("75.50"), {"EUR": D(10)})
    # The groups' payments add up to the period's, per type and currency.
    for name in ("all", "sales", "returns"):
        groups = summary[f"{name}_by_product_group"].values()
        assert _per_type([p for g in groups for p in g["payments"]]) == _per_type(summary[name]["payments"]), name


def _lines(sales: dict[str, Any], key: str) -> list[dict[str, Any]]:
    return list(sales[key]["summary"]["line_items"])


def _check_csv(documents: list[str]) -> None:
    rows = [row for text in documents for row in list(stdlib_csv.reader(io.StringIO(text), delimiter=";"))[1:]]
    by_sale: dict[str, list[list[str]]] = {}
    for row in rows:
        by_sale.setdefault(row[0], []).append(row)
    # The expense line has no product id: left out by required_values.
    assert set(by_sale) == {"co-1-s1", "co-2-s1", "co-3-s1", "co-5-s1"}
    assert by_sale["co-1-s1"] == [
        ["co-1-s1", "sale", "Main street", "T-shirt basis", "2", "399.90", "359.90", "120.00"],
        ["co-1-s1", "sale", "Main street", "Socks", "3", "149.85", "99.90", "45.00"],
    ]
    assert by_sale["co-2-s1"] == [["co-2-s1", "sale", "Main street", "Kasket", "1", "150.00", "150.00", "50.00"]]
    assert by_sale["co-3-s1"] == [
        ["co-3-s1", "return", "Main street", "T-shirt basis", "-1", "-199.95", "-179.95", "-60.00"]
    ]
    assert [row[1] for row in by_sale["co-5-s1"]] == ["void"]  # the platform's word for a voided sale
    for row in rows:
        assert D(row[5]) - D(row[6]) >= 0 if D(row[4]) > 0 else D(row[5]) - D(row[6]) <= 0
