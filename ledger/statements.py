"""The register close statement as a pure computation (spec: Register close statement).

``ledger.selectors.registers.period_figures`` reads a period's aggregates (a few GROUP BY queries); the
functions here turn those rows, the register's configuration and the counted amounts into the spec's JSON
form. Nothing here touches the database, so the arithmetic is tested on its own (golden and property
tests in ``tests/ledger/test_statement*.py``).

Sign convention of the stored rows: returns have negative quantities and amounts, expenses a positive
quantity and negative amounts, cash change and cashback are negative ``cash`` payments, and
``cash.rounding`` is a payment entry of its own. Sums are exact Decimals and are not rounded: every stored
figure already has the currency's precision, so a sum of them has too. A summary by product group sums the parts
of the payments attributed to its group when the sale was stored (``split_payment``).

Margins are amounts, as the platform's statement exporter reads them (cost of a period =
``margin_total - margin``): ``margin_total`` sums the net amounts the margin is measured on and ``margin`` the
profit (each line's ``margin_total`` less its cost, where a cost is known); see docs/amounts.md.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any
from zoneinfo import ZoneInfo

from accounts.models import CASH_ROUNDING
from accounts.money import minor_unit
from core.errors import InvalidInput
from core.timezones import is_time_zone

CASH = "cash"
NO_GROUP = "__none__"
KINDS = ("sale", "return", "expense")

# The money figures of a line item that a sales summary sums, as the spec names them.
LINE_FIGURES = (
    "base_price",
    "sub_total",
    "total",
    "total_discounts",
    "total_tax_amount",
    "vat_amount",
    "sales_tax_amount",
    "margin",
    "margin_total",
)

# Spec: Events, "Events counted in a register close statement" (the full list of counted events).
EVENT_COUNT_KEYS = (
    "app_launch",
    "app_quit",
    "basket_saved",
    "cash_drawer_opened",
    "cashier_selected",
    "customer_added",
    "customer_removed",
    "discount_added",
    "discount_removed",
    "expenses",
    "line_item_added",
    "line_item_quantity_adjusted",
    "line_item_removed",
    "line_item_summaries_added",
    "line_item_summaries_removed",
    "payment_reversal",
    "post_payment_fiscal_event",
    "pre_copy_print_fiscal_event",
    "receipt_print_copy",
    "register_closed",
    "register_opened",
    "return",
    "sale",
    "sale_aborted",
    "sale_initiated",
    "sales_quote_given",
    "void",
    "x_report_generated",
)

ZERO = Decimal(0)


# --- What the selectors read ----------------------------------------------------------------------------


@dataclass(frozen=True)
class SaleCounts:
    kind: str
    voided: bool
    count: int


@dataclass(frozen=True)
class LineTotals:
    """Sums of the line items of one kind in one product group ("" for none)."""

    kind: str
    product_group: str
    sale_count: int
    item_count: Decimal
    figures: dict[str, Decimal]


@dataclass(frozen=True)
class PaymentTotals:
    """Sums of the payments of one kind, type, foreign currency ("" for base) and side (credit/debit/zero);
    with a ``product_group`` ("" for none), of the parts of them attributed to that group (``split_payment``)."""

    kind: str
    payment_type: str
    foreign_currency: str
    side: str
    count: int
    amount: Decimal
    foreign_amount: Decimal
    product_group: str | None = None


@dataclass(frozen=True)
class TaxTotals:
    kind: str
    product_group: str | None  # None: the sales' summary.taxes; else the line items' taxes of that group
    name: str
    rate: Decimal
    type: str
    amount: Decimal


@dataclass(frozen=True)
class PeriodFigures:
    counts: list[SaleCounts]
    lines: list[LineTotals]
    payments: list[PaymentTotals]
    taxes: list[TaxTotals]
    group_payments: list[PaymentTotals] = field(default_factory=list)  # each with its product_group


# --- A sale's payments by product group ---------------------------------------------------------------


def product_group_totals(lines: Iterable[tuple[str, Decimal]]) -> list[tuple[str, Decimal]]:
    """A sale's line totals summed by product group ("" for none), in the order of the groups' names."""
    sums: dict[str, Decimal] = defaultdict(lambda: ZERO)
    for group, total in lines:
        sums[group] += total
    return sorted(sums.items())


def split_payment(amount: Decimal, groups: Sequence[tuple[str, Decimal]], places: int) -> list[tuple[str, Decimal]]:
    """The parts of one payment of a sale attributed to the sale's product groups (docs/decisions.md).

    ``groups`` are the sale's ``product_group_totals``. Each group's part is the amount times the group's share
    of the sale's line total, rounded half-up to ``places`` decimals; the last group takes the remainder, so the
    parts add up exactly to the amount. A sale whose line totals add up to zero (an even exchange) is split by
    the groups' absolute totals, and evenly when those are zero too. No groups (a sale without lines): no parts.
    """
    if not groups:
        return []
    weights = [total for _, total in groups]
    if sum(weights, ZERO) == 0:
        weights = [abs(total) for total in weights]
    if sum(weights, ZERO) == 0:
        weights = [Decimal(1)] * len(groups)
    whole = sum(weights, ZERO)
    step = Decimal(1).scaleb(-places)
    parts = [(amount * weight / whole).quantize(step, rounding=ROUND_HALF_UP) for weight in weights[:-1]]
    parts.append(amount - sum(parts, ZERO))
    return [(group, part) for (group, _), part in zip(groups, parts, strict=True)]


# --- What the service knows ---------------------------------------------------------------------------


@dataclass(frozen=True)
class CountedAmount:
    """One entry of the close body's ``counted``."""

    payment_type_identifier: str
    currency_code: str
    counted: Decimal
    deposited_amount: Decimal | None = None
    index: int = 0  # its place in the body, for error paths


@dataclass(frozen=True)
class StatementContext:
    base_currency_code: str
    sequence_number: int
    opened_at: datetime
    cash_total_at_open: Decimal
    reconciliation_time: datetime
    payment_types: Sequence[dict[str, Any]]
    counted: Sequence[CountedAmount]
    source: dict[str, str]
    shop_info: dict[str, Any]
    summary_id: str
    timezone: str = "UTC"  # the account's tz database name: the zone of the timing's local strings
    comment: str | None = None
    event_counts: dict[str, int] = field(default_factory=dict)


# --- Sales summaries ------------------------------------------------------------------------------------


def _figures(lines: Iterable[LineTotals]) -> tuple[dict[str, Decimal], Decimal, int]:
    sums = dict.fromkeys(LINE_FIGURES, ZERO)
    items = ZERO
    sales = 0
    for line in lines:
        for name in LINE_FIGURES:
            sums[name] += line.figures[name]
        items += line.item_count
        sales += line.sale_count
    return sums, items, sales


def payment_summaries(payments: Iterable[PaymentTotals]) -> list[dict[str, Any]]:
    """Spec: sales summary ``payments``: one entry per payment type used (``cash.rounding`` included)."""
    by_type: dict[str, list[PaymentTotals]] = defaultdict(list)
    for row in payments:
        by_type[row.payment_type].append(row)
    return [{"type": name, "totals": _payment_totals(rows)} for name, rows in sorted(by_type.items())]


def _payment_totals(rows: list[PaymentTotals]) -> dict[str, Any]:
    def amount(selected: Iterable[PaymentTotals]) -> Decimal:
        return sum((r.amount for r in selected), ZERO)

    def count(selected: Iterable[PaymentTotals]) -> int:
        return sum(r.count for r in selected)

    base = [r for r in rows if not r.foreign_currency]
    totals: dict[str, Any] = {}
    for prefix, selected in (("base_currency_", base), ("", rows)):
        credit = [r for r in selected if r.side == "credit"]
        debit = [r for r in selected if r.side == "debit"]
        total_name = f"{prefix}total"
        count_name = f"{prefix}transaction_count"
        totals[total_name] = amount(selected)
        totals[f"{total_name}_credit"] = amount(credit)
        totals[f"{total_name}_debit"] = amount(debit)
        totals[count_name] = count(selected)
        totals[f"{count_name}_credit"] = count(credit)
        totals[f"{count_name}_debit"] = count(debit)
    maps: dict[str, dict[str, Any]] = {
        name: {}
        for name in (
            "foreign_currencies",
            "foreign_currencies_credit",
            "foreign_currencies_debit",
            "foreign_currencies_transaction_count",
            "foreign_currencies_transaction_count_credit",
            "foreign_currencies_transaction_count_debit",
        )
    }
    for row in sorted((r for r in rows if r.foreign_currency), key=lambda r: r.foreign_currency):
        code = row.foreign_currency
        maps["foreign_currencies"][code] = maps["foreign_currencies"].get(code, ZERO) + row.foreign_amount
        maps["foreign_currencies_transaction_count"][code] = (
            maps["foreign_currencies_transaction_count"].get(code, 0) + row.count
        )
        if row.side in ("credit", "debit"):
            amounts, counts = (
                maps[f"foreign_currencies_{row.side}"],
                maps[f"foreign_currencies_transaction_count_{row.side}"],
            )
            amounts[code] = amounts.get(code, ZERO) + row.foreign_amount
            counts[code] = counts.get(code, 0) + row.count
    totals.update(maps)
    return totals


def tax_summaries(taxes: Iterable[TaxTotals]) -> list[dict[str, Any]]:
    """Spec: ``tax_summaries``, one per tax (name, rate, type) registered in the period."""
    sums: dict[tuple[str, str, Decimal], Decimal] = defaultdict(lambda: ZERO)
    for row in taxes:
        sums[(row.type, row.name, row.rate)] += row.amount
    return [
        {"amount": amount, "rate": rate, "name": name, "type": type_}
        for (type_, name, rate), amount in sorted(sums.items())
    ]


def sales_summary(
    *,
    sale_count: int,
    lines: Sequence[LineTotals],
    taxes: Sequence[TaxTotals],
    payments: Sequence[PaymentTotals],
) -> dict[str, Any]:
    """Spec: sales summary."""
    sums, item_count, _ = _figures(lines)
    return {
        "base_price": sums["base_price"],
        "margin": sums["margin"],
        "margin_total": sums["margin_total"],
        "sub_total": sums["sub_total"],
        "total": sums["total"],
        "total_discounts": sums["total_discounts"],
        "total_tax_amount": sums["total_tax_amount"],
        "count": sale_count,
        "item_count": item_count,
        "vat_amount": sums["vat_amount"],
        "sales_tax_amount": sums["sales_tax_amount"],
        "payments": payment_summaries(payments),
        "tax_summaries": tax_summaries(taxes),
    }


def _by_product_group(figures: PeriodFigures, kinds: tuple[str, ...]) -> dict[str, Any]:
    groups = sorted({line.product_group for line in figures.lines if line.kind in kinds})
    out: dict[str, Any] = {}
    for group in groups:
        lines = [line for line in figures.lines if line.kind in kinds and line.product_group == group]
        _, _, sales = _figures(lines)  # a sale is in one kind, so its group counts add across kinds
        taxes = [t for t in figures.taxes if t.kind in kinds and t.product_group == group]
        payments = [p for p in figures.group_payments if p.kind in kinds and p.product_group == group]
        out[group or NO_GROUP] = sales_summary(sale_count=sales, lines=lines, taxes=taxes, payments=payments)
    return out


def _summary_of(figures: PeriodFigures, kinds: tuple[str, ...]) -> dict[str, Any]:
    return sales_summary(
        sale_count=sum(c.count for c in figures.counts if c.kind in kinds and not c.voided),
        lines=[line for line in figures.lines if line.kind in kinds],
        taxes=[t for t in figures.taxes if t.kind in kinds and t.product_group is None],
        payments=[p for p in figures.payments if p.kind in kinds],
    )


def register_summary(figures: PeriodFigures, context: StatementContext) -> dict[str, Any]:
    """Spec: ``register_summary``. ``all`` is computed over the rows of the three kinds, so it equals
    sales + returns + expenses by construction."""
    events = context.event_counts
    return {
        "id": context.summary_id,
        "opened_at": epoch_seconds(context.opened_at),
        "cash_total_at_open": context.cash_total_at_open,
        "all": _summary_of(figures, KINDS),
        "sales": _summary_of(figures, ("sale",)),
        "returns": _summary_of(figures, ("return",)),
        "expenses": _summary_of(figures, ("expense",)),
        "all_by_product_group": _by_product_group(figures, KINDS),
        "sales_by_product_group": _by_product_group(figures, ("sale",)),
        "returns_by_product_group": _by_product_group(figures, ("return",)),
        "cash_drawer_open_count": events.get("cash_drawer_opened", 0),
        "number_of_aborted_sales": events.get("sale_aborted", 0),
        "number_of_initiated_sales": events.get("sale_initiated", 0),
        # The ledger's own count, not the POS's: a voided sale is stored, with no lines or payments.
        "voided_count": sum(c.count for c in figures.counts if c.voided),
        "event_counts": dict(events),
    }


# --- Reconciliations ------------------------------------------------------------------------------------


@dataclass
class _Pending:
    payment_type_identifier: str
    currency_code: str
    should_be_reconciled: bool
    depositing: str
    total: Decimal
    rows: list[PaymentTotals]
    foreign: bool = False

    @property
    def key(self) -> tuple[str, str]:
        return (self.payment_type_identifier, self.currency_code)


def _pending_reconciliations(payments: Sequence[PaymentTotals], context: StatementContext) -> list[_Pending]:
    base = context.base_currency_code
    configured = [(str(p["identifier"]), bool(p["should_be_reconciled"])) for p in context.payment_types]
    known = {name for name, _ in configured}
    # Not in the spec: a type used in the period but not configured on the register still gets a
    # reconciliation (not reconciled), so that the reconciliations always add up to the payments taken.
    used = sorted({p.payment_type for p in payments} - known - {CASH_ROUNDING})
    pending: list[_Pending] = []
    for name, reconciled in [*configured, *((name, False) for name in used)]:
        if name == CASH:
            rows = [p for p in payments if p.payment_type == CASH and not p.foreign_currency]
            total = context.cash_total_at_open + sum((r.amount for r in rows), ZERO)
            pending.append(_Pending(name, base, reconciled, "manual", total, rows))
        else:
            rows = [p for p in payments if p.payment_type == name]
            pending.append(_Pending(name, base, reconciled, "none", sum((r.amount for r in rows), ZERO), rows))
    foreign_cash = sorted({p.foreign_currency for p in payments if p.payment_type == CASH and p.foreign_currency})
    for code in foreign_cash:
        rows = [p for p in payments if p.payment_type == CASH and p.foreign_currency == code]
        total = sum((r.foreign_amount for r in rows), ZERO)
        pending.append(_Pending(CASH, code, True, "automatic", total, rows, foreign=True))
    return pending


def _decimals_fit(amount: Decimal, currency_code: str) -> bool:
    """No finer than the currency's minor unit: a drawer holds no tenth of an øre."""
    return amount == amount.quantize(Decimal(1).scaleb(-minor_unit(currency_code)))


def reconciliations(payments: Sequence[PaymentTotals], context: StatementContext) -> list[dict[str, Any]]:
    """Spec: ``reconciliations``: one per configured payment type, one per foreign currency taken in cash.

    ``counted`` is the body's for a reconciled entry (required) and equals ``total`` otherwise. Base cash
    is deposited by hand (``deposited_amount`` from the body, 0 when absent); foreign cash is deposited
    automatically, all of what was counted. Raises ``InvalidInput`` naming every problem of the body.
    """
    pending = _pending_reconciliations(payments, context)
    by_key = {p.key: p for p in pending}
    errors: list[dict[str, str]] = []
    given: dict[tuple[str, str], CountedAmount] = {}
    for entry in context.counted:
        path = f"counted[{entry.index}]"
        key = (entry.payment_type_identifier, entry.currency_code)
        target = by_key.get(key)
        if target is None:
            errors.append(
                _error(
                    f"{path}.payment_type_identifier",
                    f"{key[0]} in {key[1]} is not a reconciliation of this register period",
                    "unknown_payment_type",
                )
            )
            continue
        if key in given:
            errors.append(_error(path, f"{key[0]} in {key[1]} is counted twice", "duplicate"))
            continue
        given[key] = entry
        if not _decimals_fit(entry.counted, entry.currency_code):
            errors.append(_error(f"{path}.counted", f"has more decimals than {entry.currency_code} has", "precision"))
        if target.payment_type_identifier == CASH and entry.counted < 0:
            errors.append(_error(f"{path}.counted", "cash counted cannot be negative", "out_of_range"))
        if entry.deposited_amount is not None:
            if target.depositing != "manual":
                if entry.deposited_amount != 0:
                    errors.append(
                        _error(
                            f"{path}.deposited_amount",
                            "only cash in the base currency is deposited by hand",
                            "not_allowed",
                        )
                    )
            elif entry.deposited_amount < 0 or entry.deposited_amount > entry.counted:
                errors.append(
                    _error(f"{path}.deposited_amount", "must be between 0 and the counted amount", "out_of_range")
                )
            elif not _decimals_fit(entry.deposited_amount, entry.currency_code):
                errors.append(
                    _error(f"{path}.deposited_amount", f"has more decimals than {entry.currency_code} has", "precision")
                )
    for target in pending:
        if target.should_be_reconciled and target.key not in given:
            errors.append(
                _error(
                    "counted",
                    f"a counted amount is required for {target.payment_type_identifier} in {target.currency_code}",
                    "required",
                )
            )
    if errors:
        raise InvalidInput(errors)
    return [_reconciliation(target, given.get(target.key)) for target in pending]


def _reconciliation(target: _Pending, entry: CountedAmount | None) -> dict[str, Any]:
    def amount(side: str) -> Decimal:
        return sum(((r.foreign_amount if target.foreign else r.amount) for r in target.rows if r.side == side), ZERO)

    def count(side: str | None = None) -> int:
        return sum(r.count for r in target.rows if side is None or r.side == side)

    counted = entry.counted if (entry is not None and target.should_be_reconciled) else target.total
    out: dict[str, Any] = {
        "payment_type_identifier": target.payment_type_identifier,
        "currency_code": target.currency_code,
        "should_be_reconciled": target.should_be_reconciled,
        "depositing": target.depositing,
        "total": target.total,
        "counted": counted,
    }
    if target.depositing == "manual":
        deposited = entry.deposited_amount if entry is not None else None
        out["deposited_amount"] = deposited if deposited is not None else ZERO
    elif target.depositing == "automatic":
        out["deposited_amount"] = counted
    out.update(
        {
            "credit": amount("credit"),
            "debit": amount("debit"),
            "transaction_count": count(),
            "transaction_count_credit": count("credit"),
            "transaction_count_debit": count("debit"),
        }
    )
    return out


def _error(field_name: str, message: str, code: str) -> dict[str, str]:
    return {"field": field_name, "message": message, "code": code}


def cash_left_in_drawer(document: dict[str, Any]) -> Decimal:
    """What a statement left in the drawer for the next period: counted base cash minus its deposit."""
    for entry in document.get("reconciliations", []):
        if (
            entry.get("payment_type_identifier") == CASH
            and entry.get("currency_code") == document.get("base_currency_code")
            and entry.get("depositing") == "manual"
        ):
            return Decimal(str(entry.get("counted", 0))) - Decimal(str(entry.get("deposited_amount", 0)))
    return ZERO


# --- The statement ------------------------------------------------------------------------------------


def epoch_seconds(value: datetime) -> Decimal:
    """Unix seconds with decimals (milliseconds), as the spec's timestamps are."""
    return Decimal(str(round(value.timestamp(), 3)))


def timing(at: datetime, timezone: str) -> dict[str, Any]:
    """Spec: a statement's ``timing``: milliseconds since the epoch and ``timestamp_string`` in UTC; ``timezone``
    and the date and week strings in the account's zone (as a sale's are), so a close just after local midnight
    is dated the local day. A zone the tz database does not know is taken as UTC."""
    if not is_time_zone(timezone):
        timezone = "UTC"
    utc = at.astimezone(UTC)
    local = at.astimezone(ZoneInfo(timezone))
    # ISO week-numbering year: 2024-12-30 is in week 1 of 2025.
    week = local.isocalendar()
    return {
        "timestamp": round(utc.timestamp() * 1000),
        "timestamp_string": utc.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "timezone": timezone,
        "timestamp_date_string": local.strftime("%Y-%m-%d-%H-%M"),
        "timestamp_week_string": f"{week.year:04d}-{week.week:02d}",
    }


def statement_document(figures: PeriodFigures, context: StatementContext) -> dict[str, Any]:
    """Spec: Register close statement, the exact JSON form (with Decimals) stored and exported."""
    document: dict[str, Any] = {"base_currency_code": context.base_currency_code}
    if context.comment:
        document["comment"] = context.comment
    document.update(
        {
            "reconciliation_time": epoch_seconds(context.reconciliation_time),
            "sequence_number": context.sequence_number,
            "shop_info": context.shop_info,
            "source": context.source,
            "register_summary": register_summary(figures, context),
            "reconciliations": reconciliations(figures.payments, context),
            "timing": timing(context.reconciliation_time, context.timezone),
        }
    )
    return document
