"""OpenAPI descriptions of the integrations' POS API (``integrations.pos_api``): each view's schema, with request
and response examples from the spec, and the failures every view that asks the integrator shares."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers

from core.api import (
    AUTH_PARAMETERS,
    ErrorOutputSerializer,
    Example,
    error_responses,
    refusal,
    request_example,
    response_example,
)
from core.errors import error_body
from core.serializers import JSONField
from integrations.bodies.pos import ShippingOptionsRequest
from integrations.errors import not_configured
from ledger.serializers.catalog import ProductOutputSerializer

F = TypeVar("F", bound=Callable[..., Any])


def not_configured_example(kind: str) -> Example:
    """The 404 of a view asking the integrator of ``kind`` in an account without one."""
    missing = not_configured(kind)
    return "Not configured", error_body(missing.message, missing.errors())


def _failures(kind: str, *, bad_answer: tuple[str, str] | None = None, required: str | None = None) -> dict[int, Any]:
    """The errors of a view asking the integrator of ``kind``: no integration of the kind (404), an integrator
    answering an error status (502; ``bad_answer``: the field and message of an answer of the wrong shape, a 502
    too), a slow one (504); ``required``: a query parameter the view requires, whose absence is its 400."""
    failed = "the integrator answered HTTP 503"
    examples = {404: not_configured_example(kind)}
    if required is not None:
        examples[400] = refusal(f"Without {required}", "is required", field=required, code="required")
    out: dict[int, Any] = error_responses(400, 404, scope="pos", examples=examples)
    failures = [response_example("The integrator failed", {"status": "ERROR", "message": failed}, status_code=502)]
    if bad_answer is not None:
        field, problem = bad_answer
        message = f"The integrator's {kind} answer does not match the spec: {field} {problem}"
        value = {
            "status": "ERROR",
            "message": message,
            "errors": [{"field": field, "message": message, "code": "bad_answer"}],
        }
        failures.append(response_example("An answer of the wrong shape", value, status_code=502))
    out[502] = OpenApiResponse(
        ErrorOutputSerializer, description="The integrator failed or answered the wrong shape", examples=failures
    )
    out[504] = OpenApiResponse(description="The integrator did not answer within the integration's timeout.")
    return out


def _params(*params: tuple[str, str, bool]) -> list[OpenApiParameter]:
    return [
        *AUTH_PARAMETERS,
        *(
            OpenApiParameter(name, OpenApiTypes.STR, OpenApiParameter.QUERY, required=required, description=text)
            for name, text, required in params
        ),
    ]


_MARKET = ("market", "Market identifier; default: the shop's market, or the account's only market.", False)
_SHOP = ("shop_id", "Stock location identifier of the till's shop (sent on as `{shop_id}`).", False)


def _results(name: str, kind: str, what: str) -> Any:
    """The answer of a POS view that passes on what the ``kind`` integration answered: ``what``, each checked."""
    text = (
        f"{what}, as the `{kind}` integration answered them, each checked against that answer's schema (the "
        f"`{kind}` callback of `POST /api/v1/runtime-integrations/`; unknown fields dropped)."
    )
    return inline_serializer(name, {"results": serializers.ListField(child=JSONField(), help_text=text)})


_PRODUCTS_EXAMPLE = {
    "results": [
        {
            "id": "web-1",
            "variant_id": "web-1-blue-m",
            "name": {"da": "Trøje", "en": "Sweater"},
            "variant_name": "Blue / M",
            "barcode": "5701234567890",
            "retail_price": 499.95,
            "sale_price": 399.95,
            "taxes": [{"name": "VAT", "rate": 0.25, "type": "vat"}],
        }
    ]
}
_LOOKUP_EXAMPLE = {
    "outcome": "created",
    "product": {
        "id": "ext-5701234567890",
        "name": {"da": "Ekstern vare"},
        "barcode": "5701234567890",
        "retail_price": 149.95,
        "created_at": "2026-01-15T09:30:00Z",
        "updated_at": "2026-01-15T09:30:00Z",
    },
}
_CUSTOMERS_EXAMPLE = {
    "results": [
        {
            "identifier": "c-1",
            "name": "Acme Wholesale ApS",
            "organization_number": "DK12345678",
            "balance": 100,
            "credit_limit": 500,
            "block_sales": False,
            "credit": {"balance": 100, "credit_limit": 500, "available": 600},
            "deposit_prompt": None,
            "b2b": True,
        },
        {
            "identifier": "c-2",
            "balance": -250,
            "balance_overdue": 250,
            "block_sales": False,
            "credit": None,
            "deposit_prompt": 250,
            "b2b": False,
        },
    ]
}
_DISCOUNTS_EXAMPLE = {
    "results": [
        {
            "id": "cd-c-1",
            "type": "new_price_discount-single_product",
            "product_id": "p-1",
            "new_price_per_item": 79,
            "name": "Customer price",
            "display_name": "Your price",
            "priority": 10,
        }
    ]
}
_SHIPPING_REQUEST = {
    "stock_location": "shop-1",
    "address": {"name": "Jane Doe", "street": "Vestergade 1", "city": "København", "postal_code": "1456"},
}
_SHIPPING_EXAMPLE = {
    "results": [
        {"id": "gls", "price": 39, "title": "GLS", "subtitle": "1-2 business days"},
        {"id": "pickup", "price": 0, "title": "Pick up in shop", "subtitle": "Ready tomorrow"},
    ]
}
_NOT_CONFIGURED = (
    " A kind with no integration configured answers 404 (`not_configured`); an integrator that fails 502, a slow "
    "one 504, a JSON answer of the wrong shape 502 (`bad_answer`, naming the field)."
)


def _asks(
    operation_id: str,
    summary: str,
    parameters: list[Any],
    answer: Any,
    *,
    kind: str,
    bad_answer: tuple[str, str] | None = None,
    required: str | None = None,
    **rest: Any,
) -> Callable[[F], F]:
    """``extend_schema`` of a view that asks the integrator of ``kind``: the POS tag, its answer or the failures
    every such view shares (``_failures``); its description the view's docstring and those failures
    (``_NOT_CONFIGURED``); ``rest`` is the request body and examples."""

    def decorate(view: F) -> F:
        description = " ".join((view.__doc__ or "").split()) + _NOT_CONFIGURED
        schema = extend_schema(
            operation_id=operation_id,
            tags=["pos"],
            summary=summary,
            description=description,
            parameters=parameters,
            responses={200: answer, **_failures(kind, bad_answer=bad_answer, required=required)},
            **rest,
        )
        return schema(view)  # type: ignore[no-any-return]

    return decorate


PRODUCT_SEARCH = _asks(
    "pos_products_search",
    "Search the e-commerce products",
    [
        *_params(("q", "The search term.", True), _MARKET, _SHOP),
        OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY, required=False),
    ],
    _results("PosProductSearchResult", "product_search", "The e-commerce products found, at most `limit`"),
    kind="product_search",
    required="q",
    bad_answer=("[0].retail_price", "is required"),
    examples=[response_example("products", _PRODUCTS_EXAMPLE)],
)
PRODUCT_LOOKUP = _asks(
    "pos_products_lookup",
    "Look up a product at the integrator by its code",
    _params(("barcode", "The scanned code (EAN, SKU, ISBN...).", True), _MARKET, _SHOP),
    inline_serializer(
        "PosProductLookupResult",
        {
            "outcome": serializers.ChoiceField(
                choices=["created", "updated", "unchanged"],
                help_text="What the import did: `created` a new product, `updated` the product of that id, or left "
                "it `unchanged` (no product edit event).",
            ),
            "product": ProductOutputSerializer(help_text="The product as imported into the account."),
        },
    ),
    kind="product_lookup",
    required="barcode",
    examples=[response_example("imported", _LOOKUP_EXAMPLE)],
)
CUSTOMER_LOOKUP = _asks(
    "pos_customers_lookup",
    "Look up customers",
    _params(("q", "The search term.", True), _MARKET, _SHOP),
    _results(
        "PosCustomerLookupResult",
        "customer_lookup",
        "The customers found, with the facts `block_sales`, `credit`, `deposit_prompt` and `b2b` added",
    ),
    kind="customer_lookup",
    required="q",
    examples=[response_example("customers", _CUSTOMERS_EXAMPLE)],
)
CUSTOMER_DISCOUNTS = _asks(
    "pos_customer_discounts",
    "The customer-specific discounts of a customer",
    _params(_MARKET, _SHOP),
    _results("PosCustomerDiscountsResult", "customer_discounts", "The customer's discounts, prices plain numbers"),
    kind="customer_discounts",
    examples=[response_example("discounts", _DISCOUNTS_EXAMPLE)],
)
SHIPPING_OPTIONS = _asks(
    "pos_shipping_options",
    "The shipping options for an address",
    AUTH_PARAMETERS,
    _results("PosShippingOptionsResult", "shipping_options", "The shipping options for the address"),
    request={"application/json": ShippingOptionsRequest},
    kind="shipping_options",
    examples=[request_example("address", _SHIPPING_REQUEST), response_example("options", _SHIPPING_EXAMPLE)],
)
