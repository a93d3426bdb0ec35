"""The data migration to the platform's amount meanings (docs/amounts.md), run over stored rows of the
old shape: a line's ``retail_price`` and ``cost_price`` per unit, ``margin`` a ratio and ``margin_total`` the
profit."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.models import Register
from ledger.models import Checkout, RegisterCloseStatement, Sale, SaleLine
from tests.support.tenants import Tenant

D = Decimal
BEFORE = [("ledger", "0003_close_identifier")]
AFTER = [("ledger", "0004_amounts_and_warnings")]
AT = datetime(2025, 1, 15, 9, 5, tzinfo=UTC)

# Two T-shirts at 125.00 each (VAT 25% included), 50.00 off the line, cost 30.00 each: in the old shape.
OLD_LINE = {
    "line_item_id": "li-1",
    "id": "tshirt",
    "product_group": "tops",
    "quantity": 2,
    "retail_price": D("125.00"),
    "cost_price": D("30.00"),
    "base_price": D("250.00"),
    "sub_total": D("200.00"),
    "total": D("200.00"),
    "vat_amount": D("40.00"),
    "sales_tax_amount": 0,
    "total_tax_amount": D("40.00"),
    "margin": D("0.625"),  # 100 / 160
    "margin_total": D("100.00"),  # 160 net - 60 cost
}
OLD_BASKET = {
    "base_price": D("250.00"),
    "sub_total": D("200.00"),
    "total": D("200.00"),
    "total_discounts": D("50.00"),
    "vat_amount": D("40.00"),
    "sales_tax_amount": 0,
    "total_tax_amount": D("40.00"),
    "margin": D("0.625"),
    "margin_total": D("100.00"),
    "is_return": False,
    "line_items": [OLD_LINE],
    "taxes": [{"amount": D("40.00"), "rate": D("0.25"), "name": "VAT", "type": "vat"}],
}


def _summary(sub_total: str, vat: str, margin: str, margin_total: str) -> dict[str, Any]:
    return {
        "base_price": D(sub_total),
        "sub_total": D(sub_total),
        "total": D(sub_total),
        "vat_amount": D(vat),
        "margin": D(margin),
        "margin_total": D(margin_total),
    }


OLD_REGISTER_SUMMARY = {
    "all": _summary("160.00", "32.00", "0.7813", "100.00"),
    "sales": _summary("200.00", "40.00", "0.625", "100.00"),
    "returns": _summary("0", "0", "0", "0"),
    "expenses": _summary("-40.00", "-8.00", "0", "0"),
    "all_by_product_group": {
        "tops": _summary("200.00", "40.00", "0.625", "100.00"),
        "__none__": _summary("-40.00", "-8.00", "0", "0"),
    },
    "sales_by_product_group": {"tops": _summary("200.00", "40.00", "0.625", "100.00")},
    "returns_by_product_group": {},
}


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _latest() -> list[tuple[str, str]]:
    return list(MigrationExecutor(connection).loader.graph.leaf_nodes())


@pytest.fixture
def old_rows(transactional_db: None, tenant: Tenant) -> Iterator[None]:
    """One sale (with its checkout and rows), one expense row and a statement, written at the old migration; the
    database is back at the latest migrations afterwards, for the tests that follow."""
    register = Register.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1", name="Register 1"
    )
    apps = _migrate(BEFORE)
    own = {"account_id": tenant.account.pk}
    period = apps.get_model("ledger", "RegisterPeriod").objects.create(
        **own, register_id=register.pk, sequence_number=1, opened_at=AT, closed_at=AT
    )
    placed = {**own, "register_id": register.pk, "stock_location_id": tenant.stock_location.pk, "period": period}
    checkout = apps.get_model("ledger", "Checkout").objects.create(
        **placed,
        identifier="co-1",
        timestamp=AT,
        body_hash="0" * 64,
        document={"identifier": "co-1", "sales": [{"identifier": "s-1", "basket": copy.deepcopy(OLD_BASKET)}]},
    )
    sale = apps.get_model("ledger", "Sale").objects.create(
        **placed,
        checkout=checkout,
        identifier="s-1",
        sequence_number=1,
        kind="sale",
        base_currency_code="DKK",
        total=D("200.00"),
        timestamp=AT,
        document={"identifier": "s-1", "summary": copy.deepcopy(OLD_BASKET)},
    )
    figures = {"base_price": 0, "total_discounts": 0, "total_tax_amount": 0, "sales_tax_amount": 0}
    lines = apps.get_model("ledger", "SaleLine").objects
    lines.create(
        **own,
        **{**figures, "base_price": 250, "total_discounts": 50, "total_tax_amount": 40},
        sale=sale,
        period=period,
        kind="sale",
        product_group="tops",
        quantity=2,
        sub_total=200,
        total=200,
        vat_amount=40,
        margin_total=100,
    )
    lines.create(
        **own, **figures, sale=sale, period=period, kind="expense", quantity=1, sub_total=-40, total=-40, vat_amount=-8
    )
    apps.get_model("ledger", "RegisterCloseStatement").objects.create(
        **own,
        register_id=register.pk,
        period=period,
        sequence_number=1,
        reconciliation_time=AT,
        document={"register_summary": copy.deepcopy(OLD_REGISTER_SUMMARY)},
    )
    _migrate(AFTER)
    yield
    _migrate(_latest())


@pytest.mark.usefixtures("old_rows")
def test_a_stored_sale_line_becomes_per_line_with_margins_as_amounts() -> None:
    [line] = Sale.objects.get().document["summary"]["line_items"]

    assert (line["retail_price"], line["cost_price"]) == (D("250.00"), D("60.00"))  # 2 x 125.00, 2 x 30.00
    assert (line["margin"], line["margin_total"]) == (D("100.00"), D("160.00"))
    assert line["retail_price"] - line["sub_total"] == D("50.00")  # the CSV exporter's discount
    assert line["margin_total"] - line["margin"] == line["cost_price"]


@pytest.mark.usefixtures("old_rows")
def test_a_stored_sale_summary_and_checkout_basket_get_margins_as_amounts() -> None:
    summary = Sale.objects.get().document["summary"]
    basket = Checkout.objects.get().document["sales"][0]["basket"]

    assert (summary["margin"], summary["margin_total"]) == (D("100.00"), D("160.00"))
    assert basket == summary


@pytest.mark.usefixtures("old_rows")
def test_statement_rows_hold_the_net_amount_and_the_profit() -> None:
    rows = {row.kind: row for row in SaleLine.objects.all()}

    assert (rows["sale"].margin_total, rows["sale"].margin) == (D(160), D(100))
    assert (rows["expense"].margin_total, rows["expense"].margin) == (D(-32), D(-32))  # no cost: all of it


@pytest.mark.usefixtures("old_rows")
def test_a_stored_statement_reads_the_cost_of_the_period_as_margin_total_less_margin() -> None:
    summary = RegisterCloseStatement.objects.get().document["register_summary"]

    def margins(part: dict[str, Any]) -> tuple[Decimal, Decimal]:
        return part["margin"], part["margin_total"]

    assert margins(summary["all"]) == (D(68), D(128))  # cost 60
    assert margins(summary["sales"]) == (D(100), D(160))  # cost 60
    assert margins(summary["expenses"]) == (D(-32), D(-32))  # cost 0
    assert margins(summary["returns"]) == (D(0), D(0))
    assert margins(summary["all_by_product_group"]["tops"]) == (D(100), D(160))
    assert margins(summary["all_by_product_group"]["__none__"]) == (D(-32), D(-32))
    assert margins(summary["sales_by_product_group"]["tops"]) == (D(100), D(160))
