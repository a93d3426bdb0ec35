"""The migration that gives the sales of the periods still open their payments' parts by product group
(docs/decisions.md): run over rows written before it, as a close reads them after it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from accounts.models import Register
from ledger.models import SalePayment
from tests.support.tenants import Tenant

D = Decimal
BEFORE = [("ledger", "0005_checkout_created_index")]
AFTER = [("ledger", "0006_payment_parts_by_product_group")]
AT = datetime(2025, 1, 15, 9, 5, tzinfo=UTC)


def _migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def _sale(apps: Any, tenant: Tenant, register: Register, *, number: int, closed: bool) -> None:
    """A sale of 60.00 tops and 39.75 without a group, paid 100 in cash (13.40 EUR) and -0.25 cash rounding."""
    own = {"account_id": tenant.account.pk}
    period = apps.get_model("ledger", "RegisterPeriod").objects.create(
        **own, register_id=register.pk, sequence_number=number, opened_at=AT, closed_at=AT if closed else None
    )
    placed = {**own, "register_id": register.pk, "stock_location_id": tenant.stock_location.pk, "period": period}
    checkout = apps.get_model("ledger", "Checkout").objects.create(
        **placed, identifier=f"co-{number}", timestamp=AT, body_hash="0" * 64, document={}
    )
    sale = apps.get_model("ledger", "Sale").objects.create(
        **placed,
        checkout=checkout,
        identifier=f"s-{number}",
        sequence_number=number,
        kind="sale",
        base_currency_code="DKK",
        total=D("99.75"),
        timestamp=AT,
        document={},
    )
    rows = {**own, "sale": sale, "period": period, "kind": "sale"}
    zero = dict.fromkeys(("base_price", "total_discounts", "total_tax_amount", "sales_tax_amount", "vat_amount"), 0)
    for group, total in (("tops", D("60.00")), ("", D("39.75"))):
        apps.get_model("ledger", "SaleLine").objects.create(
            **rows, **zero, product_group=group, quantity=1, sub_total=total, total=total
        )
    payments = apps.get_model("ledger", "SalePayment").objects
    payments.create(**rows, payment_type="cash", amount=100, foreign_currency="EUR", foreign_currency_amount=D("13.4"))
    payments.create(**rows, payment_type="cash.rounding", amount=D("-0.25"))


@pytest.fixture
def old_rows(transactional_db: None, tenant: Tenant) -> Iterator[None]:
    """A sale in an open period and one in a closed period, written before the migration; the database is back at
    the latest migrations afterwards."""
    register = Register.objects.create(
        account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1", name="Register 1"
    )
    apps = _migrate(BEFORE)
    _sale(apps, tenant, register, number=1, closed=False)
    _sale(apps, tenant, register, number=2, closed=True)
    _migrate(AFTER)
    yield
    _migrate(list(MigrationExecutor(connection).loader.graph.leaf_nodes()))


@pytest.mark.usefixtures("old_rows")
def test_an_open_periods_sale_gets_its_payments_parts_and_a_closed_ones_none() -> None:
    parts = sorted(
        SalePayment.objects.exclude(product_group=None).values_list(
            "sale__identifier", "payment_type", "product_group", "amount", "foreign_currency_amount"
        )
    )

    # By each group's share of the 99.75 (39.75 : 60.00); the last group takes the rest.
    assert parts == [
        ("s-1", "cash", "", D("39.85"), D("5.34")),
        ("s-1", "cash", "tops", D("60.15"), D("8.06")),
        ("s-1", "cash.rounding", "", D("-0.10"), None),
        ("s-1", "cash.rounding", "tops", D("-0.15"), None),
    ]
    assert SalePayment.objects.filter(product_group=None).count() == 4  # the payments themselves, untouched
