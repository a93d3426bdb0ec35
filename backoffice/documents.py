"""A stored payload or document as a page shows it: pretty JSON, cut down to a bounded size before it is written
out, so that a page costs the same whatever the size of what an integrator or a register posted."""

from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from typing import Any

from accounts.money import quantize
from core.jsonenc import DecimalJSONEncoder

# Values (objects, arrays, strings, numbers) kept of one document; past them, what is left is counted, not shown.
MAX_VALUES = 400
# Levels of nesting shown; deeper objects and arrays are counted, not shown.
MAX_DEPTH = 8
# Characters kept of one string (or key, or number).
MAX_TEXT = 300
# Characters of the whole text, at most.
MAX_CHARS = 20_000
# The key or item that stands for what was left out.
MORE = "…"


def in_short(value: Any) -> str:
    """``value`` as indented JSON, with at most ``MAX_VALUES`` values, ``MAX_DEPTH`` levels, ``MAX_TEXT``
    characters a string and ``MAX_CHARS`` characters in all; what is left out is marked ``…``."""
    budget = [MAX_VALUES]

    def text(s: str) -> str:
        return s if len(s) <= MAX_TEXT else s[:MAX_TEXT] + MORE

    def short(v: Any, depth: int) -> Any:
        budget[0] -= 1
        if isinstance(v, str):
            return text(v)
        if isinstance(v, Decimal):
            shown = str(v)
            return v if len(shown) <= MAX_TEXT else text(shown)
        if isinstance(v, dict):
            kept: dict[str, Any] = {}
            for n, (key, sub) in enumerate(v.items()):
                if budget[0] <= 0 or depth >= MAX_DEPTH:
                    kept[MORE] = f"{len(v) - n} more"
                    break
                kept[text(str(key))] = short(sub, depth + 1)
            return kept
        if isinstance(v, list | tuple):
            items: list[Any] = []
            for n, sub in enumerate(v):
                if budget[0] <= 0 or depth >= MAX_DEPTH:
                    items.append(f"{MORE} {len(v) - n} more")
                    break
                items.append(short(sub, depth + 1))
            return items
        return v

    shown = json.dumps(short(value, 0), cls=DecimalJSONEncoder, indent=2, ensure_ascii=False)
    return shown if len(shown) <= MAX_CHARS else shown[:MAX_CHARS] + "\n" + MORE


def problems(stored: Any) -> list[dict[str, Any]]:
    """Stored errors or warnings (an import item's ``errors``, a checkout's or sale's ``warnings``), each
    ``{field, message, code}``; anything else in the list is shown as its message."""
    return [p if isinstance(p, dict) else {"message": str(p)} for p in (stored if isinstance(stored, list) else [])]


# The parts of a statement's ``register_summary`` a page shows, in this order.
STATEMENT_SUMMARIES = ("all", "sales", "returns", "expenses")
# The amounts of each summary a page shows (beside its ``count`` and ``item_count``).
SUMMARY_AMOUNTS = ("total", "total_discounts", "total_tax_amount", "margin")
# The amounts of each reconciliation a page shows (beside its payment type and currency).
RECONCILIATION_AMOUNTS = ("total", "counted", "deposited_amount")


def statement_summaries(document: Any) -> list[dict[str, Any]]:
    """A register close statement's summaries (all, sales, returns, expenses) as rows of text: ``part``,
    ``count``, ``item_count`` and each of ``SUMMARY_AMOUNTS`` in the base currency ("" where the document has
    none); a document without them gives no rows."""
    summary = document.get("register_summary") if isinstance(document, dict) else None
    if not isinstance(summary, dict):
        return []
    currency = document.get("base_currency_code")
    rows = []
    for part in STATEMENT_SUMMARIES:
        figures = summary.get(part)
        if isinstance(figures, dict):
            row = {"part": part, "count": number(figures.get("count")), "item_count": number(figures.get("item_count"))}
            rows.append(row | {name: amount(figures.get(name), currency) for name in SUMMARY_AMOUNTS})
    return rows


def statement_reconciliations(document: Any) -> list[dict[str, Any]]:
    """A register close statement's reconciliations (at most ``MAX_VALUES``) as rows of text: payment type,
    currency and each of ``RECONCILIATION_AMOUNTS`` in that currency."""
    entries = document.get("reconciliations") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return []
    rows = []
    for entry in entries[:MAX_VALUES]:
        if isinstance(entry, dict):
            currency = entry.get("currency_code")
            row = {
                "payment_type_identifier": _text(entry.get("payment_type_identifier")),
                "currency_code": _text(currency),
            }
            rows.append(row | {name: amount(entry.get(name), currency) for name in RECONCILIATION_AMOUNTS})
    return rows


def amount(value: Any, currency_code: Any) -> str:
    """An amount of a document as a page shows it: with its currency's decimals, whatever trailing zeros it was
    stored with (``500``, ``500.000000``: ``500.00`` in DKK); as it is when it is not a number or the currency is
    not known; "" for none."""
    exact = _decimal(value)
    if exact is None:
        return _text(value)
    try:
        return str(quantize(exact, str(currency_code)))
    except (KeyError, InvalidOperation):
        return _text(value)


def number(value: Any) -> str:
    """A count or quantity without trailing zeros (``2.000000``: ``2``); as it is when it is not a number."""
    exact = _decimal(value)
    if exact is None:
        return _text(value)
    return f"{exact.normalize():f}" if exact == exact.to_integral_value() else f"{exact:f}"


def _decimal(value: Any) -> Decimal | None:
    if value is None or isinstance(value, bool) or not isinstance(value, int | Decimal | str | float):
        return None
    try:
        exact = Decimal(str(value)) if not isinstance(value, Decimal) else value
    except InvalidOperation:
        return None
    return exact if exact.is_finite() and len(str(value)) <= MAX_TEXT else None


def _text(value: Any) -> str:
    """Text of at most ``MAX_TEXT`` characters ("" for none)."""
    text = "" if value is None else str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + MORE
