"""The runtime integrations published as OpenAPI callbacks (spec: Endpoints B, Runtime integrations): for each kind,
what the service sends the integrator, what it must answer, the time it has and what each wrong answer becomes.

``publish`` is a drf-spectacular postprocessing hook (``SPECTACULAR_SETTINGS``): it adds one callback per kind to
the operation that registers an integrator's endpoint, ``POST /api/v1/runtime-integrations/``, whose body's
``url`` is where the calls go (the callback's key is the runtime expression ``{$request.body#/url}``). The answer
of each kind is ``integrations.bodies.answers.answer_schema(kind)``: the declaration the service validates answers with
(``answers.validate``, used by the POS lookups, gift cards, customer accounts and "Test this integration"), never
a copy. ``integrator_document`` turns the callbacks into a document of their own, one path per kind, from which
an integrator generates a server stub.

What a call looks like is the integration's configuration (method, URL, query, headers and body are templates of
the kind's placeholders, ``integrations.kinds``), so the callbacks describe the two plain configurations: ``get``
with each placeholder as a query parameter of its own name (``"query": {"barcode": "{barcode}", ...}``), ``post``
with each as a key of a JSON body (``"body": {"barcode": "{barcode}", ...}``; a body string that is exactly one
placeholder keeps the value's JSON type). Any other configuration changes the request only, never the answer.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from drf_spectacular.views import SpectacularAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from core.nodes import Components, Schema
from integrations.bodies import answers
from integrations.kinds import KINDS
from integrations.models import DEFAULT_TIMEOUT, MAX_TIMEOUT, MIN_TIMEOUT

# The operation the callbacks hang on: registering the integrator's endpoint (its body's ``url``).
OPERATION = ("/api/v1/runtime-integrations/", "post")
EXPRESSION = "{$request.body#/url}"

_TEXT: Schema = {"type": "string"}
_NUMBER: Schema = {"type": "number"}

# Each placeholder a kind may use: its JSON type in a body (a query value is its text) and what it holds.
PLACEHOLDERS: dict[str, tuple[Schema, str]] = {
    "search_term": (_TEXT, "What the cashier typed."),
    "barcode": (_TEXT, "The scanned code (EAN, SKU, ISBN...)."),
    "market": (_TEXT, "The market identifier of the till's shop (`dk`)."),
    "currency_code": (_TEXT, "ISO 4217: the base currency of the market or shop, or of the card."),
    "shop_id": (_TEXT, "The stock location identifier of the till's shop (empty when the POS gave none)."),
    "limit": ({"type": "integer"}, "How many results the POS shows at most (default 50)."),
    "customer_id": (_TEXT, "The customer's identifier, as the customer lookup answered it."),
    "name": (_TEXT, "The customer's name (shipping address; may be empty)."),
    "street": (_TEXT, "Shipping address: street (may be empty)."),
    "city": (_TEXT, "Shipping address: city (may be empty)."),
    "postal_code": (_TEXT, "Shipping address: postal code (may be empty)."),
    "country": (_TEXT, "Shipping address: country's name (may be empty)."),
    "country_code": (_TEXT, "Shipping address: ISO 3166-1 alpha-2 (may be empty)."),
    "email": (_TEXT, "The customer's e-mail address (may be empty)."),
    "phone": (_TEXT, "The customer's phone number (may be empty)."),
    "amount": (_NUMBER, "The amount, in the currency's major unit: the card's value (create, activate) or to pay."),
    "code": (_TEXT, "The gift card's code, as the create answered it."),
    "id": (_TEXT, "The gift card's id, as the create answered it."),
    "sale_id": (_TEXT, "The sale that sells the card (activate) or pays with it (pay)."),
    "purchase_amount": (_NUMBER, "The whole purchase the payment is part of, in the currency's major unit."),
    "payment_type": (_TEXT, "The payment type (`customer_account`, `invoice`)."),
    "create_date": (_NUMBER, "The inactive card's creation date, Unix seconds, as the create answered it."),
    "expiry_date": (_NUMBER, "The inactive card's expiry date, Unix seconds, as the create answered it."),
    "status": ({"type": "integer"}, "The card's status before this call: 1 (created, not yet active)."),
    "external_giftcard": (
        {"type": ["object", "null"]},
        "The integrator's private data of the card, as the create answered it (null: none); as compact JSON text in "
        "a query value.",
    ),
}

# What the POS sees for the failures every kind shares; a kind's own come first (``Callback.failures``).
TIMEOUT = (
    "No whole answer within the timeout (or what is left of the POS request's `POS_INTEGRATION_BUDGET_SECONDS`)",
    "504 `integration_timeout`",
)
NOT_2XX = ("Any status but 2xx, a redirect, HTML, not JSON, more than 2 MB", "502 `integration_failed`")
INVALID = ("2xx JSON that does not match the answer's schema", "502 `bad_answer` naming the first bad field")
NOT_CALLED = (
    "Not called: the budget is spent, or the circuit breaker is open after `BREAKER_FAILURE_THRESHOLD` failures",
    "504 `integration_not_called`",
)
SHARED = (TIMEOUT, NOT_2XX, INVALID, NOT_CALLED)


@dataclass(frozen=True)
class Callback:
    """One kind as an integrator reads it: when it is called, by which POS endpoint, its own failures."""

    summary: str
    called: str
    pos: str
    failures: tuple[tuple[str, str], ...] = ()
    shared: tuple[tuple[str, str], ...] = SHARED


_PAY_UNKNOWN = (
    "A timeout, or a 2xx answer that is not a card",
    "504 or 502; the payment is kept pending (`outcome unknown`): a retry with the same `identifier` is 409 "
    "`payment_pending` until it is reconciled",
)
_ACCOUNT_NOT_200 = (
    "Any status but 200 (201 included)",
    "502 `integration_failed`: the payment failed (spec: Errors 3), certainly not paid",
)

CALLBACKS: dict[str, Callback] = {
    "product_search": Callback(
        "E-commerce product search",
        "The cashier searches the web shop's products.",
        "GET /api/v1/pos/products/search",
    ),
    "product_lookup": Callback(
        "External product lookup",
        "The stock app scans a code it does not know while registering received goods; the product is imported.",
        "GET /api/v1/pos/products/lookup",
        failures=(
            ("404, or `null`, `{}` or `[]` with 2xx", "404 `unknown`: no such product"),
            ("A price for a market the account does not have", "502 `bad_answer`"),
        ),
    ),
    "customer_lookup": Callback(
        "Customer lookup",
        "The cashier searches customers; also asked for the credit limit before an `invoice` or customer account "
        "payment.",
        "GET /api/v1/pos/customers",
    ),
    "customer_discounts": Callback(
        "Customer-specific discounts",
        "A basket with a customer is priced (answer kept `POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`), or the POS asks.",
        "GET /api/v1/pos/customers/{customer_id}/discounts",
        failures=(
            (
                "Any failure while a basket is priced",
                "The basket is priced without the customer's discounts, with a warning "
                "`customer_discounts_unavailable`; invalid elements are left out (`invalid_customer_discount`)",
            ),
        ),
    ),
    "shipping_options": Callback(
        "Shipping options",
        "The cashier ships a sale: the options for the customer's address.",
        "POST /api/v1/pos/shipping-options",
    ),
    "giftcard_create": Callback(
        "Gift card create",
        "A gift card is added to the basket: the answer must be status 1 in the asked currency.",
        "POST /api/v1/pos/giftcards",
        failures=(("Status other than 1, or another currency", "502 `bad_answer`"),),
    ),
    "giftcard_activate": Callback(
        "Gift card activate",
        "The sale selling the card is paid: the answer must be the card, active (status 2).",
        "POST /api/v1/pos/giftcards/{code}/activate",
        failures=(("Status 1, or another card's `code`", "502 `bad_answer`"),),
    ),
    "giftcard_read": Callback(
        "Gift card read",
        "The cashier shows a card's balance.",
        "GET /api/v1/pos/giftcards/{code}",
        failures=(("Another card's `code`", "502 `bad_answer`"),),
    ),
    "giftcard_pay": Callback(
        "Gift card pay",
        "The card pays (part of) a sale: the answer is the card after the payment.",
        "POST /api/v1/pos/giftcards/{code}/pay",
        failures=(_PAY_UNKNOWN,),
    ),
    "customer_account_read": Callback(
        "Customer account read",
        "The cashier shows a customer's balance.",
        "GET /api/v1/pos/customer-accounts/{customer_id}",
        failures=(("Any status but 200 (201 included)", "502 `integration_failed`"),),
    ),
    "customer_account_pay": Callback(
        "Customer account pay",
        "A sale is paid from the customer's account, after the credit rule. The answer is the amount actually "
        "used; failing is preferred to answering less (spec: Errors 3).",
        "POST /api/v1/pos/customer-accounts/{customer_id}/pay",
        failures=(
            _ACCOUNT_NOT_200,
            ("`amount` 0", "502 `integration_failed`: the payment failed"),
            (
                "A timeout, or a 200 answer that is not `{amount}` or has a negative amount",
                "504 or 502; the payment is kept pending (`outcome unknown`): a retry with the same `identifier` is "
                "409 `payment_pending` until it is reconciled",
            ),
        ),
    ),
}


def placeholders_schema(kind: str) -> Schema:
    """The placeholders of ``kind`` as a JSON object: the body of the ``post`` convention."""
    return {
        "type": "object",
        "properties": {name: {**PLACEHOLDERS[name][0], "description": PLACEHOLDERS[name][1]} for name in KINDS[kind]},
    }


TIME = (
    f"The integration's `timeout` (default {DEFAULT_TIMEOUT:g} s, {MIN_TIMEOUT:g} to {MAX_TIMEOUT:g}) bounds the "
    "whole call, connecting to the last byte of the answer; while a POS request is served, at most what is left of "
    "`POS_INTEGRATION_BUDGET_SECONDS` (default 2) for all its calls."
)


def _description(kind: str) -> str:
    callback = CALLBACKS[kind]
    rows = "\n".join(f"| {answer} | {seen} |" for answer, seen in (*callback.failures, *callback.shared))
    return (
        f"{callback.called} Called by `{callback.pos}`.\n\n"
        "Sent: the configured method, URL, query, headers (`Accept: application/json`; `Content-Type: "
        "application/json` with a body) and body, placeholders filled in. No redirect is followed.\n\n"
        f"Time: {TIME}\n\n"
        "| The integrator answers | The POS sees |\n|---|---|\n" + rows + "\n"
    )


def _extensions(kind: str) -> dict[str, Any]:
    callback = CALLBACKS[kind]
    return {
        "x-kind": kind,
        "x-timeout": {
            "setting": "timeout",
            "default": float(DEFAULT_TIMEOUT),
            "minimum": float(MIN_TIMEOUT),
            "maximum": float(MAX_TIMEOUT),
            "budget_setting": "POS_INTEGRATION_BUDGET_SECONDS",
        },
        "x-failures": [{"answer": answer, "pos": seen} for answer, seen in (*callback.failures, *callback.shared)],
    }


def _responses(kind: str, answer: Schema) -> dict[str, Any]:
    exactly = " (customer accounts: exactly 200)" if kind.startswith("customer_account") else ""
    return {
        "200": {
            "description": f"The answer: any 2xx{exactly} with this JSON body. Unknown fields are ignored.",
            "content": {"application/json": {"schema": copy.deepcopy(answer)}},
        },
        "default": {"description": "Anything else is a failure: see the table in the description."},
    }


def path_item(kind: str, components: Components) -> dict[str, Any]:
    """The two conventions of ``kind`` (``get``: the placeholders as query parameters; ``post``: as a JSON body),
    the answer's components added to ``components``."""
    answer = answers.answer_schema(kind, components)
    common = {"summary": CALLBACKS[kind].summary, "description": _description(kind), **_extensions(kind)}
    parameters = [
        {
            "name": name,
            "in": "query",
            "required": False,
            "description": PLACEHOLDERS[name][1],
            "schema": {"type": "string"},
        }
        for name in KINDS[kind]
    ]
    return {
        "get": {
            **common,
            "operationId": f"{kind}_get",
            "parameters": parameters,
            "responses": _responses(kind, answer),
        },
        "post": {
            **common,
            "operationId": f"{kind}_post",
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": placeholders_schema(kind)}},
            },
            "responses": _responses(kind, answer),
        },
    }


def callbacks(components: Components) -> dict[str, Any]:
    """The OpenAPI callbacks object: one callback per kind, named by the kind."""
    return {kind: {EXPRESSION: path_item(kind, components)} for kind in KINDS}


def publish(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the callbacks on ``OPERATION`` and the answers' components, which the
    POS answers that are an answer's model refer to as well (``answers.published``). A component of the same name
    already published (``CurrencyCode``) must be the same schema."""
    path, method = OPERATION
    operation = result.get("paths", {}).get(path, {}).get(method)
    components = Components()
    found = callbacks(components)
    if operation is not None:
        operation["callbacks"] = found
        names = set(components.schemas)
    else:  # a schema of part of the API (drf-spectacular's ``urlconf``): the components its operations refer to
        names = closure(references(result.get("paths", {})) & set(components.schemas), components.schemas)
        if not names:
            return result
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name, schema in components.schemas.items():
        if name not in names:
            continue
        if name in schemas and schemas[name] != schema:
            raise ValueError(f"the callbacks' component {name!r} differs from the one published")
        schemas.setdefault(name, schema)
    return result


def integrator_document(document: dict[str, Any]) -> dict[str, Any]:
    """An OpenAPI document of the integrator's side alone, from the service's ``document``: one path per kind
    (``/<kind>``, with its ``get`` and ``post``) and the components they refer to. A server stub generated from it
    implements the callbacks; the real URL of each kind is the one configured in the integration."""
    path, method = OPERATION
    found = document["paths"][path][method]["callbacks"]
    paths = {f"/{kind}": copy.deepcopy(items[EXPRESSION]) for kind, items in found.items()}
    every = document["components"]["schemas"]
    needed = {name: copy.deepcopy(every[name]) for name in closure(references(paths), every)}
    return {
        "openapi": document["openapi"],
        "info": {
            "title": f"{document['info']['title']}: the integrator's endpoints (runtime integrations)",
            "version": document["info"]["version"],
            "description": "What the service calls on the integrator's server. " + TIME,
        },
        "paths": paths,
        "components": {"schemas": dict(sorted(needed.items()))},
    }


_PREFIX = "#/components/schemas/"


def references(node: Any) -> set[str]:
    """The names of the components ``node`` refers to (``$ref``), at any depth."""
    if isinstance(node, dict):
        ref = node.get("$ref")
        own = {ref.removeprefix(_PREFIX)} if isinstance(ref, str) and ref.startswith(_PREFIX) else set()
        return own.union(*(references(value) for value in node.values()))
    if isinstance(node, list):
        return set().union(*(references(value) for value in node))
    return set()


def closure(names: set[str], components: dict[str, Any]) -> set[str]:
    """``names`` and every component they refer to, at any depth."""
    found: set[str] = set()
    waiting = set(names)
    while waiting:
        name = waiting.pop()
        if name not in found:
            found.add(name)
            waiting |= references(components[name])
    return found


class IntegratorSchemaView(SpectacularAPIView):
    """``GET /api/schema/integrator/``: ``integrator_document`` of the service's document (YAML, or JSON with
    ``?format=json``), for generating the integrator's server stub."""

    def _get_schema_response(self, request: Request) -> Response:
        response: Response = super()._get_schema_response(request)
        response.data = integrator_document(response.data)
        response["Content-Disposition"] = 'inline; filename="integrator.yaml"'
        return response
