"""Checkouts and the sales they yield (spec: Checkout, Sale, Discount Summary, Tax Summary, Expense, Events).

A checkout is validated (``ledger.bodies.checkouts.CHECKOUT``, then against the account's records), cleaned
(timing strings derived, source filled in, private customer fields dropped) and stored with its warnings
(what the spec does not state but looked odd; docs/amounts.md) and one ``Sale`` per sale part, the rows a
register close statement sums, its stock moves and its export items, in one transaction. Posting the same
checkout again stores nothing: registers retry when an answer is lost.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any
from zoneinfo import ZoneInfo

from django.db import IntegrityError, transaction

from accounts.models import Account, Register
from accounts.money import minor_unit
from core import bulk, outbox
from core.errors import Conflict, InvalidInput
from core.nodes import INVALID
from core.timezones import is_time_zone
from ledger.bodies.checkouts import check_checkout
from ledger.checks import is_expense_line
from ledger.models import (
    Checkout,
    Expense,
    RegisterPeriod,
    Sale,
    SaleKind,
    SaleLine,
    SalePayment,
    SaleTax,
)
from ledger.outbox import checkout_key, sale_key
from ledger.services.registers import open_period_of
from ledger.services.stock import record_sale_stock_events, stock_event_entries
from ledger.statements import product_group_totals, split_payment

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
CUSTOMER_KEPT_WITHOUT_ORGANIZATION = ("identifier",)


@dataclass(frozen=True)
class CheckoutResult:
    checkout: Checkout
    created: bool


@dataclass
class _SalePlan:
    """One sale part, validated and cleaned, ready to be stored."""

    index: int
    identifier: str
    sequence_number: int
    kind: str
    total: Decimal
    document: dict[str, Any]
    lines: list[dict[str, Any]] = field(default_factory=list)
    payments: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)


# --- Idempotency ------------------------------------------------------------------------------------


def _canonical(value: Any, out: list[str]) -> None:
    if isinstance(value, str):
        out.append(encode_basestring(value))
    elif isinstance(value, dict):
        out.append("{")
        for n, key in enumerate(sorted(value)):
            out.append(("," if n else "") + encode_basestring(key) + ":")
            _canonical(value[key], out)
        out.append("}")
    elif isinstance(value, list):
        out.append("[")
        for n, element in enumerate(value):
            if n:
                out.append(",")
            _canonical(element, out)
        out.append("]")
    elif isinstance(value, bool) or value is None:
        out.append("true" if value else "false" if value is not None else "null")
    elif isinstance(value, int):
        out.append(str(value))
    elif isinstance(value, Decimal):
        # 10, 10.0 and 1E+1 are one number: a register that reformats a retried body still matches.
        out.append(format(value.normalize(), "f") if value.is_finite() else str(value))
    else:
        out.append(json.dumps(value))


def body_hash(body: Any) -> str:
    """SHA-256 of the body's canonical JSON: sorted keys, no spaces, numbers in their shortest form."""
    out: list[str] = []
    _canonical(body, out)
    return hashlib.sha256("".join(out).encode("utf-8", "surrogatepass")).hexdigest()


def _stored(*, account: Account, identifier: str, digest: str) -> Checkout | None:
    """The stored checkout when this is a replay of it; a different body under its identifier is a 409."""
    checkout = Checkout.objects.filter(account=account, identifier=identifier).first()
    if checkout is None:
        return None
    if checkout.body_hash != digest:
        raise Conflict(
            f"The checkout identifier '{identifier[:100]}' is already used by a different checkout",
            field="identifier",
            code="duplicate",
        )
    return checkout


# --- Cleaning ---------------------------------------------------------------------------------------


def instant(timestamp: Decimal | int) -> datetime:
    """Unix seconds with decimals as an aware UTC datetime, exact to the microsecond (no float)."""
    seconds = Decimal(timestamp)
    whole = int(seconds)
    return EPOCH + timedelta(seconds=whole, microseconds=int((seconds - whole) * 1_000_000))


def derive_timing(timing: dict[str, Any], *, default_timezone: str) -> dict[str, Any] | None:
    """Spec: sale.timing. Fills in the time zone (the account's when absent) and the strings a register
    left out: ``timestamp_string`` (ISO 8601, local offset), ``timestamp_date_string``
    (``YYYY-MM-DD-HH-mm``, local) and ``timestamp_week_string`` (``YYYY-WW``, ISO week-year and week).
    None when the time zone is unknown."""
    name = timing.get("timezone") or default_timezone
    if not is_time_zone(name):
        return None
    local = instant(timing["timestamp"]).astimezone(ZoneInfo(name))
    week = local.isocalendar()
    derived = {
        "timezone": name,
        "timestamp_string": local.isoformat(timespec="milliseconds"),
        "timestamp_date_string": local.strftime("%Y-%m-%d-%H-%M"),
        "timestamp_week_string": f"{week.year:04d}-{week.week:02d}",
    }
    return {**derived, **timing}  # what the register sent wins


def strip_customer(customer: dict[str, Any]) -> dict[str, Any]:
    """Spec: summary.customer. Name and address are kept only for a business customer (one with an
    organization number); of a private customer only the identifier is stored."""
    if (customer.get("organization_number") or "").strip():
        return customer
    return {k: v for k, v in customer.items() if k in CUSTOMER_KEPT_WITHOUT_ORGANIZATION}


def _fill_source(source: dict[str, Any], register: Register, errors: list[dict[str, str]]) -> dict[str, Any]:
    """Spec: sale.source. Checks the posted shop and market against the register's, fills the rest in."""
    shop = register.stock_location
    market = shop.market
    for name, actual in (("shop_id", shop.identifier), ("market_id", market.identifier)):
        if name in source and source[name] != actual:
            errors.append(
                {
                    "field": f"source.{name}",
                    "message": f"is '{source[name][:100]}', but register '{register.identifier}' is in '{actual}'",
                    "code": "mismatch",
                }
            )
    known = {
        "market_id": market.identifier,
        "market_name": market.name,
        "shop_id": shop.identifier,
        "shop_name": shop.name,
        "register_name": register.name,
    }
    filled = {name: value for name, value in known.items() if value and name not in source}
    return {**source, **filled}


def line_margins(line: dict[str, Any]) -> tuple[Decimal, Decimal]:
    """A line's ``(margin_total, margin)``, as amounts (docs/amounts.md): ``margin_total`` is the amount the margin
    is measured on (the line's net: ``sub_total - vat_amount``) and ``margin`` the profit, ``margin_total`` less
    the line's ``cost_price`` (a line amount) where a cost is known. What the register sent wins."""
    if "margin_total" in line:
        margin_total = Decimal(line["margin_total"])
    else:
        margin_total = Decimal(line["sub_total"]) - Decimal(line["vat_amount"])
    if "margin" in line:
        return margin_total, Decimal(line["margin"])
    cost = Decimal(line["cost_price"]) if "cost_price" in line else Decimal(0)
    return margin_total, margin_total - cost


def _kind(basket: dict[str, Any]) -> str:
    if basket["is_return"]:
        return SaleKind.RETURN
    if any(is_expense_line(line) for line in basket["line_items"]):
        return SaleKind.EXPENSE
    return SaleKind.SALE


def _check_expenses(*, account: Account, parts: Sequence[dict[str, Any]], warnings: list[dict[str, str]]) -> None:
    """Spec: Expense. An expense line naming no expense configured for the account is a warning (one query): the
    register booked money out of the drawer, and the expense may have been deleted since."""
    used = [
        (i, j, line["behavior"]["expense"]["identifier"])
        for i, part in enumerate(parts)
        for j, line in enumerate(part["basket"]["line_items"])
        if is_expense_line(line)
    ]
    if not used:
        return
    known = set(
        Expense.objects.filter(account=account, expense_id__in={e for _, _, e in used}).values_list(
            "expense_id", flat=True
        )
    )
    for i, j, expense_id in used:
        if expense_id not in known:
            warnings.append(
                {
                    "field": f"sales[{i}].basket.line_items[{j}].behavior.expense.identifier",
                    "message": f"'{expense_id[:100]}' is not an expense of this account",
                    "code": "unknown_expense",
                }
            )


def _plan_sales(
    *, checkout: dict[str, Any], common: dict[str, Any], warnings: Sequence[dict[str, str]]
) -> list[_SalePlan]:
    """One plan per sale part: its exported document (spec: Sale), the figures of its rows and its warnings."""
    parts = checkout["sales"]
    split = len(parts) > 1 and any("payments" in part for part in parts)
    plans = []
    for i, part in enumerate(parts):
        basket = part["basket"]
        # One sale: its payments are the checkout's. Several (an exchange): each part carries its own; when
        # none does, the checkout's payments are booked with the first sale (a warning says so).
        own_payments = part.get("payments", []) if split else None
        payments = own_payments if own_payments is not None else (checkout["payments"] if i == 0 else [])
        document: dict[str, Any] = {
            "base_currency_code": common["base_currency_code"],
            "identifier": part["identifier"],
            "payments": payments,
        }
        if "receipt_metadata" in checkout:
            document["receipt_metadata"] = checkout["receipt_metadata"]
        document.update(
            {
                "sequence_number": part["sequence_number"],
                "source": common["source"],
                "summary": basket,
                "timing": common["timing"],
                "voided": common["voided"],
                "checkout_identifier": checkout["identifier"],
            }
        )
        if "fiscal_rules_data" in part:
            document["fiscal_rules_data"] = part["fiscal_rules_data"]
        lines = []
        for line in basket["line_items"]:
            margin_total, margin = line_margins(line)
            lines.append({**line, "margin_total": margin_total, "margin": margin})
        plans.append(
            _SalePlan(
                index=i,
                identifier=part["identifier"],
                sequence_number=part["sequence_number"],
                kind=_kind(basket),
                total=Decimal(basket["total"]),
                document=document,
                lines=lines,
                payments=[p for p in payments if p["success"]],
                warnings=[w for w in warnings if w["field"].startswith(f"sales[{i}].")],
            )
        )
    return plans


# --- The service ------------------------------------------------------------------------------------


def record_checkout(*, account: Account, body: Any) -> CheckoutResult:
    """Spec: Checkout, Sale, Expense, Events. Store a posted checkout with its sales, once.

    The same body again answers the stored checkout (``created`` false); another body under a used
    identifier, or a sale identifier used by another checkout, is a ``Conflict``. Invalid input raises
    ``InvalidInput`` naming every offending field.

    A replay and a used identifier are found by the unique constraints when the checkout is stored, or, for a
    body refused, before the refusal is answered: what was accepted once stays accepted, and a new checkout
    (nearly every one) pays no look-up for them. Its queries do not grow with its lines (docs/benchmarks.md).
    """
    digest = body_hash(body)
    try:
        return CheckoutResult(_record(account=account, body=body, digest=digest), created=True)
    except (InvalidInput, Conflict, IntegrityError) as exc:
        # Refused, or a replay, or a concurrent post that won the race for the checkout (a retry) or for a sale
        # identifier: the transaction is rolled back by now.
        identifier = body.get("identifier") if isinstance(body, dict) else None
        if isinstance(identifier, str) and len(identifier) <= 255:
            stored = _stored(account=account, identifier=identifier, digest=digest)
            if stored is not None:
                return CheckoutResult(stored, created=False)
        if isinstance(exc, IntegrityError):
            _refuse_used_sale_identifiers(account=account, identifiers=[part["identifier"] for part in body["sales"]])
        raise


def _record(*, account: Account, body: Any, digest: str) -> Checkout:
    """Validate the body, then, in one transaction that starts by locking the register's open period (one query
    that also reads the register, its shop and market), check it against the account's records, clean it and
    store it."""
    cleaned, report = check_checkout(body)
    if cleaned is INVALID:
        raise InvalidInput(report.errors)
    at = instant(cleaned["timing"]["timestamp"])
    with transaction.atomic():
        period = open_period_of(account=account, register_identifier=cleaned["source"]["register_id"], at=at)
        if period is None:
            raise InvalidInput(
                [{"field": "source.register_id", "message": "is not a register of this account", "code": "not_found"}]
            )
        register = period.register
        errors: list[dict[str, str]] = []
        source = _fill_source(cleaned["source"], register, errors)
        market = register.stock_location.market
        if cleaned["base_currency_code"] != market.currency:
            errors.append(
                {
                    "field": "base_currency_code",
                    "message": f"must be {market.currency}, the currency of market '{market.identifier}'",
                    "code": "mismatch",
                }
            )
        timing = derive_timing(cleaned["timing"], default_timezone=account.timezone)
        if timing is None:
            errors.append({"field": "timing.timezone", "message": "is not a tz database time zone", "code": "invalid"})
        warnings = list(report.warnings)
        _check_expenses(account=account, parts=cleaned["sales"], warnings=warnings)
        voided = bool(cleaned.get("voided", False))
        for part in cleaned["sales"]:
            if "customer" in part["basket"]:
                part["basket"]["customer"] = strip_customer(part["basket"]["customer"])
        common = {
            "base_currency_code": cleaned["base_currency_code"],
            "source": source,
            "timing": timing,
            "voided": voided,
        }
        plans = _plan_sales(checkout=cleaned, common=common, warnings=warnings)
        if errors:
            raise InvalidInput(errors)
        return _store(
            account=account,
            period=period,
            identifier=cleaned["identifier"],
            digest=digest,
            at=at,
            voided=voided,
            document={**cleaned, "voided": voided, "timing": timing, "source": source},
            plans=plans,
            warnings=warnings,
        )


def _refuse_used_sale_identifiers(*, account: Account, identifiers: Sequence[str]) -> None:
    used = set(Sale.objects.filter(account=account, identifier__in=identifiers).values_list("identifier", flat=True))
    for index, identifier in enumerate(identifiers):
        if identifier in used:
            raise Conflict(
                f"The sale identifier '{identifier[:100]}' is already used by another checkout",
                field=f"sales[{index}].identifier",
                code="duplicate",
            )


def _store(
    *,
    account: Account,
    period: RegisterPeriod,
    identifier: str,
    digest: str,
    at: datetime,
    voided: bool,
    document: dict[str, Any],
    plans: Sequence[_SalePlan],
    warnings: list[dict[str, str]],
) -> Checkout:
    """Inside the caller's transaction: the checkout, its sales and their rows, stock moves and outbox rows, in a
    fixed number of queries (one insert per table, the stock levels locked and moved in one statement)."""
    stock_location = period.register.stock_location
    # The columns a checkout's sales share with it (``RegisterDocument``): its register, period, time and voiding.
    made: dict[str, Any] = {
        "account": account,
        "register": period.register,
        "stock_location": stock_location,
        "period": period,
        "timestamp": at,
        "voided": voided,
    }
    with transaction.atomic(savepoint=False):  # all or nothing, in the caller's transaction
        checkout = Checkout.objects.create(
            **made, identifier=identifier, body_hash=digest, document=document, warnings=warnings
        )
        sales = Sale.objects.bulk_create(
            [
                Sale(
                    **made,
                    checkout=checkout,
                    identifier=plan.identifier,
                    sequence_number=plan.sequence_number,
                    kind=plan.kind,
                    base_currency_code=document["base_currency_code"],
                    total=plan.total,
                    document=plan.document,
                    warnings=plan.warnings,
                )
                for plan in plans
            ]
        )
        events = []
        if not voided:
            _store_rows(account=account, period=period, sales=sales, plans=plans)
            # Expenses move money, not goods.
            moved = [sale for sale in sales if sale.kind != SaleKind.EXPENSE]
            if moved:
                events = record_sale_stock_events(account=account, sales=moved, offer=False)
        where = stock_location.pk
        outbox.offer_all(
            account=account,
            read_with=period,  # the export queues, read by the period's lock (a period opened here has none)
            offers={
                outbox.EntityType.CHECKOUTS: [
                    outbox.Entry(object_id=checkout.pk, element_key=checkout_key(checkout), stock_location_id=where)
                ],
                outbox.EntityType.SALES: [
                    outbox.Entry(object_id=sale.pk, element_key=sale_key(sale), stock_location_id=where)
                    for sale in sales
                ],
                outbox.EntityType.STOCK_EVENTS: stock_event_entries(events),
            },
        )
    _know_sales(checkout, sales)
    return checkout


def _know_sales(checkout: Checkout, sales: list[Sale]) -> None:
    """``checkout.sales.all()`` answers the sales just stored, as a prefetch would, so the answer's serializer
    does not read them back (one query fewer per checkout). These are the attributes ``prefetch_related`` fills in
    (``django.db.models.query.prefetch_one_level``)."""
    known = checkout.sales.all()
    known._result_cache = sales
    known._prefetch_done = True  # type: ignore[attr-defined]
    checkout._prefetched_objects_cache = {"sales": known}  # type: ignore[attr-defined]


def _store_rows(*, account: Account, period: RegisterPeriod, sales: Sequence[Sale], plans: Sequence[_SalePlan]) -> None:
    """The rows a register close statement sums: one per line item, successful payment and tax amount."""
    lines: list[SaleLine] = []
    payments: list[SalePayment] = []
    taxes: list[SaleTax] = []
    for sale, plan in zip(sales, plans, strict=True):
        own = {"account": account, "sale": sale, "period": period, "kind": sale.kind}
        for line in plan.lines:
            group = line.get("product_group") or ""
            lines.append(
                SaleLine(
                    **own,
                    product_group=group,
                    quantity=line["quantity"],
                    base_price=line["base_price"],
                    sub_total=line["sub_total"],
                    total=line["total"],
                    total_discounts=Decimal(line["base_price"]) - Decimal(line["sub_total"]),
                    total_tax_amount=line["total_tax_amount"],
                    vat_amount=line["vat_amount"],
                    sales_tax_amount=line["sales_tax_amount"],
                    margin_total=line["margin_total"],
                    margin=line["margin"],
                )
            )
            taxes.extend(_tax_row(own, tax, group) for tax in line.get("taxes", ()))
        taxes.extend(_tax_row(own, tax, None) for tax in plan.document["summary"]["taxes"])
        payments.extend(_payment_rows(own, plan, sale.base_currency_code))
    # One statement on PostgreSQL; one per table on SQLite.
    bulk.insert_together(lines, payments, taxes)


def _payment_rows(own: dict[str, Any], plan: _SalePlan, base_currency_code: str) -> list[SalePayment]:
    """A row per payment, and per payment a row of its part in each product group of the sale's lines."""
    groups = product_group_totals((line.get("product_group") or "", Decimal(line["total"])) for line in plan.lines)
    rows: list[SalePayment] = []
    for payment in plan.payments:
        currency = payment.get("foreign_currency", "")
        amount = Decimal(payment["amount"])
        foreign = payment.get("foreign_currency_amount")
        rows.append(
            SalePayment(
                **own,
                payment_type=payment["payment_type"],
                amount=amount,
                foreign_currency=currency,
                foreign_currency_amount=foreign,
            )
        )
        base_parts = split_payment(amount, groups, minor_unit(base_currency_code))
        foreign_parts = (
            split_payment(Decimal(foreign), groups, minor_unit(currency))
            if foreign is not None and currency
            else [(group, None) for group, _ in groups]
        )
        rows.extend(
            SalePayment(
                **own,
                product_group=group,
                payment_type=payment["payment_type"],
                amount=part,
                foreign_currency=currency,
                foreign_currency_amount=foreign_part,
            )
            for (group, part), (_, foreign_part) in zip(base_parts, foreign_parts, strict=True)
        )
    return rows


def _tax_row(own: dict[str, Any], tax: dict[str, Any], product_group: str | None) -> SaleTax:
    return SaleTax(
        **own,
        product_group=product_group,
        name=tax.get("tax_name") or tax["name"],
        rate=tax["rate"],
        type=tax["type"],
        amount=tax["amount"],
    )
