"""The register close statement's arithmetic (spec: Register close statement).

A golden day of one register, worked out by hand, and property tests over generated periods. The sales
are stored as the checkout service stores them (``Sale`` plus its ``SaleLine`` / ``SalePayment`` /
``SaleTax`` rows, a payment's parts by product group included) by the small factory below, booked through
``open_period_for`` as a checkout books.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from accounts.models import Register
from ledger.models import Checkout, RegisterCloseStatement, RegisterPeriod, Sale, SaleLine, SalePayment, SaleTax
from ledger.selectors.registers import period_figures
from ledger.services.registers import close_register, open_period_for, open_register
from ledger.statements import (
    CountedAmount,
    StatementContext,
    product_group_totals,
    split_payment,
    statement_document,
    timing,
)
from tests.conftest import Tenant

D = Decimal
ZERO = D(0)
VAT = {"name": "VAT", "rate": D("0.25"), "type": "vat"}
_numbers = itertools.count(1)


# --- Factory: a stored sale with the rows a statement sums -------------------------------------------------


@dataclass
class Line:
    product_group: str
    quantity: Decimal
    total: Decimal
    vat_amount: Decimal
    margin: Decimal | None = None  # the profit amount; None: no cost known, the whole net amount
    discount: Decimal = ZERO  # base_price = total + discount

    @property
    def figures(self) -> dict[str, Decimal]:
        return {
            "quantity": self.quantity,
            "base_price": self.total + self.discount,
            "sub_total": self.total,
            "total": self.total,
            "total_discounts": self.discount,
            "total_tax_amount": self.vat_amount,
            "vat_amount": self.vat_amount,
            "sales_tax_amount": D(0),
            "margin_total": self.total - self.vat_amount,
            "margin": self.margin if self.margin is not None else self.total - self.vat_amount,
        }


@dataclass
class Pay:
    payment_type: str
    amount: Decimal
    foreign_currency: str = ""
    foreign_currency_amount: Decimal | None = None


@dataclass
class SaleSpec:
    kind: str = "sale"
    lines: list[Line] = field(default_factory=list)
    payments: list[Pay] = field(default_factory=list)
    voided: bool = False

    @property
    def total(self) -> Decimal:
        return sum((line.total for line in self.lines), D(0))


def book_sale(*, tenant: Tenant, register: Register, spec: SaleSpec) -> Sale:
    """Store a sale as the checkout service does: one transaction, booked into the register's open period."""
    number = next(_numbers)
    at = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)
    account = tenant.account
    with transaction.atomic():
        period = open_period_for(account=account, register=register, at=at)
        checkout = Checkout.objects.create(
            account=account,
            register=register,
            stock_location=register.stock_location,
            period=period,
            identifier=f"co-{number}",
            voided=spec.voided,
            timestamp=at,
            body_hash="0" * 64,
            document={},
        )
        sale = Sale.objects.create(
            account=account,
            checkout=checkout,
            register=register,
            stock_location=register.stock_location,
            period=period,
            identifier=f"sale-{number}",
            sequence_number=number,
            kind=spec.kind,
            voided=spec.voided,
            base_currency_code="DKK",
            total=spec.total,
            timestamp=at,
            document={},
        )
        if spec.voided:
            return sale  # a voided sale has no rows
        own: dict[str, Any] = {"account": account, "sale": sale, "period": period, "kind": spec.kind}
        SaleLine.objects.bulk_create(
            [SaleLine(**own, product_group=line.product_group, **line.figures) for line in spec.lines]
        )
        groups = product_group_totals((line.product_group, line.total) for line in spec.lines)
        payments = [SalePayment(**own, **vars(pay)) for pay in spec.payments]
        for pay in spec.payments:
            foreign = pay.foreign_currency_amount
            parts = split_payment(pay.amount, groups, 2)
            foreign_parts = split_payment(foreign, groups, 2) if foreign is not None else [(g, None) for g, _ in groups]
            part_of = vars(pay)
            payments += [
                SalePayment(**own, **{**part_of, "product_group": group, "amount": part, "foreign_currency_amount": f})
                for (group, part), (_, f) in zip(parts, foreign_parts, strict=True)
            ]
        SalePayment.objects.bulk_create(payments)
        taxes = [SaleTax(**own, product_group=line.product_group, amount=line.vat_amount, **VAT) for line in spec.lines]
        summary_vat = sum((line.vat_amount for line in spec.lines), D(0))
        taxes.append(SaleTax(**own, product_group=None, amount=summary_vat, **VAT))
        SaleTax.objects.bulk_create(taxes)
    return sale


# --- The golden day ----------------------------------------------------------------------------------------

OPENED = datetime(2025, 1, 15, 8, 0, tzinfo=UTC)
CLOSED = datetime(2025, 1, 15, 18, 30, 15, 250000, tzinfo=UTC)

DAY = [
    # A: 2 T-shirts (clothing) at 100 and a bar of candy (no group) at 25, paid 250 cash, 25 change.
    SaleSpec(
        lines=[
            Line("clothing", D(2), D("200.00"), D("40.00"), D("60.00")),
            Line("", D(1), D("25.00"), D("5.00"), D("8.00")),
        ],
        payments=[Pay("cash", D("250.00")), Pay("cash", D("-25.00"))],
    ),
    # B: a jacket at 449.95 with 50 off, paid 54 EUR (402.50 DKK), 2.50 DKK change, rounded by -0.05.
    SaleSpec(
        lines=[Line("clothing", D(1), D("399.95"), D("79.99"), D("119.96"), discount=D("50.00"))],
        payments=[
            Pay("cash", D("402.50"), "EUR", D("54.00")),
            Pay("cash", D("-2.50")),
            Pay("cash.rounding", D("-0.05")),
        ],
    ),
    # C: candy at 30, paid with a gift card (a type not configured on the register).
    SaleSpec(
        lines=[Line("", D(1), D("30.00"), D("6.00"), D("10.00"))], payments=[Pay("giftcard.integration", D("30.00"))]
    ),
    # D: socks at 50, paid by card.
    SaleSpec(
        lines=[Line("clothing", D(1), D("50.00"), D("10.00"), D("15.00"))], payments=[Pay("card.external", D("50.00"))]
    ),
    # R: a T-shirt returned, 100 back in cash.
    SaleSpec(
        kind="return",
        lines=[Line("clothing", D(-1), D("-100.00"), D("-20.00"), D("-30.00"))],
        payments=[Pay("cash", D("-100.00"))],
    ),
    # V: a sale voided during payment: stored, counted as voided, summed nowhere.
    SaleSpec(
        lines=[Line("clothing", D(5), D("500.00"), D("100.00"))], payments=[Pay("cash", D("500.00"))], voided=True
    ),
    # E: coffee for the staff, 40 from the drawer.
    SaleSpec(kind="expense", lines=[Line("", D(1), D("-40.00"), D("-8.00"))], payments=[Pay("cash", D("-40.00"))]),
]


def _totals(
    total: str,
    credit: str,
    debit: str,
    count: int,
    count_credit: int,
    count_debit: int,
    *,
    base: tuple[str, str, str, int, int, int] | None = None,
    foreign: dict[str, dict[str, Any]] | None = None,
) -> dict[str, Any]:
    b = base or (total, credit, debit, count, count_credit, count_debit)
    f = foreign or {}
    return {
        "base_currency_total": D(b[0]),
        "base_currency_total_credit": D(b[1]),
        "base_currency_total_debit": D(b[2]),
        "base_currency_transaction_count": b[3],
        "base_currency_transaction_count_credit": b[4],
        "base_currency_transaction_count_debit": b[5],
        "total": D(total),
        "total_credit": D(credit),
        "total_debit": D(debit),
        "transaction_count": count,
        "transaction_count_credit": count_credit,
        "transaction_count_debit": count_debit,
        "foreign_currencies": f.get("amount", {}),
        "foreign_currencies_credit": f.get("credit", {}),
        "foreign_currencies_debit": f.get("debit", {}),
        "foreign_currencies_transaction_count": f.get("count", {}),
        "foreign_currencies_transaction_count_credit": f.get("count_credit", {}),
        "foreign_currencies_transaction_count_debit": f.get("count_debit", {}),
    }


def _summary(
    *,
    base_price: str,
    total: str,
    discounts: str,
    vat: str,
    margin: str,
    margin_total: str,
    count: int,
    items: str,
    payments: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "base_price": D(base_price),
        "margin": D(margin),
        "margin_total": D(margin_total),
        "sub_total": D(total),
        "total": D(total),
        "total_discounts": D(discounts),
        "total_tax_amount": D(vat),
        "count": count,
        "item_count": D(items),
        "vat_amount": D(vat),
        "sales_tax_amount": D(0),
        "payments": payments,
        "tax_summaries": [{"amount": D(vat), "rate": D("0.25"), "name": "VAT", "type": "vat"}],
    }


EUR_54: dict[str, dict[str, Any]] = {
    "amount": {"EUR": D("54.00")},
    "credit": {"EUR": D("54.00")},
    "count": {"EUR": 1},
    "count_credit": {"EUR": 1},
}

# Worked out by hand from DAY (VAT 25% included in every price; margin_total = total - VAT, margin = margin_total -
# cost: the profit; a line without a cost, the expense, has its whole net amount as margin).
EXPECTED_SUMMARY = {
    "id": "reg-1-1",
    "opened_at": D("1736928000.0"),
    "cash_total_at_open": D("1000.00"),
    "all": _summary(
        base_price="614.95",  # 754.95 - 100 - 40
        total="564.95",  # 704.95 - 100 - 40
        discounts="50.00",
        vat="112.99",  # 140.99 - 20 - 8
        margin="150.96",  # 212.96 - 30 - 32
        margin_total="451.96",  # 564.95 - 112.99
        count=6,  # A B C D R E; V is voided
        items="6",  # 6 sold - 1 returned + 1 expense
        payments=[
            {"type": "card.external", "totals": _totals("50.00", "50.00", "0", 1, 1, 0)},
            {
                # 250 - 25 + 402.50 - 2.50 - 100 - 40; in DKK only: 250 - 25 - 2.50 - 100 - 40
                "type": "cash",
                "totals": _totals(
                    "485.00", "652.50", "-167.50", 6, 2, 4, base=("82.50", "250.00", "-167.50", 5, 1, 4), foreign=EUR_54
                ),
            },
            {"type": "cash.rounding", "totals": _totals("-0.05", "0", "-0.05", 1, 0, 1)},
            {"type": "giftcard.integration", "totals": _totals("30.00", "30.00", "0", 1, 1, 0)},
        ],
    ),
    "sales": _summary(
        base_price="754.95",  # 200 + 25 + 449.95 + 30 + 50
        total="704.95",  # 200 + 25 + 399.95 + 30 + 50
        discounts="50.00",
        vat="140.99",  # 40 + 5 + 79.99 + 6 + 10
        margin="212.96",  # 60 + 8 + 119.96 + 10 + 15
        margin_total="563.96",  # 704.95 - 140.99
        count=4,
        items="6",
        payments=[
            {"type": "card.external", "totals": _totals("50.00", "50.00", "0", 1, 1, 0)},
            {
                "type": "cash",
                "totals": _totals(
                    "625.00", "652.50", "-27.50", 4, 2, 2, base=("222.50", "250.00", "-27.50", 3, 1, 2), foreign=EUR_54
                ),
            },
            {"type": "cash.rounding", "totals": _totals("-0.05", "0", "-0.05", 1, 0, 1)},
            {"type": "giftcard.integration", "totals": _totals("30.00", "30.00", "0", 1, 1, 0)},
        ],
    ),
    "returns": _summary(
        base_price="-100.00",
        total="-100.00",
        discounts="0",
        vat="-20.00",
        margin="-30.00",
        margin_total="-80.00",
        count=1,
        items="-1",
        payments=[{"type": "cash", "totals": _totals("-100.00", "0", "-100.00", 1, 0, 1)}],
    ),
    "expenses": _summary(
        base_price="-40.00",
        total="-40.00",
        discounts="0",
        vat="-8.00",
        margin="-32.00",
        margin_total="-32.00",
        count=1,
        items="1",
        payments=[{"type": "cash", "totals": _totals("-40.00", "0", "-40.00", 1, 0, 1)}],
    ),
    "all_by_product_group": {
        "__none__": _summary(  # A's candy, C, E
            base_price="15.00",
            total="15.00",
            discounts="0",
            vat="3.00",
            margin="-14.00",  # 8 + 10 - 32
            margin_total="12.00",
            count=3,
            items="3",
            # A's payments split 25 : 200 over its groups ("" first, clothing takes the remainder): cash 250 ->
            # 27.78 here, cash -25 -> -2.78 here; C's gift card; E's cash.
            payments=[
                {"type": "cash", "totals": _totals("-15.00", "27.78", "-42.78", 3, 1, 2)},  # 27.78 - 2.78 - 40
                {"type": "giftcard.integration", "totals": _totals("30.00", "30.00", "0", 1, 1, 0)},
            ],
        ),
        "clothing": _summary(  # A's T-shirts, B, D, R
            base_price="599.95",
            total="549.95",
            discounts="50.00",
            vat="109.99",
            margin="164.96",
            margin_total="439.96",
            count=4,
            items="3",
            payments=[
                {"type": "card.external", "totals": _totals("50.00", "50.00", "0", 1, 1, 0)},
                {
                    # A's 222.22 and -22.22, B's 402.50 (54 EUR) and -2.50, R's -100; with "" above: the period's 485.
                    "type": "cash",
                    "totals": _totals(
                        "500.00",
                        "624.72",
                        "-124.72",
                        5,
                        2,
                        3,
                        base=("97.50", "222.22", "-124.72", 4, 1, 3),
                        foreign=EUR_54,
                    ),
                },
                {"type": "cash.rounding", "totals": _totals("-0.05", "0", "-0.05", 1, 0, 1)},
            ],
        ),
    },
    "sales_by_product_group": {
        "__none__": _summary(
            base_price="55.00",
            total="55.00",
            discounts="0",
            vat="11.00",
            margin="18.00",
            margin_total="44.00",
            count=2,
            items="2",
            payments=[
                {"type": "cash", "totals": _totals("25.00", "27.78", "-2.78", 2, 1, 1)},
                {"type": "giftcard.integration", "totals": _totals("30.00", "30.00", "0", 1, 1, 0)},
            ],
        ),
        "clothing": _summary(
            base_price="699.95",
            total="649.95",
            discounts="50.00",
            vat="129.99",
            margin="194.96",
            margin_total="519.96",
            count=3,
            items="4",
            payments=[
                {"type": "card.external", "totals": _totals("50.00", "50.00", "0", 1, 1, 0)},
                {
                    "type": "cash",
                    "totals": _totals(
                        "600.00",
                        "624.72",
                        "-24.72",
                        4,
                        2,
                        2,
                        base=("197.50", "222.22", "-24.72", 3, 1, 2),
                        foreign=EUR_54,
                    ),
                },
                {"type": "cash.rounding", "totals": _totals("-0.05", "0", "-0.05", 1, 0, 1)},
            ],
        ),
    },
    "returns_by_product_group": {
        "clothing": _summary(
            base_price="-100.00",
            total="-100.00",
            discounts="0",
            vat="-20.00",
            margin="-30.00",
            margin_total="-80.00",
            count=1,
            items="-1",
            payments=[{"type": "cash", "totals": _totals("-100.00", "0", "-100.00", 1, 0, 1)}],
        ),
    },
    "cash_drawer_open_count": 7,
    "number_of_aborted_sales": 1,
    "number_of_initiated_sales": 6,
    "voided_count": 1,
    "event_counts": {"cash_drawer_opened": 7, "sale_initiated": 6, "sale_aborted": 1, "void": 1},
}

EXPECTED_RECONCILIATIONS = [
    {
        "payment_type_identifier": "cash",
        "currency_code": "DKK",
        "should_be_reconciled": True,
        "depositing": "manual",
        "total": D("1082.50"),  # 1000 at open + 82.50 taken in DKK cash
        "counted": D("1080.00"),
        "deposited_amount": D("800.00"),
        "credit": D("250.00"),
        "debit": D("-167.50"),
        "transaction_count": 5,
        "transaction_count_credit": 1,
        "transaction_count_debit": 4,
    },
    {
        "payment_type_identifier": "card.external",
        "currency_code": "DKK",
        "should_be_reconciled": False,
        "depositing": "none",
        "total": D("50.00"),
        "counted": D("50.00"),
        "credit": D("50.00"),
        "debit": D(0),
        "transaction_count": 1,
        "transaction_count_credit": 1,
        "transaction_count_debit": 0,
    },
    {
        "payment_type_identifier": "giftcard.integration",
        "currency_code": "DKK",
        "should_be_reconciled": False,
        "depositing": "none",
        "total": D("30.00"),
        "counted": D("30.00"),
        "credit": D("30.00"),
        "debit": D(0),
        "transaction_count": 1,
        "transaction_count_credit": 1,
        "transaction_count_debit": 0,
    },
    {
        "payment_type_identifier": "cash",
        "currency_code": "EUR",
        "should_be_reconciled": True,
        "depositing": "automatic",
        "total": D("54.00"),
        "counted": D("54.00"),
        "deposited_amount": D("54.00"),
        "credit": D("54.00"),
        "debit": D(0),
        "transaction_count": 1,
        "transaction_count_credit": 1,
        "transaction_count_debit": 0,
    },
]

CLOSE_COUNTED = [
    {"payment_type_identifier": "cash", "currency_code": "DKK", "counted": D("1080.00"), "deposited_amount": D("800")},
    {"payment_type_identifier": "cash", "currency_code": "EUR", "counted": D("54.00")},
]
EVENT_COUNTS = {"cash_drawer_opened": 7, "sale_initiated": 6, "sale_aborted": 1, "void": 1}


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

    assert timing(at) == {
        "timestamp": 1735603199999,
        "timestamp_string": "2024-12-30T23:59:59.999Z",
        "timezone": "UTC",
        "timestamp_date_string": "2024-12-30-23-59",
        "timestamp_week_string": "2025-01",
    }


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
