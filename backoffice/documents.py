"""A stored payload or document as a page shows it: pretty JSON, cut down to a bounded size before it is written
out, so that a page costs the same whatever the size of what an integrator or a register posted."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

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
# The figures of each summary a page shows.
SUMMARY_FIGURES = ("count", "item_count", "total", "total_discounts", "total_tax_amount", "margin")
# The values of each reconciliation a page shows.
RECONCILIATION_VALUES = ("payment_type_identifier", "currency_code", "total", "counted", "deposited_amount")


def statement_summaries(document: Any) -> list[dict[str, Any]]:
    """A register close statement's summaries (all, sales, returns, expenses) as rows: ``part`` and each of
    ``SUMMARY_FIGURES`` (None where the document has none); a document without them gives no rows."""
    summary = document.get("register_summary") if isinstance(document, dict) else None
    if not isinstance(summary, dict):
        return []
    rows = []
    for part in STATEMENT_SUMMARIES:
        figures = summary.get(part)
        if isinstance(figures, dict):
            rows.append({"part": part, **{name: _shown(figures.get(name)) for name in SUMMARY_FIGURES}})
    return rows


def statement_reconciliations(document: Any) -> list[dict[str, Any]]:
    """A register close statement's reconciliations as rows of ``RECONCILIATION_VALUES``, at most ``MAX_VALUES``."""
    entries = document.get("reconciliations") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return []
    return [
        {name: _shown(entry.get(name)) for name in RECONCILIATION_VALUES}
        for entry in entries[:MAX_VALUES]
        if isinstance(entry, dict)
    ]


def _shown(value: Any) -> Any:
    """A number as it is, anything else as text of at most ``MAX_TEXT`` characters (None stays None)."""
    if value is None or (isinstance(value, int | Decimal) and not isinstance(value, bool)):
        return value
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT] + MORE
