"""The POS API of the runtime integrations that look things up (``/api/v1/pos/...``, keys with the ``pos``
scope; spec: Endpoints B, Runtime integrations; E-commerce product, Product, Customer rules 1-3,
Customer-specific discount, Shipping option).

While a cashier works, the shop app asks here and the service asks the account's integrator
(``integrations.services``: one lookup each, through ``integrations.runtime.call``), checks the answer against
its spec model (``integrations.bodies.answers``) and answers the app. Every failure is a JSON error: no integration of
the kind is a 404 (``not_configured``), an integrator that is down or answers something else than JSON is a 502
(``integration_failed``), a slow one a 504 (``integration_timeout``), a JSON answer of the wrong shape a 502
(``bad_answer``) naming the field. The views read the query parameters, call one lookup and shape the answer;
their OpenAPI descriptions are ``integrations.docs``.
"""

from __future__ import annotations

from rest_framework.request import Request
from rest_framework.response import Response

from accounts.models import Account
from accounts.scoping import PosView
from core.api import optional_slash_paths
from core.errors import ServiceError
from integrations import docs, services
from integrations.bodies.pos import ShippingOptionsRequest
from ledger.serializers.catalog import ProductOutputSerializer

MAX_TERM = 255
DEFAULT_SEARCH_LIMIT = 50
MAX_SEARCH_LIMIT = 200


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


def place_params(request: Request, account: Account, *, market_required: bool = False) -> services.Place:
    return services.resolve_place(
        account=account,
        market=text_param(request, "market", max_length=32),
        shop_id=text_param(request, "shop_id", max_length=64),
        market_required=market_required,
    )


# --- Views ------------------------------------------------------------------------------------------------


class ProductSearchView(PosView):
    @docs.PRODUCT_SEARCH
    def get(self, request: Request) -> Response:
        """Asks the `product_search` integration; answers its E-commerce products, each checked (`retail_price`
        required, L10nString names), at most `limit`."""
        term = text_param(request, "q", required=True)
        limit = limit_param(request)  # before the place: the order the errors are reported in
        place = place_params(request, self.account)
        return Response(
            {"results": services.search_products(account=self.account, term=term, place=place, limit=limit)}
        )


class ProductLookupView(PosView):
    @docs.PRODUCT_LOOKUP
    def get(self, request: Request) -> Response:
        """Asks the `product_lookup` integration for the scanned code; the Product it answers is imported into the
        account (created or replaced by id, emitting a product edit event) and returned with `outcome` (`created`,
        `updated`, `unchanged`). An integrator's 404 is a 404 here."""
        barcode = text_param(request, "barcode", required=True)
        place = place_params(request, self.account)
        imported = services.lookup_product(account=self.account, barcode=barcode, place=place)
        return Response({"outcome": imported.outcome, "product": ProductOutputSerializer(imported.product).data})


class CustomerLookupView(PosView):
    @docs.CUSTOMER_LOOKUP
    def get(self, request: Request) -> Response:
        """Asks the `customer_lookup` integration; answers its customers, each checked, the deprecated balance object
        flattened, with the spec's rules as facts: `block_sales`, `credit` (`{balance, credit_limit, available}` or
        null: invoice and customer-account payments above `available` are refused), `deposit_prompt` (the overdue amount
        to ask for as a deposit, or null) and `b2b` (only a B2B customer's name and address are kept on a sale)."""
        term = text_param(request, "q", required=True)
        place = place_params(request, self.account)
        return Response({"results": services.lookup_customers(account=self.account, term=term, place=place)})


class CustomerDiscountsView(PosView):
    @docs.CUSTOMER_DISCOUNTS
    def get(self, request: Request, customer_id: str) -> Response:
        """Asks the `customer_discounts` integration (customer id, market, the market's currency); answers the
        discounts, each checked like an imported campaign of its type, prices plain numbers. Basket pricing fetches them
        itself when the basket has a `customer`."""
        if len(customer_id) > MAX_TERM or not customer_id.strip():
            raise ServiceError(f"must be 1 to {MAX_TERM} characters", field="customer_id", code="invalid")
        place = place_params(request, self.account, market_required=True)
        assert place.market is not None  # market_required
        found = services.customer_discounts(account=self.account, customer_id=customer_id, market=place.market)
        return Response({"results": found})


class ShippingOptionsView(PosView):
    @docs.SHIPPING_OPTIONS
    def post(self, request: Request) -> Response:
        """Asks the `shipping_options` integration with the customer's address, the shop and its market's currency;
        answers the options `{id, price, title, subtitle}`. Put the chosen one on the sale's shipping line as
        `behavior.shipping.method_id` (its `title` as `method_title`)."""
        cleaned = ShippingOptionsRequest.validated(self.body())
        found = services.shipping_options(
            account=self.account, address=cleaned["address"], stock_location=cleaned["stock_location"]
        )
        return Response({"results": found})


# Fixed paths, with and without the trailing slash.
pos_urls = optional_slash_paths(
    ("pos/products/search", ProductSearchView, "pos-products-search"),
    ("pos/products/lookup", ProductLookupView, "pos-products-lookup"),
    ("pos/customers", CustomerLookupView, "pos-customers"),
    (r"pos/customers/(?P<customer_id>[^/]+)/discounts", CustomerDiscountsView, "pos-customer-discounts"),
    ("pos/shipping-options", ShippingOptionsView, "pos-shipping-options"),
)
