"""The POS API of campaigns (``/api/v1/pos/...``, keys with the ``pos`` scope): the shop app prices a basket
on every change (spec: Discount campaign, Product rule, Discount Summary, Tax Summary, sale ``summary``).

The view reads the body, validates it with ``pos.bodies.Basket``, calls one service and answers the
priced basket: the spec's sale ``summary`` object itself, plus ``explanation`` with ``?explain=true``.
"""

from __future__ import annotations

from typing import Any

from django.urls import re_path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scoping import PosView
from campaigns.serializers import PricedBasketSerializer
from core.api import AUTH_PARAMETERS, error_responses, request_example, response_example
from core.errors import ServiceError
from pos import baskets, bodies

TRUE_WORDS = ("true", "1", "yes")
FALSE_WORDS = ("false", "0", "no", "")


def explain_requested(request: Request) -> bool:
    """``?explain=true``; an unrecognised value is refused rather than silently read as false."""
    value = request.query_params.get("explain", "").strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ServiceError("must be true or false", field="explain", code="invalid")


# --- OpenAPI ------------------------------------------------------------------------------------------------

_REQUEST = {
    "market": "dk",
    "line_items": [
        {"line_item_id": "li-1", "id": "tshirt-basic", "variant_id": "tshirt-basic-m", "quantity": 3},
        {"line_item_id": "li-2", "id": "cola-33cl", "quantity": 2, "unit_price": 12.0, "tags": ["can"]},
        {
            "line_item_id": "ship",
            "id": "shipping-gls",
            "quantity": 1,
            "unit_price": 39.0,
            "behavior": {"shipping": {"method_id": "gls"}},
        },
    ],
}
_VAT_25 = {"tax_name": "VAT", "rate": 0.25, "type": "vat"}
_DISCOUNT = {
    "amount": 4.47,
    "discount": {
        "id": "tshirts-15",
        "name": "15% on 3 or more",
        "application": {"line_item": "li-1"},
        "mode": {"automatic": {"domain": "KX_PROMOTION_DOMAIN", "identifier": "tshirts-15"}},
        "type": {"percentage": 0.15},
        "trigger": {"items": "items", "count": 3},
    },
}


def _line(line_item_id: str, quantity: int, unit: float, total: float, vat: float, **extra: Any) -> dict[str, Any]:
    return {
        "line_item_id": line_item_id,
        "quantity": quantity,
        "unit_price": unit,
        "retail_price": round(unit * quantity, 2),
        "base_price": round(unit * quantity, 2),
        "sub_total": total,
        "total": total,
        "vat_amount": vat,
        "sales_tax_amount": 0,
        "total_tax_amount": vat,
        "taxes": [{**_VAT_25, "amount": vat}],
        **extra,
    }


_DEPOSIT = {
    "container_deposit": {"product_id": "cola-33cl", "tag": "can", "rule_id": "can", "parent_line_item_id": "li-2"}
}
_ANSWER = {
    "base_price": 95.85,
    "sub_total": 91.38,
    "total": 91.38,
    "vat_amount": 18.28,
    "sales_tax_amount": 0,
    "total_tax_amount": 18.28,
    "total_discounts": 4.47,
    "taxes": [{**_VAT_25, "amount": 18.28}],
    "is_return": False,
    "line_items": [
        _line("li-1", 3, 9.95, 25.38, 5.08, id="tshirt-basic", variant_id="tshirt-basic-m", discounts=[_DISCOUNT]),
        _line("li-2", 2, 12.0, 24.0, 4.8, id="cola-33cl", tags=["can"], discounts=[]),
        _line("li-2-deposit-can", 2, 1.5, 3.0, 0.6, name="Pant", behavior=_DEPOSIT, discounts=[]),
        _line("ship", 1, 39.0, 39.0, 7.8, id="shipping-gls", behavior={"shipping": {"method_id": "gls"}}, discounts=[]),
    ],
}
_EXPLANATION = [
    {
        "campaign_id": "tshirts-15",
        "type": "percentage_discount-count_or_more-single_product",
        "display_name": "15% on 3 or more",
        "priority": 10,
        "source": "campaign",
        "members_only": False,
        "continue_evaluation": False,
        "fired": True,
        "reason": "applied",
        "units": [{"line_item_id": "li-1", "index": i, "before": 9.95, "after": 8.46} for i in range(3)],
    },
    {
        "campaign_id": "free-shipping-500",
        "type": "free_shipping_by_amount",
        "display_name": "Free shipping from 500",
        "priority": 0,
        "source": "campaign",
        "members_only": False,
        "continue_evaluation": False,
        "fired": False,
        "reason": "below amount (49.38 of 500)",
        "units": [],
    },
]

PRICE_DOCS: dict[str, Any] = {
    "operation_id": "pos_basket_price",
    "tags": ["pos"],
    "summary": "Price a basket",
    "description": (
        "Applies the market's discount campaigns (highest priority first) and product rules to the basket and "
        "answers the spec's sale `summary` for it; nothing is stored. The answer is the summary object itself, "
        "with extra top-level `explanation` (per campaign considered: fired or why not, on which units) and "
        "`warnings` (e.g. a deposit rule without a price in the market) only "
        "with `?explain=true`.\n\n"
        "**Per unit**: `unit_price` (request and answer), before discounts. **Per line** "
        "(all units together, as in a sale): `retail_price` and `base_price` (before discounts), "
        "`sub_total` (after discounts, before sales tax), "
        "`total`, `vat_amount`, `sales_tax_amount`, `total_tax_amount`, `taxes[].amount` and each discount's "
        "`amount`. The basket's amounts are the sums of its lines'.\n\n"
        "A line's `unit_price` may be left out for a product the service knows: its `retail_price` for the market "
        "is used (a variable-price product without one answers 400 naming `line_items[i].unit_price`). "
        "`product_group` and `taxes` default to the product's; without taxes the market's default taxes apply. "
        "`customer` enables members-only campaigns. Container-deposit lines of product rules are appended."
    ),
    "parameters": [
        *AUTH_PARAMETERS,
        OpenApiParameter(
            "explain",
            OpenApiTypes.BOOL,
            OpenApiParameter.QUERY,
            required=False,
            description="`true` adds `explanation`: which campaigns fired on which units and why others did not.",
        ),
    ],
    "request": {"application/json": bodies.Basket},
    "responses": {200: PricedBasketSerializer, **error_responses(400, scope="pos")},
    "examples": [
        request_example("basket", _REQUEST),
        response_example("priced", _ANSWER),
        response_example("priced, with ?explain=true", {**_ANSWER, "explanation": _EXPLANATION}),
    ],
}


# --- Views ------------------------------------------------------------------------------------------------


class BasketPriceView(PosView):
    """POST a basket; answers it priced. A read: nothing is stored and nothing is exported."""

    @extend_schema(**PRICE_DOCS)
    def post(self, request: Request) -> Response:
        explain = explain_requested(request)
        basket = baskets.validate_basket(self.body())
        result = baskets.price_basket_request(account=self.account, basket=basket, explain=explain)
        answer = dict(result.summary)
        if explain:
            answer["explanation"] = result.explanation or []
            # What did not stop pricing but staff should fix (a deposit rule without a price in this market).
            answer["warnings"] = result.warnings
        elif shown := [w for w in result.warnings if w.get("code") in baskets.CUSTOMER_DISCOUNT_WARNINGS]:
            answer["warnings"] = shown  # the cashier must know the customer's own prices were left out
        return Response(answer)


# With and without the trailing slash (a POST cannot be redirected).
urls: list[Any] = [re_path(r"^pos/baskets/price/?$", BasketPriceView.as_view(), name="pos-basket-price")]
