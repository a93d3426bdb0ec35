"""What a page shows of a priced basket (the admin's and the back-office's "Price a basket"): the priced lines
with each discount's campaign, amount and units, the explanation of every campaign the market's engine looked
at (fired or not, and why, with the units whose price it changed), and the warnings. Priced as
``POST /api/v1/pos/baskets/price?explain=true`` prices it (``pos.baskets``); nothing is stored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from accounts.models import Account
from campaigns import selectors
from core.jsonenc import DecimalJSONEncoder
from pos import baskets


@dataclass(frozen=True)
class PricedBasket:
    """A basket priced for a page."""

    summary: dict[str, Any]  # the engine's answer, the spec's sale ``summary`` shape
    lines: list[dict[str, Any]]  # ``priced_lines``
    explanation: list[dict[str, Any]]  # ``explanation_rows``
    warnings: list[dict[str, str]]  # the engine's (a customer's own discounts left out, ...): field, message, code
    rule_warnings: list[str]  # ``unpriced_rule_warnings``


def price_for_page(*, account: Account, body: Any) -> PricedBasket:
    """Validate ``body`` as the POS endpoint's basket and price it with the explanation. Raises InvalidInput
    naming each bad field (``market``, ``line_items[i].unit_price``...) or ServiceError (an unknown market)."""
    basket = baskets.validate_basket(body)
    result = baskets.price_basket_request(account=account, basket=basket, explain=True)
    return PricedBasket(
        summary=result.summary,
        lines=priced_lines(result.summary),
        explanation=explanation_rows(result.explanation),
        warnings=list(result.warnings),
        rule_warnings=unpriced_rule_warnings(account=account, market=basket["market"]),
    )


def _text(value: Any) -> str:
    """An L10nString for display: the string, or its first language's text."""
    if isinstance(value, Mapping):
        return str(next(iter(value.values()), ""))
    return "" if value is None else str(value)


def _units(application: Mapping[str, Any], line: Mapping[str, Any]) -> str:
    """Which units of the line a Discount Summary covers, 1-based for staff ("units 1-2 of 3")."""
    ranges = application.get("line_items")
    if not isinstance(ranges, Mapping):
        return "all units"
    item = ranges.get(line.get("line_item_id"))
    if not isinstance(item, Mapping):
        return "all units"
    if "index" in item:
        return f"unit {int(item['index']) + 1} of {line.get('quantity')}"
    return f"units {int(item['start_index']) + 1}-{int(item['end_index']) + 1} of {line.get('quantity')}"


def priced_lines(summary: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The answer's line items shaped for the page's table (discounts with campaign, amount and units)."""
    rows = []
    for line in summary.get("line_items", []):
        behavior = line.get("behavior") or {}
        rows.append(
            {
                "line": line,
                "name": _text(line.get("name")),
                "kind": "deposit" if "container_deposit" in behavior else "shipping" if "shipping" in behavior else "",
                "discounts": [
                    {
                        "campaign_id": d.get("discount", {}).get("id", ""),
                        "name": _text(d.get("discount", {}).get("name")),
                        "amount": d.get("amount"),
                        "type": json.dumps(d.get("discount", {}).get("type"), cls=DecimalJSONEncoder),
                        "units": _units(d.get("discount", {}).get("application", {}), line),
                    }
                    for d in line.get("discounts") or []
                ],
            }
        )
    return rows


def _changed_units(units: Any) -> list[str]:
    """The engine's ``units`` (``[{line_item_id, index, before, after}]``) grouped per line and price change,
    1-based for staff: ``li-1 units 1, 2, 3: 9.95 → 8.46``."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for unit in units if isinstance(units, list) else []:
        if not isinstance(unit, Mapping):
            continue
        key = (str(unit.get("line_item_id", "")), str(unit.get("before", "")), str(unit.get("after", "")))
        index = unit.get("index")
        groups.setdefault(key, []).append(str(index + 1) if isinstance(index, int) else "?")
    return [
        f"{line} unit{'s' if len(indexes) > 1 else ''} {', '.join(indexes)}: {before} → {after}"
        for (line, before, after), indexes in groups.items()
    ]


def explanation_rows(explanation: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    return [{**entry, "changed_units": _changed_units(entry.get("units"))} for entry in explanation or []]


def unpriced_rule_warnings(*, account: Account, market: str) -> list[str]:
    """Rules whose MarketPrice has no entry for the market add no deposit there."""
    return [
        f"Product rule '{rule.rule_id}' (tag '{rule.tag}') has no price for market '{market}': it adds no deposit."
        for rule in selectors.product_rules(account=account, market=market)
        if isinstance(rule.price, Mapping) and rule.price.get(market) is None
    ]
