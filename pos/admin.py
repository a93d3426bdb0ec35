"""The admin's "Price a basket" page (issue 5, section 3): staff try the market's campaigns and product rules on
a basket, as ``POST /api/v1/pos/baskets/price?explain=true`` prices it. Nothing is stored.

It lives below the campaigns' admin (``/admin/campaigns/campaign/price-basket/``, linked from the campaign list),
registered as a ``campaigns.admin.CampaignTool`` when the admin discovers this module: pricing a basket needs the
catalog and the integrations, which campaigns may not import (docs/architecture.md, Layers).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from accounts.models import Account
from campaigns import selectors
from campaigns.admin import CampaignAdmin, CampaignTool, register_tool
from core import jsonparse
from core.errors import InvalidInput, ServiceError
from core.jsonenc import DecimalJSONEncoder
from pos import baskets

# The demo account's campaign (20% off tag "coffee") and deposit rule (tag "pant-a") apply to these lines, so a
# newcomer's first "Price" shows a discount and a deposit (examples/discount_campaigns.json, product_rules.json).
EXAMPLE_LINE_ITEMS = [
    {"line_item_id": "li-1", "id": "p1", "quantity": 2, "unit_price": Decimal("25.00"), "tags": ["coffee"]},
    {"line_item_id": "li-2", "id": "cola", "quantity": 1, "unit_price": Decimal("20.00"), "tags": ["pant-a"]},
    {
        "line_item_id": "ship",
        "id": "shipping",
        "quantity": 1,
        "unit_price": Decimal("39.00"),
        "behavior": {"shipping": {}},
    },
]


class PriceBasketForm(forms.Form):
    account = forms.ModelChoiceField(queryset=Account.objects.order_by("identifier"), to_field_name="identifier")
    market = forms.CharField(max_length=32, initial="dk", help_text="Market identifier, e.g. dk.")
    customer = forms.CharField(
        max_length=255, required=False, label="Customer identifier", help_text="Enables members-only campaigns."
    )
    line_items = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 16, "cols": 90, "class": "vLargeTextField"}),
        initial=json.dumps(EXAMPLE_LINE_ITEMS, indent=2, cls=DecimalJSONEncoder),
        help_text=(
            "A JSON array of line items, as the POS endpoint takes them: line_item_id, id (product id), quantity, "
            "unit_price (optional for a product with a retail price in the market), tags, product_group, taxes, "
            'behavior ({"shipping": {}} marks a shipping line).'
        ),
    )

    def clean_line_items(self) -> Any:
        try:
            return jsonparse.loads(self.cleaned_data["line_items"])
        except ServiceError as exc:
            detail = "; ".join(f"{e['field']}: {e['message']}" for e in exc.errors()[:5]) or exc.message
            raise forms.ValidationError(f"not valid JSON: {detail}") from None


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
    """Rules whose MarketPrice has no entry for the market add no deposit there (issue 5, section 2)."""
    return [
        f"Product rule '{rule.rule_id}' (tag '{rule.tag}') has no price for market '{market}': it adds no deposit."
        for rule in selectors.product_rules(account=account, market=market)
        if isinstance(rule.price, Mapping) and rule.price.get(market) is None
    ]


def price_basket_view(model_admin: CampaignAdmin, request: HttpRequest) -> HttpResponse:
    """Price a basket as the POS endpoint would, with the explanation; nothing is stored."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    form = PriceBasketForm(request.POST if request.method == "POST" else None)
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Price a basket",
        "form": form,
    }
    if request.method == "POST" and form.is_valid():
        account: Account = form.cleaned_data["account"]
        body: dict[str, Any] = {
            "market": form.cleaned_data["market"],
            "line_items": form.cleaned_data["line_items"],
        }
        if form.cleaned_data["customer"]:
            body["customer"] = {"identifier": form.cleaned_data["customer"]}
        try:
            basket = baskets.validate_basket(body)
            result = baskets.price_basket_request(account=account, basket=basket, explain=True)
        except InvalidInput as exc:
            context["errors"] = exc.errors()
        except ServiceError as exc:
            context["errors"] = exc.errors() or [{"field": "", "message": exc.message}]
        else:
            context.update(
                summary=result.summary,
                lines=priced_lines(result.summary),
                explanation=explanation_rows(result.explanation),
                warnings=unpriced_rule_warnings(account=account, market=basket["market"]),
                answer=json.dumps(result.summary, indent=2, ensure_ascii=False, cls=DecimalJSONEncoder),
            )
    return TemplateResponse(request, "admin/campaigns/campaign/price_basket.html", context)


register_tool(CampaignTool(name="price_basket", label="Price a basket", view=price_basket_view))
