"""The register close statement's arithmetic (spec: Register close statement).

A golden day of one register, worked out by hand, and property tests over generated periods. The sales
are stored as the checkout service stores them (``Sale`` plus its ``SaleLine`` / ``SalePayment`` /
``SaleTax`` rows) by ``book_sale`` (tests/support/statements.py), booked through ``open_period_for`` as a
checkout books.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Register
from ledger.models import RegisterCloseStatement, RegisterPeriod, Sale
from ledger.selectors.registers import period_figures
from ledger.services.registers import close_register, open_register
from ledger.statements import (
    CountedAmount,
    StatementContext,
    product_group_totals,
    split_payment,
    statement_document,
    timing,
)
from tests.support.statements import (
    CLOSE_COUNTED,
    CLOSED,
    DAY,
    EVENT_COUNTS,
    EXPECTED_RECONCILIATIONS,
    EXPECTED_SUMMARY,
    OPENED,
    D,
    Line,
    Pay,
    SaleSpec,
    book_sale,
)
from tests.support.tenants import Tenant

# --- The golden day (its sales and expected figures: tests/support/statements.py) -------------------------


def _golden_day(tenant: Tenant, register: Register) -> RegisterCloseStatement:
    shop = tenant.stock_location
    shop.name, shop.street, shop.city, shop.zip, shop.vat_number = (
        "Copenhagen",
        "Vesterbrogade 1",
        "København",
        "1620",
        "DK1",
    )
    shop.save()
    tenant.market.name = "Denmark"
    tenant.market.save()
    register.name = "Till 1"
    register.save()
    open_register(account=tenant.account, register_identifier="reg-1", cash_total_at_open=D("1000.00"), at=OPENED)
    for spec in DAY:
        book_sale(tenant=tenant, register=register, spec=spec)
    return close_register(
        account=tenant.account,
        register_identifier="reg-1",
        counted=CLOSE_COUNTED,
        comment="2.50 short",
        event_counts=EVENT_COUNTS,
        cashier={"identifier": "cashier-7", "display_name": "AB", "full_name": "Anne Berg"},
        at=CLOSED,
    )


def test_a_day_of_a_register_closes_into_the_statement_worked_out_by_hand(tenant, register):
    statement = _golden_day(tenant, register)

    document = RegisterCloseStatement.objects.get(pk=statement.pk).document  # as stored and exported
    # The account's zone is UTC: the local strings are the UTC ones.
    assert document == {
        "base_currency_code": "DKK",
        "comment": "2.50 short",
        "reconciliation_time": D("1736965815.25"),
        "sequence_number": 1,
        "shop_info": {
            "vat_number": "DK1",
            "shop_address": {"city": "København", "name": "Copenhagen", "street": "Vesterbrogade 1", "zip": "1620"},
        },
        "source": {
            "market_id": "dk",
            "market_name": "Denmark",
            "shop_id": "shop-1",
            "shop_name": "Copenhagen",
            "register_id": "reg-1",
            "register_name": "Till 1",
            "cashier_id": "cashier-7",
            "cashier_name": "Anne Berg",
        },
        "register_summary": EXPECTED_SUMMARY,
        "reconciliations": EXPECTED_RECONCILIATIONS,
        "timing": {
            "timestamp": 1736965815250,
            "timestamp_string": "2025-01-15T18:30:15.250Z",
            "timezone": "UTC",
            "timestamp_date_string": "2025-01-15-18-30",
            "timestamp_week_string": "2025-03",
        },
    }


def test_a_close_after_local_midnight_is_dated_the_local_day_of_the_accounts_zone(tenant, register):
    tenant.account.timezone = "Europe/Copenhagen"
    tenant.account.save()
    sunday_evening = datetime(2025, 1, 19, 20, 0, tzinfo=UTC)
    open_register(account=tenant.account, register_identifier="reg-1", cash_total_at_open=D("0"), at=sunday_evening)

    statement = close_register(
        account=tenant.account,
        register_identifier="reg-1",
        counted=[{"payment_type_identifier": "cash", "counted": 0}],
        at=datetime(2025, 1, 19, 23, 30, tzinfo=UTC),  # Monday 00:30 in Copenhagen
    )

    assert RegisterCloseStatement.objects.get(pk=statement.pk).document["timing"] == {
        "timestamp": 1737329400000,
        "timestamp_string": "2025-01-19T23:30:00.000Z",
        "timezone": "Europe/Copenhagen",
        "timestamp_date_string": "2025-01-20-00-30",
        "timestamp_week_string": "2025-04",
    }


def test_the_golden_statement_is_stored_with_the_period_closed_at_its_reconciliation_time(tenant, register):
    statement = _golden_day(tenant, register)

    period = RegisterPeriod.objects.get(pk=statement.period_id)
    assert period.closed_at == CLOSED
    assert statement.sequence_number == period.sequence_number == 1
    assert statement.reconciliation_time == CLOSED


def test_the_next_period_opens_with_the_cash_the_close_left_in_the_drawer(tenant, register):
    _golden_day(tenant, register)

    sale = book_sale(tenant=tenant, register=register, spec=SaleSpec(lines=[Line("", D(1), D("10"), D("2"))]))

    period = sale.period
    assert (period.sequence_number, period.closed_at) == (2, None)
    assert period.cash_total_at_open == D("280.00")  # 1080 counted - 800 deposited


# --- Pure parts ---------------------------------------------------------------------------------------------


def test_timing_uses_the_iso_week_year_at_a_year_boundary():
    at = datetime(2024, 12, 30, 23, 59, 59, 999000, tzinfo=UTC)

    assert timing(at, "UTC") == {
        "timestamp": 1735603199999,
        "timestamp_string": "2024-12-30T23:59:59.999Z",
        "timezone": "UTC",
        "timestamp_date_string": "2024-12-30-23-59",
        "timestamp_week_string": "2025-01",
    }


def test_timing_dates_a_close_in_the_accounts_zone_and_keeps_the_instant_in_utc():
    at = datetime(2025, 1, 19, 23, 30, tzinfo=UTC)  # a Sunday, week 3; Monday 00:30 of week 4 in Copenhagen

    assert timing(at, "Europe/Copenhagen") == {
        "timestamp": 1737329400000,
        "timestamp_string": "2025-01-19T23:30:00.000Z",
        "timezone": "Europe/Copenhagen",
        "timestamp_date_string": "2025-01-20-00-30",
        "timestamp_week_string": "2025-04",
    }
    assert timing(at, "UTC")["timestamp_date_string"] == "2025-01-19-23-30"
    assert timing(at, "UTC")["timestamp_week_string"] == "2025-03"


def test_timing_takes_the_week_year_of_the_local_date_and_summer_time():
    new_year = datetime(2024, 12, 29, 23, 30, tzinfo=UTC)  # Sunday of week 52; Monday 2024-12-30 (week 1 of 2025)
    summer = datetime(2025, 6, 30, 22, 15, tzinfo=UTC)  # 00:15 on 1 July at UTC+2

    assert timing(new_year, "Europe/Copenhagen")["timestamp_week_string"] == "2025-01"
    assert timing(new_year, "UTC")["timestamp_week_string"] == "2024-52"
    assert timing(summer, "Europe/Copenhagen")["timestamp_date_string"] == "2025-07-01-00-15"
    assert timing(summer, "America/New_York")["timestamp_date_string"] == "2025-06-30-18-15"


@pytest.mark.parametrize("zone", ["", "Nowhere/City", "../../etc/passwd", "Europe"])
def test_timing_in_a_zone_the_tz_database_does_not_know_is_utc(zone):
    at = datetime(2025, 1, 19, 23, 30, tzinfo=UTC)

    assert timing(at, zone) == timing(at, "UTC")
    assert timing(at, zone)["timezone"] == "UTC"


def test_a_payment_is_split_over_the_groups_by_their_share_and_the_last_group_takes_the_remainder():
    groups = product_group_totals([("food", D("10.00")), ("", D("10.00")), ("food", D("10.00"))])

    assert groups == [("", D("10.00")), ("food", D("20.00"))]
    assert split_payment(D("100.00"), groups, 2) == [("", D("33.33")), ("food", D("66.67"))]
    assert split_payment(D("-0.05"), groups, 2) == [("", D("-0.02")), ("food", D("-0.03"))]
    assert split_payment(D("100"), groups, 0) == [("", D("33")), ("food", D("67"))]


def test_an_even_exchange_is_split_by_the_groups_absolute_totals_and_a_sale_without_lines_not_at_all():
    exchange = [("food", D("-50.00")), ("tops", D("50.00"))]

    assert split_payment(D("-0.05"), exchange, 2) == [("food", D("-0.03")), ("tops", D("-0.02"))]
    assert split_payment(D("9.00"), [("a", D(0)), ("b", D(0)), ("c", D(0))], 2) == [
        ("a", D("3.00")),
        ("b", D("3.00")),
        ("c", D("3.00")),
    ]
    assert split_payment(D("9.00"), [], 2) == []


# --- Properties over generated periods ---------------------------------------------------------------------

cents = st.integers(min_value=-500_00, max_value=500_00).map(lambda n: D(n).scaleb(-2))
positive_cents = st.integers(min_value=1, max_value=500_00).map(lambda n: D(n).scaleb(-2))
groups = st.sampled_from(["", "clothing", "food"])


@st.composite
def sale_specs(draw: st.DrawFn) -> SaleSpec:
    kind = draw(st.sampled_from(["sale", "return", "expense"]))
    sign = D(1) if kind == "sale" else D(-1)
    lines = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        total = sign * draw(positive_cents)
        quantity = D(draw(st.integers(min_value=1, max_value=5))) * (D(-1) if kind == "return" else D(1))
        lines.append(Line(draw(groups), quantity, total, (total / 5).quantize(D("0.01")), draw(cents)))
    total = sum((line.total for line in lines), D(0))
    split = draw(st.integers(min_value=0, max_value=100))
    card = (total * split / 100).quantize(D("0.01"))
    payments = [Pay("card.external", card), Pay("cash", total - card)]
    if draw(st.booleans()):
        eur = draw(positive_cents)
        payments += [Pay("cash", eur * 7, "EUR", eur), Pay("cash", -eur * 7)]  # paid in EUR, change in DKK
    return SaleSpec(kind=kind, lines=lines, payments=payments, voided=draw(st.booleans()) and draw(st.booleans()))


def _context(period: RegisterPeriod, specs: list[SaleSpec]) -> StatementContext:
    # Foreign cash is always reconciled: count exactly what was taken.
    eur = [p.foreign_currency_amount for s in specs if not s.voided for p in s.payments if p.foreign_currency]
    counted = [CountedAmount("cash", "EUR", sum((a for a in eur if a is not None), D(0)))] if eur else []
    return StatementContext(
        base_currency_code="DKK",
        sequence_number=period.sequence_number,
        opened_at=period.opened_at,
        cash_total_at_open=period.cash_total_at_open,
        reconciliation_time=CLOSED,
        payment_types=[{"identifier": "card.external", "should_be_reconciled": False}],  # nothing to count
        counted=counted,
        source={"register_id": "reg-1"},
        shop_info={},
        summary_id="reg-1-1",
    )


PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)


def _statement_of(tenant: Tenant, register: Register, specs: list[SaleSpec]) -> tuple[dict[str, Any], list[Sale]]:
    sales = [book_sale(tenant=tenant, register=register, spec=spec) for spec in specs]
    period = RegisterPeriod.objects.get(register=register, closed_at__isnull=True)
    return statement_document(period_figures(account=tenant.account, period=period), _context(period, specs)), sales


@PROPERTY_SETTINGS
@given(specs=st.lists(sale_specs(), min_size=1, max_size=8))
def test_statement_totals_equal_the_sums_of_the_stored_sales(tenant, register, specs):
    with transaction.atomic():
        document, sales = _statement_of(tenant, register, specs)
        summary = document["register_summary"]
        for name, kind in (("sales", "sale"), ("returns", "return"), ("expenses", "expense")):
            booked = [s for s in sales if s.kind == kind and not s.voided]
            assert summary[name]["total"] == sum((s.total for s in booked), D(0))
            assert summary[name]["count"] == len(booked)
            assert sum(p["totals"]["total"] for p in summary[name]["payments"]) == summary[name]["total"]
        assert summary["voided_count"] == sum(1 for s in sales if s.voided)
        transaction.set_rollback(True)


@PROPERTY_SETTINGS
@given(specs=st.lists(sale_specs(), min_size=1, max_size=8))
def test_all_equals_sales_plus_returns_plus_expenses(tenant, register, specs):
    with transaction.atomic():
        document, _ = _statement_of(tenant, register, specs)
        summary = document["register_summary"]
        for figure in ("base_price", "sub_total", "total", "total_discounts", "total_tax_amount", "vat_amount"):
            parts = summary["sales"][figure] + summary["returns"][figure] + summary["expenses"][figure]
            assert summary["all"][figure] == parts, figure
        for figure in ("margin", "margin_total", "count", "item_count"):
            assert summary["all"][figure] == sum(summary[k][figure] for k in ("sales", "returns", "expenses"))
        by_group = summary["all_by_product_group"].values()
        assert sum((g["total"] for g in by_group), D(0)) == summary["all"]["total"]
        transaction.set_rollback(True)


def _per_type(payments: list[dict[str, Any]]) -> dict[tuple[str, str], Decimal]:
    sums: dict[tuple[str, str], Decimal] = {}
    for payment in payments:
        totals = payment["totals"]
        amounts = {"total": totals["total"], "base": totals["base_currency_total"]}
        amounts.update({f"foreign {code}": amount for code, amount in totals["foreign_currencies"].items()})
        for name, amount in amounts.items():
            key = (payment["type"], name)
            sums[key] = sums.get(key, D(0)) + amount
    return {key: amount for key, amount in sums.items() if amount != 0}


@PROPERTY_SETTINGS
@given(specs=st.lists(sale_specs(), min_size=1, max_size=8))
def test_the_product_groups_payments_add_up_to_the_periods_per_type(tenant, register, specs):
    with transaction.atomic():
        document, _ = _statement_of(tenant, register, specs)
        summary = document["register_summary"]
        for name in ("all", "sales", "returns"):
            groups = summary[f"{name}_by_product_group"].values()
            assert _per_type([p for g in groups for p in g["payments"]]) == _per_type(summary[name]["payments"]), name
        transaction.set_rollback(True)


@PROPERTY_SETTINGS
@given(specs=st.lists(sale_specs(), min_size=1, max_size=8))
def test_credit_plus_debit_equals_total(tenant, register, specs):
    with transaction.atomic():
        document, _ = _statement_of(tenant, register, specs)
        for name in ("all", "sales", "returns", "expenses"):
            for payment in document["register_summary"][name]["payments"]:
                totals = payment["totals"]
                assert totals["total_credit"] + totals["total_debit"] == totals["total"]
                assert (
                    totals["base_currency_total_credit"] + totals["base_currency_total_debit"]
                    == (totals["base_currency_total"])
                )
                for code, amount in totals["foreign_currencies"].items():
                    credit = totals["foreign_currencies_credit"].get(code, D(0))
                    assert credit + totals["foreign_currencies_debit"].get(code, D(0)) == amount
        for entry in document["reconciliations"]:
            opening = D(0)
            if entry["depositing"] == "manual":
                opening = document["register_summary"]["cash_total_at_open"]
            assert entry["credit"] + entry["debit"] + opening == entry["total"]
        transaction.set_rollback(True)
