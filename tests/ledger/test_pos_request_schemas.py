"""/api/schema/ publishes the declared request body of every POS operation, field by field."""

from __future__ import annotations

from typing import Any

import pytest
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema

# Each POS operation with a request body: its component and the fields it must list.
POS_BODIES = {
    "/api/v1/pos/checkouts/": (
        "CheckoutRequest",
        {"identifier", "voided", "timing", "source", "base_currency_code", "payments", "receipt_metadata", "sales"},
    ),
    "/api/v1/pos/registers/{register_id}/open": ("OpenRegisterRequest", {"cash_total_at_open"}),
    "/api/v1/pos/registers/{register_id}/close": (
        "CloseRegisterRequest",
        {"counted", "comment", "event_counts", "cashier", "identifier"},
    ),
    "/api/v1/pos/newsletter-signups/": (
        "PosNewsletterSignupRequest",
        {"email", "first_name", "last_name", "name", "register_id", "shop_id", "timestamp", "identifier"},
    ),
    "/api/v1/pos/giftcards/": ("PosGiftCardCreateRequest", {"amount", "currency_code", "shop_id"}),
    "/api/v1/pos/giftcards/{code}/activate/": ("PosGiftCardActivateRequest", {"sale_id", "shop_id"}),
    "/api/v1/pos/giftcards/{code}/pay/": (
        "PosGiftCardPayRequest",
        {"amount", "currency_code", "identifier", "sale_id", "shop_id"},
    ),
    "/api/v1/pos/customer-accounts/{customer_id}/pay/": (
        "PosCustomerAccountPayRequest",
        {"amount", "currency_code", "purchase_amount", "payment_type", "identifier", "shop_id"},
    ),
    "/api/v1/pos/shipping-options/": ("PosShippingOptionsRequest", {"address", "stock_location"}),
    "/api/v1/pos/baskets/price/": ("BasketRequest", {"market", "customer", "line_items"}),
}


@pytest.fixture(scope="module")
def schema() -> dict[str, Any]:
    document: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    return document


def component(schema: dict[str, Any], ref: dict[str, Any]) -> dict[str, Any]:
    """The component ``ref`` names; a described field's ref is wrapped (``{"allOf": [ref], "description"}``)."""
    if "allOf" in ref:
        (ref,) = ref["allOf"]
    found: dict[str, Any] = schema["components"]["schemas"][ref["$ref"].rsplit("/", 1)[-1]]
    return found


def request_schema(schema: dict[str, Any], path: str) -> dict[str, Any]:
    found: dict[str, Any] = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return found


def test_the_schema_is_a_valid_openapi_document(schema: dict[str, Any]) -> None:
    validate_schema(schema)


@pytest.mark.parametrize("path", sorted(POS_BODIES))
def test_each_pos_body_is_published_with_its_fields(schema: dict[str, Any], path: str) -> None:
    name, fields = POS_BODIES[path]
    ref = request_schema(schema, path)
    assert ref == {"$ref": f"#/components/schemas/{name}"}
    assert set(component(schema, ref)["properties"]) == fields


def test_the_checkout_publishes_its_nested_bodies_and_rules(schema: dict[str, Any]) -> None:
    checkout = component(schema, request_schema(schema, "/api/v1/pos/checkouts/"))
    assert checkout["required"] == ["identifier", "timing", "source", "base_currency_code", "payments", "sales"]
    assert "At most one of the sales is a return." in checkout["description"]
    sale = component(schema, checkout["properties"]["sales"]["items"])
    summary = component(schema, sale["properties"]["basket"])
    assert "total_tax_amount" in summary["required"]
    assert "either a sale or a return, never both" in summary["description"]
    line = component(schema, summary["properties"]["line_items"]["items"])
    behaviors = line["properties"]["behavior"]["properties"]
    assert set(behaviors) >= {"shipping", "giftcard", "expense", "container_deposit"}


def test_stock_events_are_one_event_or_an_array_of_them(schema: dict[str, Any]) -> None:
    body = component(schema, request_schema(schema, "/api/v1/pos/stock-events/"))
    one, many = body["oneOf"]
    assert many["type"] == "array" and many["maxItems"] == 1000 and many["items"] == one
    event = component(schema, one)
    assert component(schema, event["properties"]["type"])["enum"] == ["received", "stock_count_reset", "external_reset"]
    assert event["required"] == ["type", "product_id", "stock_location_id"]


def test_every_request_example_is_kept(schema: dict[str, Any]) -> None:
    for path in [*POS_BODIES, "/api/v1/pos/stock-events/"]:
        assert schema["paths"][path]["post"]["requestBody"]["content"]["application/json"].get("examples"), path
