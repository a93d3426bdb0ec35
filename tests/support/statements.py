"""Register close statements in tests: stored sales with the rows a statement sums (``book_sale`` of a
``SaleSpec``, booked as a checkout books), and a golden day of one register worked out by hand (``DAY`` and the
figures its statement must show)."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from django.db import transaction

from accounts.models import Account, Register, StockLocation
from ledger.models import Checkout, RegisterPeriod, Sale, SaleLine, SalePayment, SaleTax
from ledger.services.registers import open_period_for
from ledger.statements import product_group_totals, split_payment
from tests.support.tenants import Tenant

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


def store_sale(
    *,
    account: Account,
    register: Register,
    stock_location: StockLocation,
    period: RegisterPeriod,
    number: int,
    kind: str,
    voided: bool,
    total: Decimal,
    at: datetime,
    document: dict[str, Any],
) -> Sale:
    """A checkout ``co-<number>`` and its sale ``sale-<number>`` in ``period``, as the checkout service stores them
    (without the sale's rows)."""
    where = {"account": account, "register": register, "stock_location": stock_location, "period": period}
    checkout = Checkout.objects.create(
        **where, identifier=f"co-{number}", voided=voided, timestamp=at, body_hash="0" * 64, document={}
    )
    return Sale.objects.create(
        **where,
        checkout=checkout,
        identifier=f"sale-{number}",
        sequence_number=number,
        kind=kind,
        voided=voided,
        base_currency_code="DKK",
        total=total,
        timestamp=at,
        document=document,
    )


def book_sale(*, tenant: Tenant, register: Register, spec: SaleSpec) -> Sale:
    """Store a sale as the checkout service does: one transaction, booked into the register's open period."""
    number = next(_numbers)
    at = datetime(2025, 1, 15, 12, 0, tzinfo=UTC)
    account = tenant.account
    with transaction.atomic():
        period = open_period_for(account=account, register=register, at=at)
        sale = store_sale(
            account=account,
            register=register,
            stock_location=register.stock_location,
            period=period,
            number=number,
            kind=spec.kind,
            voided=spec.voided,
            total=spec.total,
            at=at,
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


def _payment(payment_type: str, *totals: Any, dkk: tuple[str, str, str, int, int, int] | None = None) -> dict[str, Any]:
    """A summary's payment of ``payment_type``; ``dkk``: the totals of its DKK payments alone, where B's 54 EUR are
    among them."""
    return {"type": payment_type, "totals": _totals(*totals, base=dkk, foreign=EUR_54 if dkk else None)}


EUR_54: dict[str, dict[str, Any]] = {
    "amount": {"EUR": D("54.00")},
    "credit": {"EUR": D("54.00")},
    "count": {"EUR": 1},
    "count_credit": {"EUR": 1},
}

# Worked out by hand from DAY (VAT 25% included in every price; margin_total = total - VAT, margin = margin_total -
# cost: the profit; a line without a cost, the expense, has its whole net amount as margin).
#
# The payments of each summary (total, credit, debit, count, count credit, count debit). Cash of all: 250 - 25 +
# 402.50 - 2.50 - 100 - 40; in DKK only: 250 - 25 - 2.50 - 100 - 40. By product group, A's payments split 25 : 200
# over its groups ("" first, clothing takes the remainder): cash 250 -> 27.78 and 222.22, cash -25 -> -2.78 and
# -22.22. No group: A's 27.78 - 2.78, E's -40; clothing: A's 222.22 and -22.22, B's 402.50 (54 EUR) and -2.50, R's
# -100.
CARD_50 = _payment("card.external", "50.00", "50.00", "0", 1, 1, 0)
ROUNDING = _payment("cash.rounding", "-0.05", "0", "-0.05", 1, 0, 1)
GIFTCARD_30 = _payment("giftcard.integration", "30.00", "30.00", "0", 1, 1, 0)
CASH_ALL = _payment("cash", "485.00", "652.50", "-167.50", 6, 2, 4, dkk=("82.50", "250.00", "-167.50", 5, 1, 4))
CASH_SALES = _payment("cash", "625.00", "652.50", "-27.50", 4, 2, 2, dkk=("222.50", "250.00", "-27.50", 3, 1, 2))
CASH_RETURNED = _payment("cash", "-100.00", "0", "-100.00", 1, 0, 1)
CASH_EXPENSE = _payment("cash", "-40.00", "0", "-40.00", 1, 0, 1)
CASH_NO_GROUP = _payment("cash", "-15.00", "27.78", "-42.78", 3, 1, 2)
CASH_NO_GROUP_SALES = _payment("cash", "25.00", "27.78", "-2.78", 2, 1, 1)
CASH_CLOTHING = _payment("cash", "500.00", "624.72", "-124.72", 5, 2, 3, dkk=("97.50", "222.22", "-124.72", 4, 1, 3))
CASH_CLOTHING_SALES = _payment(
    "cash", "600.00", "624.72", "-24.72", 4, 2, 2, dkk=("197.50", "222.22", "-24.72", 3, 1, 2)
)

# The figures of each summary: base_price, total (and sub_total), discounts, VAT, margin, margin_total, count of
# sales, count of items. The sales: 200 + 25 + 449.95 + 30 + 50 before discounts, 200 + 25 + 399.95 + 30 + 50 after;
# VAT 40 + 5 + 79.99 + 6 + 10; margin 60 + 8 + 119.96 + 10 + 15. All: the sales' less R's 100 and E's 40 (VAT 20
# and 8, margin 30 and 32); 6 sales (A B C D R E; V is voided), 6 items sold - 1 returned + 1 expense.
RETURNS = _summary("-100.00", "-100.00", "0", "-20.00", "-30.00", "-80.00", 1, "-1", [CASH_RETURNED])
EXPECTED_SUMMARY = {
    "id": "reg-1-1",
    "opened_at": D("1736928000.0"),
    "cash_total_at_open": D("1000.00"),
    "all": _summary(
        "614.95", "564.95", "50.00", "112.99", "150.96", "451.96", 6, "6", [CARD_50, CASH_ALL, ROUNDING, GIFTCARD_30]
    ),
    "sales": _summary(
        "754.95", "704.95", "50.00", "140.99", "212.96", "563.96", 4, "6", [CARD_50, CASH_SALES, ROUNDING, GIFTCARD_30]
    ),
    "returns": RETURNS,
    "expenses": _summary("-40.00", "-40.00", "0", "-8.00", "-32.00", "-32.00", 1, "1", [CASH_EXPENSE]),
    "all_by_product_group": {
        # A's candy, C, E (margin 8 + 10 - 32)
        "__none__": _summary("15.00", "15.00", "0", "3.00", "-14.00", "12.00", 3, "3", [CASH_NO_GROUP, GIFTCARD_30]),
        # A's T-shirts, B, D, R
        "clothing": _summary(
            "599.95", "549.95", "50.00", "109.99", "164.96", "439.96", 4, "3", [CARD_50, CASH_CLOTHING, ROUNDING]
        ),
    },
    "sales_by_product_group": {
        "__none__": _summary(
            "55.00", "55.00", "0", "11.00", "18.00", "44.00", 2, "2", [CASH_NO_GROUP_SALES, GIFTCARD_30]
        ),
        "clothing": _summary(
            "699.95", "649.95", "50.00", "129.99", "194.96", "519.96", 3, "4", [CARD_50, CASH_CLOTHING_SALES, ROUNDING]
        ),
    },
    "returns_by_product_group": {"clothing": RETURNS},
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
