"""The admin's "Price a basket" page: staff try the market's campaigns and product rules on
a basket, as ``POST /api/v1/pos/baskets/price?explain=true`` prices it. Nothing is stored.

It lives below the campaigns' admin (``/admin/campaigns/campaign/price-basket/``, linked from the campaign list),
registered as a ``campaigns.admin.CampaignTool`` when the admin discovers this module: pricing a basket needs the
catalog and the integrations, which campaigns may not import (docs/architecture.md, Layers).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

from django import forms
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.template.response import TemplateResponse

from accounts import tryouts
from accounts.models import Account
from campaigns.admin import CampaignAdmin, CampaignTool, register_tool
from core import jsonparse
from core.errors import InvalidInput, ServiceError
from core.jsonenc import DecimalJSONEncoder
from pos import pricing_view

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


def price_basket_view(model_admin: CampaignAdmin, request: HttpRequest) -> HttpResponse:
    """Price a basket as the POS endpoint would, with the explanation; nothing is stored. Each basket priced is
    a try-out of the operator in the chosen account (``accounts.tryouts``): past the limits, 429."""
    if not model_admin.has_view_permission(request):
        raise PermissionDenied
    form = PriceBasketForm(request.POST if request.method == "POST" else None)
    context: dict[str, Any] = {
        **model_admin.admin_site.each_context(request),
        "opts": model_admin.opts,
        "title": "Price a basket",
        "form": form,
    }
    status = 200
    if request.method == "POST" and form.is_valid():
        account: Account = form.cleaned_data["account"]
        body: dict[str, Any] = {
            "market": form.cleaned_data["market"],
            "line_items": form.cleaned_data["line_items"],
        }
        if form.cleaned_data["customer"]:
            body["customer"] = {"identifier": form.cleaned_data["customer"]}
        try:
            tryouts.charge(account=account, caller=f"user:{request.user.pk}")
            priced = pricing_view.price_for_page(account=account, body=body)
        except tryouts.RateLimited as exc:
            context["errors"] = [{"field": "", "message": f"Too many baskets priced: try again in {exc.wait} seconds."}]
            status = 429
        except InvalidInput as exc:
            context["errors"] = exc.errors()
        except ServiceError as exc:
            context["errors"] = exc.errors() or [{"field": "", "message": exc.message}]
        else:
            context.update(
                summary=priced.summary,
                lines=priced.lines,
                explanation=priced.explanation,
                warnings=priced.rule_warnings,
                answer=json.dumps(priced.summary, indent=2, ensure_ascii=False, cls=DecimalJSONEncoder),
            )
    return TemplateResponse(request, "admin/campaigns/campaign/price_basket.html", context, status=status)


register_tool(CampaignTool(name="price_basket", label="Price a basket", view=price_basket_view))
