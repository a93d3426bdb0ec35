"""Every error example the OpenAPI document declares is what its endpoint answers. For each (path, method, example
name) a producer makes the request that yields it, and the answer is compared with the example in status and shape
(the keys, `status`, the message, and each error's field and code). An example without a producer fails the test,
and so does a producer whose example is gone: a new example cannot drift from the endpoint.

A producer is a function of a :class:`Call` (the operation, the client and the tenant). The examples every endpoint
shares (bad credentials, a key without the scope, an unknown id, an invalid page, too many try-outs) have one
producer each, by name; every other example has its own, by path, method and name."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import transaction
from rest_framework.test import APIClient

from config.celery import app
from core import breaker
from exports import services
from exports.api import QUEUE_REQUEST_EXAMPLE
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from imports import docs
from integrations import runtime
from ledger.api.catalog import EXPENSE_REQUEST_EXAMPLE, PRODUCT_REQUEST_EXAMPLE
from ledger.api.checkouts import CHECKOUT_REQUEST_EXAMPLE
from ledger.api.stock import MAX_EVENTS_PER_REQUEST, POS_REQUEST_EXAMPLE
from tests.factories import (
    CashierFactory,
    IncomingOrderFactory,
    OutgoingOrderFactory,
    RegisterFactory,
    StockLocationFactory,
)
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

Key = tuple[str, str, str]  # path, method, example name
METHODS = ("get", "post", "put", "patch", "delete")
UNKNOWN = "999999999"  # no object of the tenant has this id or identifier


def declared_errors(document: dict) -> dict[Key, tuple[int, dict]]:
    """Every example of an answer refusing all or part of a request (a status other than 200, 201 and 204: an
    import's 207 refuses some items) in the document: (status, body) by key."""
    found = {}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            for code, response in operation["responses"].items():
                if int(code) in (200, 201, 204):
                    continue
                examples = response.get("content", {}).get("application/json", {}).get("examples", {})
                for name, example in examples.items():
                    found[(path, method, example.get("summary", name))] = (int(code), example["value"])
    return found


def shape(body: dict) -> dict:
    """What an example must share with the answer: all of it, but the messages of a JSON parser's error (they
    carry the place of the fault in the body)."""
    unreadable = any(e.get("code") == "invalid_json" for e in body.get("errors", []))
    errors = [(e["field"], e.get("code"), None if unreadable else e["message"]) for e in body.get("errors", [])]
    failed = [(f["index"], f["id"], f["errors"]) for f in body.get("failed", [])]
    message = None if unreadable else body.get("message")
    return {"keys": sorted(body), "status": body.get("status"), "message": message, "errors": errors, "failed": failed}


@dataclass
class Call:
    """One operation of the document, called as the tenant: ``path`` the document's (with ``{placeholders}``)."""

    client: APIClient
    tenant: Tenant
    settings: Any
    path: str
    method: str
    request_example: Any = None
    values: dict[str, str] = field(default_factory=dict)
    fixtures: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """A key with the scope the operation requires."""
        if self.path.startswith("/imports/"):
            return self.tenant.imports_key
        return self.tenant.pos_key if self.path.startswith("/api/v1/pos/") else self.tenant.admin_key

    def unscoped_key(self) -> str:
        """A key without it (and, on the catalog, without either scope its reads take)."""
        return self.tenant.pos_key if self.path.startswith("/imports/") else self.tenant.imports_key

    def url(self, **values: str) -> str:
        given = {**self.values, **values}
        return re.sub(r"\{(\w+)\}", lambda m: given.get(m.group(1), UNKNOWN), self.path)

    def send(
        self,
        body: Any = None,
        *,
        key: str | None = None,
        path: str | None = None,
        method: str | None = None,
        content_type: str = "application/json",
        **params: str,
    ) -> Any:
        """The request: to ``path`` (the operation's, its placeholders ``UNKNOWN``), with ``body`` (JSON unless a
        string), ``params`` in the query beside the credentials."""
        url = f"{path or self.url()}?{self.tenant.query(key or self.key(), **params)}"
        data = body if isinstance(body, str) else json.dumps(body, default=str)
        verb = (method or self.method).upper()
        if body is None and verb in ("GET", "DELETE"):
            return self.client.generic(verb, url)
        return self.client.generic(verb, url, data, content_type=content_type)


Producer = Callable[[Call], Any]


def too_many(call: Call) -> Any:
    """A try-out over the key's limit: the second of two with a limit of one."""
    previous = call.settings.PREVIEW_RATE_LIMIT_PER_KEY
    call.settings.PREVIEW_RATE_LIMIT_PER_KEY = 1
    try:
        call.send({})
        return call.send({})
    finally:
        call.settings.PREVIEW_RATE_LIMIT_PER_KEY = previous


def locked_out(call: Call) -> Any:
    """A failed authentication after as many as the limit allows from this address."""
    previous = call.settings.AUTH_FAILURE_LIMIT
    call.settings.AUTH_FAILURE_LIMIT = 1
    try:
        call.send({}, key="wrong")
        return call.send({}, key="wrong")
    finally:
        call.settings.AUTH_FAILURE_LIMIT = previous


# --- The POS checkout -----------------------------------------------------------------------------------------

CHECKOUTS = "/api/v1/pos/checkouts/"


def used_identifier(call: Call) -> Any:
    assert call.send(CHECKOUT_REQUEST_EXAMPLE).status_code == 201
    return call.send({**CHECKOUT_REQUEST_EXAMPLE, "timing": {"timestamp": 1736931960, "timezone": "Europe/Copenhagen"}})


POS: dict[Key, Producer] = {
    (CHECKOUTS, "post", "Invalid input"): lambda call: call.send(
        {**CHECKOUT_REQUEST_EXAMPLE, "base_currency_code": "XYZ"}
    ),
    (CHECKOUTS, "post", "Identifier used by another checkout"): used_identifier,
}


# --- The import endpoints --------------------------------------------------------------------------------------

IMPORT_ROUTES = {
    "INCOMING_ORDERS": "/imports/incoming_orders",
    "EXTERNAL_ORDERS": "/imports/external_orders",
    "STATE_CHANGES": "/imports/outgoing_order_state_changes",
    "CAMPAIGNS_POST": "/imports/discount_campaigns",
    "RULES_POST": "/imports/product_rules",
    "STOCK_EVENTS": "/imports/stock_events",
}


def import_producers(name: str, route: str) -> dict[Key, Producer]:
    """A request producing each example of an import endpoint (``imports.docs``), by its name."""
    operation = getattr(docs, name)
    request = next(e.value for e in operation["examples"] if e.request_only)
    items = request if isinstance(request, list) else next(iter(request.values()))

    def wrap(xs: list[Any]) -> Any:
        return xs if isinstance(request, list) else {next(iter(request)): xs}

    params = {"stock_location": "shop-1"} if "orders" in route and "state" not in route else {}
    requests = docs.REFUSALS[route].requests(items)
    producers: dict[str, Producer] = {
        docs.PARTIAL: lambda call: call.send(wrap(requests[docs.PARTIAL]), **params),
        docs.REFUSED: lambda call: call.send(wrap(requests[docs.REFUSED]), **params),
        "Unreadable request": lambda call: call.send('{"a": 1 "b": 2}', **params),
        "Not JSON": lambda call: call.send("a=1", content_type="application/x-www-form-urlencoded", **params),
        "Bad credentials": lambda call: call.send(wrap(items), key="wrong", **params),
        "Missing scope": lambda call: call.send(wrap(items), key=call.tenant.pos_key, **params),
    }
    if route == IMPORT_ROUTES["STATE_CHANGES"]:
        producers = {example: with_outgoing_order(producer) for example, producer in producers.items()}
    return {(route, "post", example): producer for example, producer in producers.items()}


def with_outgoing_order(producer: Producer) -> Producer:
    """``producer`` once the shop has the outgoing order the state changes' examples name."""

    def produce(call: Call) -> Any:
        tenant = call.tenant
        OutgoingOrderFactory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="out-2291")
        return producer(call)

    return produce


IMPORTS: dict[Key, Producer] = {
    key: producer for name, route in IMPORT_ROUTES.items() for key, producer in import_producers(name, route).items()
}


# --- The configuration and the catalog: a body every write refuses, an object still in use -------------------

# A change every write of the collection refuses, and the name of its example.
REFUSED_CHANGES: dict[str, tuple[str, dict[str, Any]]] = {
    "/api/v1/markets/": ("Invalid currency", {"currency": "XYZ"}),
    "/api/v1/stock-locations/": ("Invalid country code", {"country_code": "D1"}),
    "/api/v1/registers/": ("Unknown stock location", {"stock_location": "nowhere"}),
    "/api/v1/cashiers/": ("Not an https image", {"image_url": "http://images.example.com/anne-berg.png"}),
    "/api/v1/integrations/": ("Invalid identifier", {"identifier": "web shop"}),
    "/api/v1/products/": ("Negative cost price", {"cost_price": -1}),
    "/api/v1/expenses/": ("Tax rate above 1", {"taxes": {"dk": [{"name": "VAT", "rate": 2, "type": "vat"}]}}),
}

# The objects of the tenant the operations with an id in the path address, by the path's collection.
EXISTING: dict[str, dict[str, str]] = {
    "/api/v1/markets/": {"identifier": "dk"},
    "/api/v1/stock-locations/": {"identifier": "shop-1"},
    "/api/v1/registers/": {"identifier": "reg-1"},
    "/api/v1/cashiers/": {"identifier": "cashier-7"},
    "/api/v1/integrations/": {"identifier": "webshop"},
    "/api/v1/products/": {"id": PRODUCT_REQUEST_EXAMPLE["id"]},
    "/api/v1/expenses/": {"id": EXPENSE_REQUEST_EXAMPLE["id"]},
}


def detail(collection: str) -> str:
    return collection + "".join(f"{{{name}}}/" for name in EXISTING[collection])


def refused_change(change: dict[str, Any]) -> Producer:
    return lambda call: call.send({**call.request_example, **change})


CONFIGURATION: dict[Key, Producer] = {
    **{
        (path, method, name): refused_change(change)
        for collection, (name, change) in REFUSED_CHANGES.items()
        for path, method in ((collection, "post"), (detail(collection), "put"), (detail(collection), "patch"))
    },
    (detail("/api/v1/markets/"), "delete", "Still in use"): lambda call: call.send(),
    (detail("/api/v1/stock-locations/"), "delete", "Still in use"): lambda call: call.send(),
    (detail("/api/v1/integrations/"), "delete", "The caller's own integration"): lambda call: call.send(),
}


# --- Register periods, stock events, orders ---------------------------------------------------------------------

OPEN = "/api/v1/pos/registers/{register_id}/open"
CLOSE = "/api/v1/pos/registers/{register_id}/close"


def open_twice(call: Call) -> Any:
    call.send({}, path=call.url(register_id="reg-1"))
    return call.send({}, path=call.url(register_id="reg-1"))


def too_many_events(call: Call) -> Any:
    return call.send([POS_REQUEST_EXAMPLE[0]] * (MAX_EVENTS_PER_REQUEST + 1))


STATE = "/api/v1/pos/incoming-orders/{stock_location}/{order_identifier}/state/"
OUTGOING = "/api/v1/pos/outgoing-orders/"


def incoming_order(call: Call, **fields: Any) -> str:
    """The state path of a new incoming order of shop ``shop-1``."""
    tenant = call.tenant
    IncomingOrderFactory(
        account=tenant.account, stock_location=tenant.stock_location, order_identifier="web-7", **fields
    )
    return call.url(stock_location="shop-1", order_identifier="web-7")


def placed_twice(call: Call) -> Any:
    StockLocationFactory(account=call.tenant.account, market=call.tenant.market, identifier="shop-2")
    call.send(call.request_example)
    return call.send(call.request_example)


def same_shop(call: Call) -> Any:
    return call.send({**call.request_example, "destination": call.request_example["stock_location"]})


ORDERS: dict[Key, Producer] = {
    (OPEN, "post", "Already open"): open_twice,
    (OPEN, "post", "Unknown register"): lambda call: call.send({}, path=call.url(register_id="reg-9")),
    (CLOSE, "post", "Unknown register"): lambda call: call.send(
        call.request_example, path=call.url(register_id="reg-9")
    ),
    (CLOSE, "post", "Not open"): lambda call: call.send(call.request_example, path=call.url(register_id="reg-1")),
    ("/api/v1/pos/stock-events/", "post", "Too many events"): too_many_events,
    (STATE, "post", "Unknown cashier"): lambda call: call.send(
        {"state": "processing", "cashier": "cashier-99"}, path=incoming_order(call)
    ),
    (STATE, "post", "Unknown order"): lambda call: call.send(
        {"state": "processing"}, path=call.url(stock_location="shop-1", order_identifier="WEB-1")
    ),
    (STATE, "post", "Refused move"): lambda call: call.send(
        {"state": "processing"}, path=incoming_order(call, state="completed")
    ),
    (OUTGOING, "post", "Same shop"): same_shop,
    (OUTGOING, "post", "Duplicate"): placed_twice,
}


# --- Export queues and the export log -----------------------------------------------------------------------------

QUEUES = "/api/v1/export-queues/"


def new_queue(call: Call) -> int:
    response = call.send(QUEUE_REQUEST_EXAMPLE, path=QUEUES, method="post")
    assert response.status_code == 201, response.json()
    return int(response.json()["id"])


def relative_url(call: Call) -> Any:
    bad = {
        **QUEUE_REQUEST_EXAMPLE,
        "delivery": {**QUEUE_REQUEST_EXAMPLE["delivery"], "url": "/hook"},
    }
    path = QUEUES if call.method == "post" else call.url(id=str(new_queue(call)))
    return call.send(bad, path=path)


def pending_item(call: Call) -> Any:
    queue = ExportQueue.objects.get(pk=new_queue(call))
    delivery = ExportDelivery.objects.create(
        account=queue.account,
        queue=queue,
        delivery_id=services.new_delivery_id(),
        status=ExportStatus.PENDING,
        next_attempt_at="2025-01-15T09:30:00Z",
    )
    item = ExportItem.objects.create(
        account=queue.account,
        queue=queue,
        entity_type=queue.entity_type,
        object_id=1,
        element_key="k-1",
        status=ExportStatus.PENDING,
        delivery=delivery,
    )
    return call.send(None, path=call.url(id=str(item.pk)))


def over_the_limit(call: Call) -> Any:
    """One queue more than the default limit allows (100)."""
    call.settings.EXPORT_QUEUES_PER_ACCOUNT = 100
    queue = ExportQueue.objects.get(pk=new_queue(call))
    copies = [ExportQueue(**{**model_fields(queue), "id": None, "name": f"queue {n}"}) for n in range(99)]
    ExportQueue.objects.bulk_create(copies)
    return call.send({**call.request_example, "name": "One more"})


def model_fields(row: Any) -> dict[str, Any]:
    return {f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields}


EXPORTS: dict[Key, Producer] = {
    (QUEUES, "post", "Invalid configuration"): relative_url,
    (QUEUES, "post", "Queue limit reached"): over_the_limit,
    (QUEUES + "{id}/", "put", "Invalid configuration"): relative_url,
    (QUEUES + "{id}/", "patch", "Invalid configuration"): relative_url,
    (QUEUES + "{id}/preview/", "post", "Nothing to preview"): lambda call: call.send(
        {}, path=call.url(id=str(new_queue(call)))
    ),
    ("/api/v1/export-logs/{id}/retry/", "post", "Still pending"): pending_item,
}


# --- The POS endpoints that ask the integrator --------------------------------------------------------------------

# The kind of runtime integration each asks, and the query it needs.
INTEGRATOR_CALLS: dict[str, tuple[str, dict[str, str]]] = {
    "/api/v1/pos/products/search/": ("product_search", {"q": "sweater"}),
    "/api/v1/pos/products/lookup/": ("product_lookup", {"barcode": "5701234567890"}),
    "/api/v1/pos/customers/": ("customer_lookup", {"q": "jane"}),
    "/api/v1/pos/customers/{customer_id}/discounts/": ("customer_discounts", {}),
    "/api/v1/pos/shipping-options/": ("shipping_options", {}),
    "/api/v1/pos/giftcards/": ("giftcard_create", {}),
    "/api/v1/pos/giftcards/{code}/": ("giftcard_read", {}),
    "/api/v1/pos/giftcards/{code}/activate/": ("giftcard_activate", {}),
    "/api/v1/pos/giftcards/{code}/pay/": ("giftcard_pay", {}),
    "/api/v1/pos/customer-accounts/{customer_id}/": ("customer_account_read", {"currency_code": "DKK"}),
    "/api/v1/pos/customer-accounts/{customer_id}/pay/": ("customer_account_pay", {}),
}


def ask(call: Call) -> Any:
    """The operation's request, as a till sends it."""
    _, query = INTEGRATOR_CALLS[call.path]
    body = call.request_example if call.method != "get" else None
    return call.send(body, path=call.url(code="GC000001", customer_id="c-1"), **query)


def integrator_failed(call: Call) -> Any:
    call.fixtures["configure"](INTEGRATOR_CALLS[call.path][0])
    call.fixtures["reference"].always["*"] = (503, "down")
    try:
        return ask(call)
    finally:
        del call.fixtures["reference"].always["*"]


def answered_without_a_price(call: Call) -> Any:
    call.fixtures["configure"]("product_search")
    call.fixtures["reference"].script["/products/search"] = [(200, [{"id": "a", "name": {"en": "No price"}}])]
    return ask(call)


def without(parameter: str) -> Producer:
    """The operation's request without the query ``parameter``."""

    def produce(call: Call) -> Any:
        query = {k: v for k, v in INTEGRATOR_CALLS[call.path][1].items() if k != parameter}
        return call.send(path=call.url(customer_id="c-1"), **query)

    return produce


INTEGRATORS: dict[Key, Producer] = {
    ("/api/v1/pos/products/search/", "get", "An answer of the wrong shape"): answered_without_a_price,
    ("/api/v1/pos/giftcards/{code}/activate/", "post", "Unknown gift card"): ask,
    ("/api/v1/pos/products/search/", "get", "Without q"): without("q"),
    ("/api/v1/pos/customers/", "get", "Without q"): without("q"),
    ("/api/v1/pos/products/lookup/", "get", "Without barcode"): without("barcode"),
    ("/api/v1/pos/customer-accounts/{customer_id}/", "get", "Without currency_code"): without("currency_code"),
    ("/api/v1/pos/giftcards/{code}/pay/", "post", "Unknown gift card"): ask,
}


# --- Every producer ----------------------------------------------------------------------------------------------

# The examples every endpoint of a kind shares (``core.api.error_responses``, ``integrations.docs``), by name.
SHARED: dict[str, Producer] = {
    "Invalid credentials": lambda call: call.send({}, key="wrong"),
    "Missing scope": lambda call: call.send({}, key=call.unscoped_key()),
    "Not found": lambda call: call.send(call.request_example if call.method != "get" else None),
    "Invalid page": lambda call: call.send(limit="0"),
    "Too many requests": too_many,
    "Too many failed authentications": locked_out,
    "Not configured": ask,
    "The integrator failed": integrator_failed,
}

# The examples of one operation, by path, method and name.
PRODUCERS: dict[Key, Producer] = {**POS, **IMPORTS, **CONFIGURATION, **ORDERS, **EXPORTS, **INTEGRATORS}


def request_example(operation: dict) -> Any:
    examples = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("examples", {})
    return next(iter(examples.values()))["value"] if examples else None


@pytest.fixture
def world(tenant: Tenant, client: APIClient) -> Iterator[None]:
    """What the producers address: register ``reg-1``, cashier ``cashier-7``, the catalog's example product and
    expense; the import endpoints' tasks run at once."""
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    CashierFactory(account=tenant.account, identifier="cashier-7")
    for collection, body in (("products", PRODUCT_REQUEST_EXAMPLE), ("expenses", EXPENSE_REQUEST_EXAMPLE)):
        url = f"/api/v1/{collection}/?{tenant.query(tenant.admin_key)}"
        assert client.post(url, json.dumps(body), content_type="application/json").status_code == 201
    previous = app.conf.task_always_eager
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = previous


def producer_of(key: Key) -> Producer | None:
    return PRODUCERS.get(key) or SHARED.get(key[2])


def test_every_error_example_has_a_producer(openapi_document: dict) -> None:
    declared = set(declared_errors(openapi_document))
    assert sorted(k for k in declared if producer_of(k) is None) == [], "an example without a request producing it"
    assert sorted(set(PRODUCERS) - declared) == [], "a producer of an example the document no longer has"


def test_every_error_example_is_the_answer_of_its_endpoint(
    openapi_document: dict,
    client: APIClient,
    tenant: Tenant,
    settings: Any,
    world: None,
    request: pytest.FixtureRequest,
) -> None:
    declared = declared_errors(openapi_document)
    integrator = {name: request.getfixturevalue(name) for name in ("configure", "reference")}
    wrong = []
    for (path, method, name), (status_code, example) in declared.items():
        producer = producer_of((path, method, name))
        if producer is None:
            continue  # the test above names it
        operation = openapi_document["paths"][path][method]
        collection = next((c for c in EXISTING if path.startswith(c) and path != c), None)
        existing = EXISTING[collection] if collection is not None and name != "Not found" else {}
        call = Call(client, tenant, settings, path, method, request_example(operation), existing, integrator)
        with transaction.atomic():  # each example from the same state: what a producer wrote is rolled back
            response = producer(call)
            transaction.set_rollback(True)
        # What this process remembers of the rows rolled back: an integration's configuration, a breaker.
        runtime.forget_configurations()
        breaker.clear_memo()
        body = response.json() if response["Content-Type"].startswith("application/json") else response.content
        answer = (response.status_code, shape(body) if isinstance(body, dict) else body)
        if answer != (status_code, shape(example)):
            wrong.append(
                f"{method.upper()} {path} {name!r}: declared {status_code} {example}, answered "
                f"{response.status_code} {body!r}"
            )
    assert declared
    assert wrong == [], "\n".join(wrong)
