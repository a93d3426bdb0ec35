"""Reads of register periods and close statements (spec: Register close statement).

The figures of a statement come from a handful of GROUP BY queries over the rows stored beside each sale
(``SaleLine``, ``SalePayment``, ``SaleTax``), never from a walk over the sales: closing a register after
100,000 sales costs a few aggregates (measured in ``bench/ledger.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.db.models import Aggregate, Case, CharField, Count, Q, QuerySet, Sum, Value, When
from django.db.models.fields.json import KT, KeyTextTransform, KeyTransform

from accounts.models import Account, Register
from ledger.models import RegisterCloseStatement, RegisterPeriod, Sale, SaleLine, SalePayment, SaleTax
from ledger.statements import LINE_FIGURES, LineTotals, PaymentTotals, PeriodFigures, SaleCounts, TaxTotals


def open_period(*, account: Account, register: Register) -> RegisterPeriod | None:
    return RegisterPeriod.objects.filter(account=account, register=register, closed_at__isnull=True).first()


def last_statement(*, account: Account, register: Register) -> RegisterCloseStatement | None:
    return (
        RegisterCloseStatement.objects.filter(account=account, register=register).order_by("-sequence_number").first()
    )


def _zero(value: Decimal | None) -> Decimal:
    return Decimal(0) if value is None else value


def period_figures(*, account: Account, period: RegisterPeriod) -> PeriodFigures:
    """Everything a statement sums for one period, in four aggregate queries."""
    payments = _payment_totals(account=account, period=period)
    return PeriodFigures(
        counts=_sale_counts(account=account, period=period),
        lines=_line_totals(account=account, period=period),
        payments=[p for p in payments if p.product_group is None],
        taxes=_tax_totals(account=account, period=period),
        group_payments=[p for p in payments if p.product_group is not None],
    )


def _grouped(queryset: QuerySet, by: tuple[str, ...], **aggregates: Aggregate) -> list[dict[str, Any]]:
    """The groups of ``queryset`` by the ``by`` columns, in their order: each group's columns and aggregates by
    name (a sum over nothing as 0), ready to be a totals dataclass. The SQL aliases of the aggregates differ from
    their names, which may be a column's too (a payment total's ``amount`` sums the rows' ``amount``)."""
    alias = {name: f"{name}_agg" for name in aggregates}
    rows = queryset.values(*by).annotate(**{alias[name]: agg for name, agg in aggregates.items()}).order_by(*by)
    return [
        {**{column: r[column] for column in by}, **{name: _zero(r[alias[name]]) for name in aggregates}} for r in rows
    ]


def _sale_counts(*, account: Account, period: RegisterPeriod) -> list[SaleCounts]:
    groups = _grouped(Sale.objects.filter(account=account, period=period), ("kind", "voided"), count=Count("id"))
    return [SaleCounts(**group) for group in groups]


def _line_totals(*, account: Account, period: RegisterPeriod) -> list[LineTotals]:
    sums: dict[str, Any] = {name: Sum(name) for name in LINE_FIGURES}
    rows: Iterable[Any] = (
        SaleLine.objects.filter(account=account, period=period)
        .values("kind", "product_group")
        .annotate(
            # A sale with several lines in one group is one sale of that group.
            sale_count=Count("sale_id", distinct=True),
            item_count=Sum("quantity"),
            **sums,
        )
        .order_by("kind", "product_group")
    )
    return [
        LineTotals(
            kind=r["kind"],
            product_group=r["product_group"],
            sale_count=r["sale_count"],
            item_count=_zero(r["item_count"]),
            figures={name: _zero(r[name]) for name in LINE_FIGURES},
        )
        for r in rows
    ]


def _payment_totals(*, account: Account, period: RegisterPeriod) -> list[PaymentTotals]:
    # Credit is a positive amount, debit a negative one (spec); a zero amount is counted as neither.
    # Foreign-currency payments are split by the sign of their foreign amount, which is the sign of the
    # base amount they were converted to. The payments (product group null) and their parts by product group
    # are read together.
    side = Case(
        When(amount__gt=0, then=Value("credit")),
        When(amount__lt=0, then=Value("debit")),
        default=Value("zero"),
        output_field=CharField(),
    )
    groups = _grouped(
        SalePayment.objects.filter(account=account, period=period).annotate(side=side),
        ("kind", "product_group", "payment_type", "foreign_currency", "side"),
        count=Count("id"),
        amount=Sum("amount"),
        foreign_amount=Sum("foreign_currency_amount"),
    )
    return [PaymentTotals(**group) for group in groups]


def _tax_totals(*, account: Account, period: RegisterPeriod) -> list[TaxTotals]:
    groups = _grouped(
        SaleTax.objects.filter(account=account, period=period),
        ("kind", "product_group", "name", "rate", "type"),
        amount=Sum("amount"),
    )
    return [TaxTotals(**group) for group in groups]


# --- Back-office REST API (/api/v1/) ------------------------------------------------------------


def register_close_statements(
    *, account: Account, register: str | None = None, stock_location: str | None = None
) -> QuerySet[RegisterCloseStatement]:
    """Statements of the account, newest first; ``register`` and ``stock_location`` are identifiers.

    The stock location is the shop the statement was made in (its ``source.shop_id``), which stays true
    when a register is later moved to another shop.
    """
    queryset = RegisterCloseStatement.objects.filter(account=account).select_related("register")
    if register:
        queryset = queryset.filter(register__identifier=register)
    if stock_location:
        queryset = queryset.filter(Q(document__source__shop_id=stock_location))
    return queryset.order_by("-reconciliation_time", "-id")


class _NumberText(KeyTextTransform):
    """A number in a JSON column as the text it is stored as (``"500.00"``), never through a float: PostgreSQL's
    ``->>`` gives that text; SQLite's would give a REAL, so there the JSON text of the value is read (``->``)."""

    def as_sqlite(self, compiler: Any, connection: Any, **extra_context: Any) -> tuple[str, tuple[str | int, ...]]:
        lhs, params, keys = self.preprocess_lhs(compiler, connection)
        return f"({lhs} -> %s)", (*params, "$" + "".join(f".{json.dumps(key)}" for key in keys))


def _number_in(column: str, *path: str) -> _NumberText:
    lhs: Any = column
    for key in path[:-1]:
        lhs = KeyTransform(key, lhs)
    return _NumberText(path[-1], lhs)


def statements_in_short(*, account: Account, register: str | None = None) -> QuerySet[RegisterCloseStatement]:
    """Statements of the account without their document (a list's rows: ``register_close_statements``), each
    with the few values of it a list shows, as text: ``shop`` (``source.shop_id``), ``base_currency_code``,
    ``total`` (of sales, returns and expenses) and ``sale_count``; ``register`` is an identifier."""
    return (
        register_close_statements(account=account, register=register)
        .defer("document")
        .annotate(
            shop=KT("document__source__shop_id"),
            base_currency_code=KT("document__base_currency_code"),
            total=_number_in("document", "register_summary", "all", "total"),
            sale_count=_number_in("document", "register_summary", "sales", "count"),
        )
    )


def statement_by_identifier(*, account: Account, register: Register, identifier: str) -> RegisterCloseStatement | None:
    """The statement a close with this (app-given) identifier made on this register, if any."""
    return RegisterCloseStatement.objects.filter(account=account, register=register, identifier=identifier).first()


def statement_of_close(*, account: Account, register_identifier: str, identifier: str) -> RegisterCloseStatement | None:
    """The statement a close with this (app-given) identifier made on the register named so, if any."""
    return RegisterCloseStatement.objects.filter(
        account=account, register__identifier=register_identifier, identifier=identifier
    ).first()
