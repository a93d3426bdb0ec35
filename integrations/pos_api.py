"""The POS API of the runtime integrations that look things up (``/api/v1/pos/...``, keys with the ``pos``
scope; spec: Endpoints B, Runtime integrations; E-commerce product, Product, Customer rules 1-3,
Customer-specific discount, Shipping option).

While a cashier works, the shop app asks here and the service asks the account's integrator
(``integrations.runtime.call``), checks the answer against its spec model (``integrations.answers``) and
answers the app. Every failure is a JSON error: no integration of the kind is a 404 (``not_configured``), an
integrator that is down or answers something else than JSON is a 502 (``integration_failed``), a slow one a
504 (``integration_timeout``), a JSON answer of the wrong shape a 502 (``bad_answer``) naming the field.

The lookups below are plain functions (account first, keyword-only); only ``lookup_product`` writes, through
``ledger.services.catalog``, after the integrator has answered (no transaction is held open over HTTP).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from accounts import selectors as account_selectors
from accounts.models import Account, Market, StockLocation
from accounts.scoping import PosView
from core.api import (
    AUTH_PARAMETERS,
    ErrorOutputSerializer,
    error_responses,
    optional_slash_paths,
    request_example,
    response_example,
)
from core.declare import Body, Field, optional
from core.errors import InvalidInput, NotFound, ServiceError
from core.nodes import Str
from core.serializers import JSONField
from integrations import answers, customers, services
from integrations.errors import BadAnswer, IntegrationFailed
from integrations.runtime import call
from ledger.models import Product
from ledger.selectors import catalog as catalog_selectors
from ledger.serializers.catalog import ProductOutputSerializer
from ledger.services import catalog as catalog_services

MAX_TERM = 255
DEFAULT_SEARCH_LIMIT = 50
MAX_SEARCH_LIMIT = 200

# --- Where the POS is: market and shop -------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    market: Market | None
    shop: StockLocation | None

    def values(self) -> dict[str, str]:
        """The ``market``, ``currency_code`` and ``shop_id`` placeholders ("" when unknown, so a template that
        uses them renders rather than fails)."""
        return {
            "market": self.market.identifier if self.market else "",
            "currency_code": self.market.currency if self.market else "",
            "shop_id": self.shop.identifier if self.shop else "",
        }


def resolve_place(*, account: Account, market: str = "", shop_id: str = "", market_required: bool = False) -> Place:
    """The market and shop a POS request names. ``shop_id`` implies its market; without either the account's
    only market is meant (a one-market account need not say it). Raises ServiceError naming the field."""
    shop = None
    if shop_id:
        shop = account_selectors.stock_location_by_identifier(account=account, identifier=shop_id)
        if shop is None:
            raise ServiceError(f"no stock location '{shop_id[:64]}' in this account", field="shop_id", code="unknown")
    found: Market | None = None
    if market:
        found = account_selectors.market_by_identifier(account=account, identifier=market)
        if found is None:
            raise ServiceError(f"no market '{market[:32]}' in this account", field="market", code="unknown")
        if shop is not None and shop.market_id != found.pk:
            raise ServiceError(
                f"the stock location '{shop.identifier}' is in market '{shop.market.identifier}', not '{market[:32]}'",
                field="market",
                code="mismatch",
            )
    elif shop is not None:
        found = shop.market
    else:
        only = list(account_selectors.markets(account=account)[:2])
        found = only[0] if len(only) == 1 else None
    if found is None and market_required:
        raise ServiceError("is required: the account has several markets", field="market", code="required")
    return Place(market=found, shop=shop)


# --- The lookups (plain functions, account first) ----------------------------------------------------------


def search_products(*, account: Account, term: str, place: Place, limit: int) -> list[dict[str, Any]]:
    """Spec: E-commerce product search (POS). The integrator's products, each checked (``retail_price``
    required), at most ``limit`` of them even when the integrator ignores the limit."""
    result = call(
        account=account, kind="product_search", values={"search_term": term, "limit": limit, **place.values()}
    )
    found: list[dict[str, Any]] = answers.require_valid("product_search", result.data)
    return found[:limit]


@dataclass(frozen=True)
class ImportedProduct:
    product: Product
    outcome: str  # "created", "updated" or "unchanged"


def _import_product(*, account: Account, data: dict[str, Any]) -> ImportedProduct:
    existing = catalog_selectors.product_by_id(account=account, product_id=data["id"])
    if existing is None:
        try:
            return ImportedProduct(catalog_services.create_product(account=account, data=data), "created")
        except ServiceError as exc:
            if exc.code != "duplicate":
                raise
            # Two tills scanned the same new product at once: the other one created it; update it instead.
            existing = catalog_selectors.product_by_id(account=account, product_id=data["id"])
            if existing is None:
                raise
    before = existing.updated_at
    product = catalog_services.update_product(account=account, product=existing, data=data)
    return ImportedProduct(product, "updated" if product.updated_at != before else "unchanged")


def lookup_product(*, account: Account, barcode: str, place: Place) -> ImportedProduct:
    """Spec: External product lookup (stock app, registering received goods): the Product the integrator
    answers for a scanned code is imported into the account (created, or replaced by id: a product edit event
    either way, none when nothing changed) and returned. An integrator's 404 or ``null`` means no such product
    (our 404); a price for a market the account does not have is a bad answer (the integrator's catalog and
    the account's markets disagree: staff must fix it, not the cashier)."""
    try:
        result = call(account=account, kind="product_lookup", values={"barcode": barcode, **place.values()})
    except IntegrationFailed as exc:
        if exc.upstream_status == 404:
            raise NotFound(f"The integrator knows no product with the code '{barcode[:100]}'.", code="unknown") from exc
        raise
    if result.data is None or result.data == [] or result.data == {}:
        raise NotFound(f"The integrator knows no product with the code '{barcode[:100]}'.", code="unknown")
    data: dict[str, Any] = answers.require_valid("product_lookup", result.data)
    try:
        catalog_services.check_product_references(account=account, data=data)
    except InvalidInput as exc:
        problems = exc.errors()
        raise BadAnswer(
            f"The integrator's product_lookup answer does not match the account: {answers.describe(problems)}",
            field=problems[0]["field"],
        ) from exc
    return _import_product(account=account, data=data)


def customer_facts(customer: dict[str, Any]) -> dict[str, Any]:
    """Spec: Customer rules 1-3, as facts the POS acts on, added to the customer (balance normalised):
    ``block_sales`` (no sale to them), ``credit`` (null without a credit limit; else the balance, the limit and
    ``available``: the largest invoice or customer-account purchase rule 1 lets through), ``deposit_prompt``
    (the overdue amount to ask to be deposited, or null) and ``b2b`` (an organization number: the sale keeps
    name and address; otherwise only the identifier)."""
    out = customers.normalise_balance(customer)
    limit = out.get("credit_limit")
    balance = Decimal(out.get("balance") or 0)
    out["block_sales"] = bool(out.get("block_sales", False))
    out["credit"] = (
        None
        if limit is None
        else {"balance": balance, "credit_limit": limit, "available": max(Decimal(limit) + balance, Decimal(0))}
    )
    out["deposit_prompt"] = customers.overdue_prompt(out)
    out["b2b"] = bool(str(out.get("organization_number") or "").strip())
    return out


def lookup_customers(*, account: Account, term: str, place: Place) -> list[dict[str, Any]]:
    """Spec: Customer lookup (POS): the integrator's customers, checked, each with its rule facts."""
    result = call(account=account, kind="customer_lookup", values={"search_term": term, **place.values()})
    found: list[dict[str, Any]] = answers.require_valid("customer_lookup", result.data)
    return [customer_facts(customer) for customer in found]


def customer_discounts(*, account: Account, customer_id: str, market: Market) -> list[dict[str, Any]]:
    """Spec: Customer-specific discounts: the customer's discounts in ``market`` (its currency is the base
    currency), checked against the campaign schema of their type, prices plain numbers. Always asked afresh and
    remembered for the baskets that follow (``services.customer_discounts_answer``): a shop app asks here when a
    customer is attached to the sale."""
    data = services.customer_discounts_answer(account=account, customer_id=customer_id, market=market, refresh=True)
    found: list[dict[str, Any]] = answers.require_valid("customer_discounts", data)
    return found


TEXT = Str(max_length=1000, allow_blank=True)


class ShippingAddress(Body, schema_name="PosShippingAddress"):
    """The customer's address (every part may be blank)."""

    name = optional(TEXT)
    street = optional(TEXT)
    city = optional(TEXT)
    postal_code = optional(Str(max_length=32, allow_blank=True))
    country = optional(TEXT)
    country_code = optional(Str(max_length=2, allow_blank=True))
    email = optional(Str(max_length=320, allow_blank=True))
    phone = optional(Str(max_length=64, allow_blank=True))


class ShippingOptionsRequest(Body, schema_name="PosShippingOptions"):
    """The address to ship to and the shop the sale is made in."""

    address = ShippingAddress
    stock_location = Field(Str(max_length=64), description="The shop (stock location identifier).")


def shipping_options(*, account: Account, address: dict[str, Any], stock_location: str) -> list[dict[str, Any]]:
    """Spec: Shipping options: the customer's address, the shop and its base currency in; the options out. The
    one the customer chooses goes into the sale's shipping behavior as ``method_id`` (with ``method_title``)."""
    place = resolve_place(account=account, shop_id=stock_location)
    values = {**{name: str(address.get(name, "")) for name in ShippingAddress.fields}, **place.values()}
    result = call(account=account, kind="shipping_options", values=values)
    found: list[dict[str, Any]] = answers.require_valid("shipping_options", result.data)
    return found


# --- Request parameters ------------------------------------------------------------------------------------


def text_param(request: Request, name: str, *, required: bool = False, max_length: int = MAX_TERM) -> str:
    """A query parameter, trimmed; refused when required and blank, or too long (not silently cut)."""
    value = request.query_params.get(name, "").strip()
    if required and not value:
        raise ServiceError("is required", field=name, code="required")
    if len(value) > max_length:
        raise ServiceError(f"must be at most {max_length} characters", field=name, code="too_long")
    if "\x00" in value:
        raise ServiceError("must not contain NUL characters", field=name, code="invalid")
    return value


def limit_param(request: Request) -> int:
    raw = request.query_params.get("limit", "").strip()
    if not raw:
        return DEFAULT_SEARCH_LIMIT
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_SEARCH_LIMIT:
        raise ServiceError(f"must be a whole number from 1 to {MAX_SEARCH_LIMIT}", field="limit", code="invalid")
    return int(raw)


def place_params(request: Request, account: Account, *, market_required: bool = False) -> Place:
    return resolve_place(
        account=account,
        market=text_param(request, "market", max_length=32),
        shop_id=text_param(request, "shop_id", max_length=64),
        market_required=market_required,
    )


# --- OpenAPI ------------------------------------------------------------------------------------------------

_ERRORS_EXAMPLES: dict[int, tuple[str, dict[str, Any]]] = {
    502: (
        "The integrator failed or answered the wrong shape",
        {
            "status": "ERROR",
            "message": "The integrator's product_search answer does not match the spec: [0].retail_price is required",
            "errors": [
                {
                    "field": "[0].retail_price",
                    "message": "The integrator's product_search answer does not match the spec: "
                    "[0].retail_price is required",
                    "code": "bad_answer",
                }
            ],
        },
    ),
    504: ("The integrator did not answer in time", {"status": "ERROR", "message": "The integrator did not answer."}),
}


def _responses(ok: Any, *codes: int) -> dict[int, Any]:
    out: dict[int, Any] = {200: ok, **error_responses(*codes)}
    for code, (summary, value) in _ERRORS_EXAMPLES.items():
        example = response_example(summary, value, status_code=code)
        out[code] = OpenApiResponse(ErrorOutputSerializer, description=summary, examples=[example])
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


def _results(name: str) -> Any:
    return inline_serializer(name, {"results": serializers.ListField(child=JSONField())})


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


# --- Views ------------------------------------------------------------------------------------------------


def _asks(operation_id: str, summary: str, description: str, parameters: list[Any], answer: Any, **rest: Any) -> Any:
    """``extend_schema`` of a view that asks the integrator: the POS tag, its answer or the failures every
    such view shares (``_NOT_CONFIGURED``); ``rest`` is the request body and examples."""
    return extend_schema(
        operation_id=operation_id,
        tags=["pos"],
        summary=summary,
        description=description + _NOT_CONFIGURED,
        parameters=parameters,
        responses=_responses(answer, 400, 404),
        **rest,
    )


class ProductSearchView(PosView):
    @_asks(
        "pos_products_search",
        "Search the e-commerce products",
        "Asks the `product_search` integration; answers its E-commerce products, each checked "
        "(`retail_price` required, L10nString names), at most `limit`.",
        [
            *_params(("q", "The search term.", True), _MARKET, _SHOP),
            OpenApiParameter("limit", OpenApiTypes.INT, OpenApiParameter.QUERY, required=False),
        ],
        _results("PosProductSearchResult"),
        examples=[response_example("products", _PRODUCTS_EXAMPLE)],
    )
    def get(self, request: Request) -> Response:
        term = text_param(request, "q", required=True)
        limit = limit_param(request)  # before the place: the order the errors are reported in
        found = search_products(account=self.account, term=term, place=place_params(request, self.account), limit=limit)
        return Response({"results": found})


class ProductLookupView(PosView):
    @_asks(
        "pos_products_lookup",
        "Look up a product at the integrator by its code",
        "Asks the `product_lookup` integration for the scanned code; the Product it answers is imported into "
        "the account (created or replaced by id, emitting a product edit event) and returned with `outcome` "
        "(`created`, `updated`, `unchanged`). An integrator's 404 is a 404 here.",
        _params(("barcode", "The scanned code (EAN, SKU, ISBN...).", True), _MARKET, _SHOP),
        inline_serializer(
            "PosProductLookupResult", {"outcome": serializers.CharField(), "product": ProductOutputSerializer()}
        ),
        examples=[response_example("imported", _LOOKUP_EXAMPLE)],
    )
    def get(self, request: Request) -> Response:
        barcode = text_param(request, "barcode", required=True)
        imported = lookup_product(account=self.account, barcode=barcode, place=place_params(request, self.account))
        return Response({"outcome": imported.outcome, "product": ProductOutputSerializer(imported.product).data})


class CustomerLookupView(PosView):
    @_asks(
        "pos_customers_lookup",
        "Look up customers",
        "Asks the `customer_lookup` integration; answers its customers, each checked, the deprecated balance "
        "object flattened, with the spec's rules as facts: `block_sales`, `credit` (`{balance, credit_limit, "
        "available}` or null: invoice and customer-account payments above `available` are refused), "
        "`deposit_prompt` (the overdue amount to ask for as a deposit, or null) and `b2b` (only a B2B "
        "customer's name and address are kept on a sale).",
        _params(("q", "The search term.", True), _MARKET, _SHOP),
        _results("PosCustomerLookupResult"),
        examples=[response_example("customers", _CUSTOMERS_EXAMPLE)],
    )
    def get(self, request: Request) -> Response:
        term = text_param(request, "q", required=True)
        return Response(
            {"results": lookup_customers(account=self.account, term=term, place=place_params(request, self.account))}
        )


class CustomerDiscountsView(PosView):
    @_asks(
        "pos_customer_discounts",
        "The customer-specific discounts of a customer",
        "Asks the `customer_discounts` integration (customer id, market, the market's currency); answers the "
        "discounts, each checked like an imported campaign of its type, prices plain numbers. Basket pricing "
        "fetches them itself when the basket has a `customer`.",
        _params(_MARKET, _SHOP),
        _results("PosCustomerDiscountsResult"),
        examples=[response_example("discounts", _DISCOUNTS_EXAMPLE)],
    )
    def get(self, request: Request, customer_id: str) -> Response:
        if len(customer_id) > MAX_TERM or not customer_id.strip():
            raise ServiceError(f"must be 1 to {MAX_TERM} characters", field="customer_id", code="invalid")
        place = place_params(request, self.account, market_required=True)
        assert place.market is not None  # market_required
        found = customer_discounts(account=self.account, customer_id=customer_id, market=place.market)
        return Response({"results": found})


class ShippingOptionsView(PosView):
    @_asks(
        "pos_shipping_options",
        "The shipping options for an address",
        "Asks the `shipping_options` integration with the customer's address, the shop and its market's "
        "currency; answers the options `{id, price, title, subtitle}`. Put the chosen one on the sale's shipping "
        "line as `behavior.shipping.method_id` (its `title` as `method_title`).",
        AUTH_PARAMETERS,
        _results("PosShippingOptionsResult"),
        request={"application/json": ShippingOptionsRequest},
        examples=[request_example("address", _SHIPPING_REQUEST), response_example("options", _SHIPPING_EXAMPLE)],
    )
    def post(self, request: Request) -> Response:
        cleaned = ShippingOptionsRequest.validated(self.body())
        found = shipping_options(
            account=self.account, address=cleaned["address"], stock_location=cleaned["stock_location"]
        )
        return Response({"results": found})


# Fixed paths (issue 6), with and without the trailing slash.
pos_urls = optional_slash_paths(
    ("pos/products/search", ProductSearchView, "pos-products-search"),
    ("pos/products/lookup", ProductLookupView, "pos-products-lookup"),
    ("pos/customers", CustomerLookupView, "pos-customers"),
    (r"pos/customers/(?P<customer_id>[^/]+)/discounts", CustomerDiscountsView, "pos-customer-discounts"),
    ("pos/shipping-options", ShippingOptionsView, "pos-shipping-options"),
)
