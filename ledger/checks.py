"""The accounting checks of a sale and a checkout: totals that add up, a sale or a return, expenses, shipping per
``ecom_id``, payments that cover the total (decided; docs/amounts.md).

Each check is a rule of the body it reads (``ledger.bodies.checkouts``: ``SaleSummary``, ``Checkout``), called with the
cleaned object once its fields are valid. A check refuses (an error) only what the spec states or what cannot be
true in any reading; a relation the spec does not state is a *warning*: the checkout is stored as sent, with its
warnings. Kept apart from the body shapes because they are arithmetic over the whole sale, not field shapes.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from accounts.money import is_currency_code, minor_unit
from core.nodes import Report, join

MAX_WARNINGS = 100
DEFAULT_MINOR_UNIT = 2  # when a report does not name its currency


@dataclass
class SaleReport(Report):
    """A ``Report`` that knows the currency the amounts are in, so totals compare at its minor unit.

    A plain ``Report`` works too: its amounts are then compared at two decimals, the minor unit of
    nearly every currency."""

    currency: str | None = None

    def warn(self, path: str, message: str, code: str = "unknown_field") -> None:
        # A checkout's warnings are stored with it and counted in /metrics: keep more than a plain report.
        if len(self.warnings) < MAX_WARNINGS:
            self.warnings.append({"field": path, "message": message, "code": code})


def minor(report: Report) -> Decimal:
    """One minor unit of the report's currency (0.01 for DKK, 1 for JPY)."""
    currency = getattr(report, "currency", None)
    places = minor_unit(currency) if currency and is_currency_code(currency) else DEFAULT_MINOR_UNIT
    return Decimal(1).scaleb(-places)


def _q(amount: Decimal | int, unit: Decimal) -> Decimal:
    return Decimal(amount).quantize(unit, rounding=ROUND_HALF_UP)


def _mismatch(
    report: Report,
    path: str,
    field: str,
    stated: Decimal | int,
    expected: Decimal,
    unit: Decimal,
    *,
    slack: int = 0,
    what: str = "is",
    warning: str | None = None,
) -> None:
    """An error on ``path.field`` when ``stated`` and ``expected``, each rounded to the minor unit, differ
    by more than ``slack`` minor units; with ``warning`` (its code) a warning instead."""
    if abs(_q(stated, unit) - _q(expected, unit)) > unit * slack:
        if warning is None:
            report.error(join(path, field), f"{what} {stated}, but must be {_q(expected, unit)}", "total_mismatch")
        else:
            report.warn(join(path, field), f"{what} {stated}, expected {_q(expected, unit)}", warning)


LINE_AMOUNTS = ("base_price", "sub_total", "total", "total_tax_amount", "vat_amount", "sales_tax_amount")
SUMMED_AMOUNTS = LINE_AMOUNTS


def is_expense_line(line: dict[str, Any]) -> bool:
    return "expense" in (line.get("behavior") or {})


def sale_or_return(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: "either a sale or a return, never both". A return has every quantity below zero and no
    positive amount; a sale (and an expense) has every quantity above zero."""
    is_return = summary["is_return"]
    for i, line in enumerate(summary["line_items"]):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        if is_return and line["quantity"] >= 0:
            report.error(join(at, "quantity"), "must be negative in a return", "return_quantity")
        elif not is_return and line["quantity"] <= 0:
            report.error(
                join(at, "quantity"), "must be positive in a sale (a return has is_return true)", "sale_quantity"
            )
        if is_return:
            for name in LINE_AMOUNTS:
                if line[name] > 0:
                    report.error(join(at, name), "must not be positive in a return", "return_amount")
    if is_return and summary["total"] > 0:
        report.error(join(path, "total"), "must not be positive in a return", "return_amount")


def expense(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: Expense. Money paid out of the drawer: only expense lines, not a return, each line a
    positive quantity with amounts at or below zero."""
    lines = summary["line_items"]
    if not any(is_expense_line(line) for line in lines):
        return
    if summary["is_return"]:
        report.error(join(path, "is_return"), "must be false for an expense", "expense_return")
    for i, line in enumerate(lines):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        if not is_expense_line(line):
            report.error(
                join(at, "behavior"), "must be an expense: an expense sale has only expense lines", "mixed_expense"
            )
            continue
        for name in LINE_AMOUNTS:
            if line[name] > 0:
                report.error(join(at, name), "must not be positive for an expense", "expense_amount")


def line_totals(summary: dict[str, Any], path: str, report: Report) -> None:
    """Refused: ``total_tax_amount`` is its parts, ``vat_amount + sales_tax_amount``. Warnings: relations the spec
    does not state (``total = sub_total + sales_tax_amount``; a ``retail_price`` that looks per unit; margins that
    disagree with the line's cost)."""
    unit = minor(report)
    for i, line in enumerate(summary["line_items"]):
        at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
        _mismatch(
            report,
            at,
            "total_tax_amount",
            line["total_tax_amount"],
            line["vat_amount"] + line["sales_tax_amount"],
            unit,
        )
        _mismatch(
            report,
            at,
            "total",
            line["total"],
            line["sub_total"] + line["sales_tax_amount"],
            unit,
            warning="line_total_mismatch",
        )
        _line_amounts(line, at, unit, report)


def _line_amounts(line: dict[str, Any], at: str, unit: Decimal, report: Report) -> None:
    quantity = Decimal(line["quantity"])
    retail_price = Decimal(line["retail_price"])
    base_price = Decimal(line["base_price"])
    if (
        abs(quantity) != 1
        and _q(retail_price, unit) != _q(base_price, unit)
        and _q(retail_price * quantity, unit) == _q(base_price, unit)
    ):
        report.warn(
            join(at, "retail_price"),
            f"is {line['retail_price']}, the price of one unit: a line's retail_price is the line's, "
            f"{_q(base_price, unit)} (quantity x unit price)",
            "retail_price_per_unit",
        )
    if "margin" in line and "margin_total" in line and "cost_price" in line:
        _mismatch(
            report,
            at,
            "margin",
            line["margin"],
            Decimal(line["margin_total"]) - Decimal(line["cost_price"]),
            unit,
            warning="margin_mismatch",
        )


def summary_totals(summary: dict[str, Any], path: str, report: Report) -> None:
    """Refused: ``total_tax_amount`` differing from its parts (``vat_amount + sales_tax_amount``, and the
    ``taxes`` that break it down). Warnings: each amount the sum of its lines (within one minor unit per line:
    lines round apart) and ``total_discounts = base_price - sub_total``, relations the spec does not state."""
    unit = minor(report)
    lines = summary["line_items"]
    _mismatch(
        report,
        path,
        "total_tax_amount",
        summary["total_tax_amount"],
        Decimal(summary["vat_amount"]) + Decimal(summary["sales_tax_amount"]),
        unit,
    )
    for name in SUMMED_AMOUNTS:
        expected = sum((Decimal(line[name]) for line in lines), Decimal(0))
        _mismatch(report, path, name, summary[name], expected, unit, slack=len(lines), warning="line_sum_mismatch")
    _mismatch(
        report,
        path,
        "total_discounts",
        summary["total_discounts"],
        summary["base_price"] - summary["sub_total"],
        unit,
        warning="total_discounts_mismatch",
    )
    taxes = summary["taxes"]
    if taxes:
        expected = sum((Decimal(tax["amount"]) for tax in taxes), Decimal(0))
        # Reported on taxes: total_tax_amount is fixed by its parts above, so the tax summary is what is off.
        _mismatch(
            report,
            path,
            "taxes",
            expected,
            Decimal(summary["total_tax_amount"]),
            unit,
            slack=len(taxes),
            what="sum to",
        )


def shipping_per_ecom_group(summary: dict[str, Any], path: str, report: Report) -> None:
    """Spec: line item ``behavior.shipping``: group the items with an ``ecom_id``; each group has one
    shipping item."""
    for ecom_id, indexes in ecommerce_groups(summary["line_items"]).items():
        shipping = [i for i in indexes if "shipping" in (summary["line_items"][i].get("behavior") or {})]
        if not shipping:
            at = f"{path}.line_items[{indexes[0]}]" if path else f"line_items[{indexes[0]}]"
            report.error(
                join(at, "behavior.shipping"),
                f"the items with ecom_id '{ecom_id[:100]}' need one item with the shipping behavior",
                "shipping_required",
            )
        for i in shipping[1:]:
            at = f"{path}.line_items[{i}]" if path else f"line_items[{i}]"
            report.error(
                join(at, "behavior.shipping"),
                f"the items with ecom_id '{ecom_id[:100]}' already have a shipping item",
                "one_shipping",
            )


def ecommerce_groups(line_items: list[dict[str, Any]]) -> dict[str, list[int]]:
    """Indexes of the line items with an ``ecom_id``, by ``ecom_id``, in the order they appear."""
    groups: dict[str, list[int]] = {}
    for i, line in enumerate(line_items):
        if line.get("ecom_id") is not None:
            groups.setdefault(line["ecom_id"], []).append(i)
    return groups


def paid(payments: list[dict[str, Any]]) -> Decimal:
    """The sum of the successful payment entries (cash rounding and cashback are signed entries)."""
    return sum((Decimal(p["amount"]) for p in payments if p["success"]), Decimal(0))


def _cover(
    report: Report, path: str, paid_amount: Decimal, total: Decimal, unit: Decimal, *, refuse: bool, warning: str
) -> None:
    """Payments that fall short of ``total`` (less than a sale's, or less refunded than a return's) are refused
    when ``refuse``; payments beyond it are a warning (change or a tip not booked as its own entry)."""
    paid_q, total_q = _q(paid_amount, unit), _q(total, unit)
    if paid_q == total_q:
        return
    short = abs(paid_q) < abs(total_q) or (paid_q * total_q < 0)
    message = f"sum to {paid_q}, but the total is {total_q}"
    if short and refuse:
        report.error(join(path, "payments"), message + ": the payments do not cover it", "payments_short")
    else:
        report.warn(join(path, "payments"), message, warning)


def payments_cover_totals(checkout: dict[str, Any], path: str, report: Report) -> None:
    """Refused: successful payments that do not cover the checkout's total. Warnings: payments beyond it, and
    in a checkout of several sales (an exchange) a sale whose own payments are missing or differ from its
    total. A voided checkout was never paid."""
    if checkout.get("voided"):
        return
    unit = minor(SaleReport(currency=checkout["base_currency_code"]))
    sales = checkout["sales"]
    if len(sales) > 1:
        for i, part in enumerate(sales):
            at = join(path, f"sales[{i}]")
            if "payments" not in part:
                report.warn(
                    join(at, "payments"),
                    "is missing: the checkout's payments are booked with its first sale",
                    "payments_not_split",
                )
            else:
                _cover(
                    report,
                    at,
                    paid(part["payments"]),
                    Decimal(part["basket"]["total"]),
                    unit,
                    refuse=False,
                    warning="sale_payments_mismatch",
                )
    total = sum((Decimal(part["basket"]["total"]) for part in sales), Decimal(0))
    _cover(report, path, paid(checkout["payments"]), total, unit, refuse=True, warning="payments_exceed_total")
