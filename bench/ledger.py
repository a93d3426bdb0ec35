"""Closing a register after a busy period: the close against a plain SQL aggregate over the same rows.

    .venv/bin/python bench/ledger.py [--sales 100000] [--rounds 3] [--keep]

Against ``DATABASE_URL`` (default PostgreSQL ``retail_bench``, created when missing and migrated) it books
``--sales`` sales into one register period of a register of its own (as the checkout service stores them:
a ``Sale`` with its ``SaleLine``, ``SalePayment`` and ``SaleTax`` rows; a mix of sales, returns and expenses,
three product groups and none, cash with change, EUR cash, card, gift card and cash rounding), refreshes the
planner statistics, and then times, in the same run:

* the close: ``ledger.services.registers.close_register``, the whole service (aggregates, the statement,
  storing it, closing the period, the export items), rolled back after each round so it can be repeated;
* the floor: one plain SQL ``GROUP BY`` per row table (lines, payments, taxes, sales) over the same period.

It prints the best of ``--rounds`` for both and their ratio. Target: the close under 5 s for
100,000 sales on this 2-core machine. The period's rows are deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

BATCH = 5000
SALES_PER_CHECKOUT = 100
GROUPS = ("", "clothing", "food", "toys")

PLAIN_SQL = {
    "lines": """SELECT kind, product_group, COUNT(DISTINCT sale_id), SUM(quantity), SUM(base_price), SUM(sub_total),
                       SUM(total), SUM(total_discounts), SUM(total_tax_amount), SUM(vat_amount),
                       SUM(sales_tax_amount), SUM(margin), SUM(margin_total)
                FROM ledger_saleline WHERE period_id = %s GROUP BY kind, product_group""",
    "payments": """SELECT kind, payment_type, foreign_currency, SIGN(amount), COUNT(*), SUM(amount),
                          SUM(foreign_currency_amount)
                   FROM ledger_salepayment WHERE period_id = %s
                   GROUP BY kind, payment_type, foreign_currency, SIGN(amount)""",
    "taxes": """SELECT kind, product_group, name, rate, type, SUM(amount)
                FROM ledger_saletax WHERE period_id = %s GROUP BY kind, product_group, name, rate, type""",
    "sales": "SELECT kind, voided, COUNT(*) FROM ledger_sale WHERE period_id = %s GROUP BY kind, voided",
}


def best_of(rounds: int, run: Callable[[], Any]) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def book(*, account: Any, register: Any, sales: int) -> Any:
    """``sales`` sales in one open period of ``register``, in bulk; returns the period."""
    from django.db import transaction

    from ledger.models import Checkout, Sale, SaleLine, SalePayment, SaleTax
    from ledger.services.registers import open_register

    period = open_register(account=account, register_identifier=register.identifier, cash_total_at_open=Decimal(500))
    at = datetime.now(UTC)
    shop = register.stock_location
    own = {"account": account, "period": period}
    vat = {"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}
    for start in range(0, sales, BATCH):
        with transaction.atomic():
            numbers = range(start, min(start + BATCH, sales))
            checkouts = Checkout.objects.bulk_create(
                [
                    Checkout(
                        **own,
                        register=register,
                        stock_location=shop,
                        identifier=f"{register.identifier}-co-{n}",
                        timestamp=at,
                        body_hash="0" * 64,
                        document={},
                    )
                    for n in numbers
                    if n % SALES_PER_CHECKOUT == 0
                ]
            )
            kinds = ["return" if n % 20 == 7 else "expense" if n % 50 == 3 else "sale" for n in numbers]
            rows = Sale.objects.bulk_create(
                [
                    Sale(
                        **own,
                        checkout=checkouts[(n - start) // SALES_PER_CHECKOUT],
                        register=register,
                        stock_location=shop,
                        identifier=f"{register.identifier}-s-{n}",
                        sequence_number=n,
                        kind=kind,
                        voided=n % 97 == 5,
                        base_currency_code="DKK",
                        total=Decimal(100 + n % 400) * (-1 if kind != "sale" else 1),
                        timestamp=at,
                        document={},
                    )
                    for n, kind in zip(numbers, kinds, strict=True)
                ]
            )
            lines: list[SaleLine] = []
            payments: list[SalePayment] = []
            taxes: list[SaleTax] = []
            for n, sale in zip(numbers, rows, strict=True):
                if sale.voided:
                    continue
                sign = Decimal(-1) if sale.kind != "sale" else Decimal(1)
                quantity = Decimal(-1) if sale.kind == "return" else Decimal(1)
                row = {**own, "sale": sale, "kind": sale.kind}
                total = sale.total
                tax = (total / 5).quantize(Decimal("0.01"))
                group = "" if sale.kind == "expense" else GROUPS[n % len(GROUPS)]
                lines.append(
                    SaleLine(
                        **row,
                        product_group=group,
                        quantity=quantity,
                        base_price=total,
                        sub_total=total,
                        total=total,
                        total_discounts=0,
                        total_tax_amount=tax,
                        vat_amount=tax,
                        sales_tax_amount=0,
                        margin_total=total - tax,
                        margin=(total - tax) * Decimal("0.4") if sale.kind != "expense" else total - tax,
                    )
                )
                taxes.append(SaleTax(**row, product_group=group, amount=tax, **vat))
                taxes.append(SaleTax(**row, product_group=None, amount=tax, **vat))
                method = n % 5
                first = len(payments)
                if method == 0 and sign > 0:  # cash with change and rounding
                    payments += [
                        SalePayment(**row, payment_type="cash", amount=total + Decimal("50.05")),
                        SalePayment(**row, payment_type="cash", amount=Decimal(-50)),
                        SalePayment(**row, payment_type="cash.rounding", amount=Decimal("-0.05")),
                    ]
                elif method == 1 and sign > 0:  # EUR cash
                    eur = (total / Decimal("7.45")).quantize(Decimal("0.01"))
                    foreign = {"foreign_currency": "EUR", "foreign_currency_amount": eur}
                    payments.append(SalePayment(**row, payment_type="cash", amount=total, **foreign))
                elif method == 2:
                    payments.append(SalePayment(**row, payment_type="giftcard.integration", amount=total))
                elif method == 3 or sign < 0:
                    payments.append(SalePayment(**row, payment_type="cash", amount=total))
                else:
                    payments.append(SalePayment(**row, payment_type="card.external", amount=total))
                # Each payment's part in the sale's one product group, as a checkout stores it.
                payments += [
                    SalePayment(
                        **row,
                        product_group=group,
                        payment_type=p.payment_type,
                        amount=p.amount,
                        foreign_currency=p.foreign_currency,
                        foreign_currency_amount=p.foreign_currency_amount,
                    )
                    for p in payments[first:]
                ]
            SaleLine.objects.bulk_create(lines)
            SalePayment.objects.bulk_create(payments)
            SaleTax.objects.bulk_create(taxes)
    return period


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sales", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the booked rows")
    args = parser.parse_args()

    env = harness.django_env()
    harness.setup_django(env)
    from django.db import connection, transaction

    from accounts import services as account_services
    from accounts.models import Account, Register
    from ledger.models import Checkout, RegisterPeriod, Sale, SaleLine, SalePayment, SaleTax
    from ledger.services.registers import close_register

    account, _ = Account.objects.get_or_create(identifier=harness.ACCOUNT)
    shop = account_services.ensure_demo_structure(account=account)
    register = Register.objects.create(account=account, stock_location=shop, identifier=f"bench-{uuid.uuid4().hex[:8]}")

    started = time.perf_counter()
    period = book(account=account, register=register, sales=args.sales)
    print(f"booked {args.sales} sales into {register.identifier} in {time.perf_counter() - started:.1f} s")
    harness.vacuum_analyze(env["DATABASE_URL"])
    counted = [
        {"payment_type_identifier": "cash", "counted": 0},
        {"payment_type_identifier": "cash", "currency_code": "EUR", "counted": 0},
    ]

    def plain() -> None:
        with connection.cursor() as cursor:
            for sql in PLAIN_SQL.values():
                cursor.execute(sql, [period.pk])
                cursor.fetchall()

    document: dict[str, Any] = {}

    def close() -> None:
        with transaction.atomic():
            statement = close_register(account=account, register_identifier=register.identifier, counted=counted)
            document.update(statement.document)
            transaction.set_rollback(True)  # keep the period open for the next round

    try:
        plain()  # warm the cache for both
        sql_seconds = best_of(args.rounds, plain)
        close_seconds = best_of(args.rounds, close)
    finally:
        if not args.keep:
            # Plain DELETEs: the ORM's delete() would load every row to cascade.
            with transaction.atomic(), connection.cursor() as cursor:
                for model in (SaleTax, SalePayment, SaleLine, Sale, Checkout):
                    table = model._meta.db_table  # a model's own table name, not input
                    cursor.execute(f"DELETE FROM {table} WHERE period_id = %s", [period.pk])  # noqa: S608
                RegisterPeriod.objects.filter(pk=period.pk).delete()
                register.delete()

    summary = document["register_summary"]["all"]
    print(f"statement: {summary['count']} sales, total {summary['total']}, {len(document['reconciliations'])} recs")
    print(f"plain SQL aggregates: {sql_seconds * 1000:8.1f} ms  (best of {args.rounds})")
    print(f"close_register:       {close_seconds * 1000:8.1f} ms  (best of {args.rounds})")
    print(f"ratio close / SQL:    {close_seconds / sql_seconds:8.2f}")
    ok = close_seconds < 5.0
    print(f"target close < 5 s for {args.sales} sales: {'met' if ok else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
