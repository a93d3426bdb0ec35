"""Price a basket: a member types a basket (market, customer, lines of product id, quantity, unit price and tags)
and sees it priced as the POS endpoint prices it, with each campaign the engine looked at and why it fired or not
(``pos.pricing_view``). It changes nothing, so every member may, and the form is a GET: the URL of a priced
basket can be shared. Each basket priced costs what a checkout's pricing does (it may call the account's
customer-discounts integration), so it counts as a try-out of the member (``accounts.tryouts``): past the limits,
429 with ``Retry-After``."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any

from django import forms
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts import selectors as account_selectors
from accounts import tryouts
from accounts.models import Account
from backoffice.members import member_view
from core.errors import ServiceError
from pos import pricing_view
from pos.bodies import MAX_QUANTITY

# Lines the form offers, and at most takes.
LINES = 8
MAX_LINES = 50


class BasketForm(forms.Form):
    market = forms.ChoiceField(label=gettext_lazy("Market"))
    customer = forms.CharField(
        label=gettext_lazy("Customer identifier (optional)"),
        max_length=255,
        required=False,
        help_text=gettext_lazy("Members-only campaigns and the customer's own discounts apply with one."),
    )

    def __init__(self, *args: Any, account: Account, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        markets = list(account_selectors.markets(account=account))
        self.fields["market"].choices = [(m.identifier, f"{m.identifier} ({m.currency})") for m in markets]  # type: ignore[attr-defined]
        if len(markets) == 1:
            self.fields["market"].initial = markets[0].identifier


class BasketLineForm(forms.Form):
    product = forms.CharField(label=gettext_lazy("Product id"), max_length=255)
    quantity = forms.IntegerField(label=gettext_lazy("Quantity"), min_value=1, max_value=MAX_QUANTITY, initial=1)
    unit_price = forms.DecimalField(
        label=gettext_lazy("Unit price"),
        required=False,
        min_value=Decimal(0),
        max_digits=14,
        decimal_places=4,
    )
    # Their help is one sentence below the lines (the page's), not one per row.
    tags = forms.CharField(label=gettext_lazy("Tags"), required=False, max_length=1000)

    def has_changed(self) -> bool:
        """A row is filled when it names a product, a price or tags; a quantity alone (its initial 1, or nothing
        sent) leaves it blank, so a blank row is never an error."""
        return any(str(self.data.get(self.add_prefix(name), "")).strip() for name in ("product", "unit_price", "tags"))

    def clean_tags(self) -> list[str]:
        return [tag.strip() for tag in self.cleaned_data["tags"].split(",") if tag.strip()][:100]


LineFormSet = forms.formset_factory(
    BasketLineForm, extra=LINES, max_num=MAX_LINES, absolute_max=MAX_LINES, validate_max=True
)


def _body(form: BasketForm, lines: list[BasketLineForm]) -> dict[str, Any]:
    """The POS endpoint's basket of the form's values: one line per filled row, numbered from 1."""
    line_items = []
    for number, line in enumerate(lines, start=1):
        item: dict[str, Any] = {
            "line_item_id": str(number),
            "id": line.cleaned_data["product"],
            "quantity": line.cleaned_data["quantity"],
        }
        if line.cleaned_data["unit_price"] is not None:
            item["unit_price"] = line.cleaned_data["unit_price"]
        if line.cleaned_data["tags"]:
            item["tags"] = line.cleaned_data["tags"]
        line_items.append(item)
    body: dict[str, Any] = {"market": form.cleaned_data["market"], "line_items": line_items}
    if form.cleaned_data["customer"]:
        body["customer"] = {"identifier": form.cleaned_data["customer"]}
    return body


def _refusal(form: BasketForm, lines: list[BasketLineForm], exc: ServiceError) -> None:
    """The pricing's refusal on the field it names (``line_items[2].unit_price`` on the third filled row)."""
    for error in exc.errors() or [{"field": "", "message": exc.message}]:
        field = error.get("field") or ""
        row = re.match(r"line_items\[(\d+)\]\.?(\w*)", field)
        if row and int(row.group(1)) < len(lines):
            line = lines[int(row.group(1))]
            name = {"id": "product", "unit_price": "unit_price", "quantity": "quantity", "tags": "tags"}
            line.add_error(name.get(row.group(2)), error["message"])
        elif field in ("market", "customer"):
            form.add_error(field, error["message"])
        else:
            form.add_error(None, f"{field}: {error['message']}" if field else error["message"])


@member_view()
def price_basket(request: HttpRequest) -> HttpResponse:
    """GET without ``market``: the empty form; with it, the basket priced (or the form's errors, 400)."""
    account = request.member.account  # type: ignore[attr-defined]
    submitted = "market" in request.GET
    form = BasketForm(request.GET if submitted else None, account=account)
    formset = LineFormSet(request.GET if submitted else None, prefix="line")
    context: dict[str, Any] = {"form": form, "formset": formset}
    if not submitted:
        return render(request, "backoffice/pricing/basket.html", context)
    if not (form.is_valid() and formset.is_valid()):
        return render(request, "backoffice/pricing/basket.html", context, status=400)
    lines = [line for line in formset.forms if line.has_changed() and line.cleaned_data]
    if not lines:
        form.add_error(None, _("Enter at least one line: a product id and a quantity."))
        return render(request, "backoffice/pricing/basket.html", context, status=400)
    try:
        tryouts.charge(account=account, caller=f"user:{request.user.pk}")
    except tryouts.RateLimited as exc:
        limited = _("Too many baskets priced in a short time: try again in %(seconds)d seconds.")
        form.add_error(None, limited % {"seconds": exc.wait})
        response = render(request, "backoffice/pricing/basket.html", context, status=429)
        response["Retry-After"] = str(exc.wait)
        return response
    try:
        context["priced"] = pricing_view.price_for_page(account=account, body=_body(form, lines))
    except ServiceError as exc:
        _refusal(form, lines, exc)
        return render(request, "backoffice/pricing/basket.html", context, status=400)
    return render(request, "backoffice/pricing/basket.html", context)
