"""A reference integrator server for the runtime-integration tests: real HTTP on 127.0.0.1, one per test.

It serves a valid spec answer for every kind (spec: Endpoints B) and can be scripted to be slow, fail or answer
garbage. Use it through the fixtures ``reference`` and ``configure`` (``tests/support/integrations.py``,
registered for every test)::

    def test_x(reference, configure):
        configure("giftcard_read")                        # default method/path/query/body for the kind
        reference.script["/giftcards/{code}"] = [(503, "down")]   # next request(s) on that route, in order
        ...
        assert reference.requests[-1].query["currency_code"] == "DKK"

Default routes (``DEFAULTS``: what ``configure(kind)`` stores; the URL is ``reference.url + path``):

=====================  ======  ================================  ===============================================
kind                   method  path                              query / body templates
=====================  ======  ================================  ===============================================
product_search         GET     /products/search                  q={search_term} market currency_code shop_id limit
product_lookup         GET     /products/lookup                  barcode={barcode} market currency_code shop_id
customer_lookup        GET     /customers                        q={search_term} market shop_id
customer_discounts     GET     /customers/{customer_id}/discounts  market currency_code
shipping_options       POST    /shipping-options                 body {shop_id, currency_code, market, address{..}}
giftcard_create        POST    /giftcards                        body {amount, currency_code, shop_id, market}
giftcard_activate      POST    /giftcards/{code}/activate        body {id, amount, currency_code, shop_id, sale_id}
giftcard_read          GET     /giftcards/{code}                 currency_code shop_id
giftcard_pay           POST    /giftcards/{code}/pay             body {id, amount, currency_code, shop_id, sale_id}
customer_account_read  GET     /customer-accounts/{customer_id}  currency_code shop_id
customer_account_pay   POST    /customer-accounts/{customer_id}/pay  body {amount, currency_code, purchase_amount,
                                                                  payment_type, shop_id}
=====================  ======  ================================  ===============================================

In JSON bodies ``"{amount}"`` alone keeps the value's type (a number stays a number).

Built-in answers (the server reads its inputs from the query and the JSON body alike):

* product search: ``PRODUCTS`` (two E-commerce products, whatever the term; ``q=nothing`` gives ``[]``).
* product lookup: a Product with the scanned barcode (id ``ext-<barcode>``, name, retail_price 149.95, taxes);
  barcode ``0000000000000`` answers 404.
* customers: ``CUSTOMERS``: ``c-1`` (B2B, balance 100, credit_limit 500), ``c-2`` (the deprecated balance object
  form ``{"identifier", "balance"}``, balance_overdue 250), ``c-3`` (block_sales true); ``q=nothing`` gives ``[]``.
* customer discounts: one ``new_price_discount-single_product`` for product ``p-1`` at plain number 79.
* shipping options: ``SHIPPING_OPTIONS`` (``gls`` 39, ``pickup`` 0).
* gift cards, backed by ``reference.cards`` (code -> card; ``reference.add_card(...)`` adds one): create -> status
  1 (code ``GC000001``, ...), activate -> status 2 (idempotent on an active card; the body's ``amount`` becomes
  the card's amount), read -> the card, pay -> the amount lowered, status 3 at 0. Unknown code 404; pay on an
  inactive or used card 409; another currency 400; more than the balance 402; an expired card 410.
* customer account: ``reference.balances`` (customer id -> Decimal; default 1000 for an unknown customer): read ->
  ``{"amount": balance}``; pay -> ``{"amount": requested}`` and the balance lowered; ``reference.pay_partial =
  Decimal("x")`` makes pay answer that smaller amount instead.

Scripting: ``reference.script[key] = [entry, ...]`` where ``key`` is the exact request path (``/giftcards/GC1``)
or the route pattern above (``/giftcards/{code}``) or ``"*"`` (any request); each request takes the first entry
of its list; when the list is empty the built-in answer is served. ``reference.always[key] = entry`` answers
every request (until removed). Entries:

* ``(status, payload)``: a dict/list is sent as JSON, a str as text/plain, bytes as is (``application/json``).
* ``("sleep", seconds)``: wait, then serve the built-in answer.  ``("sleep", seconds, entry)``: wait, then entry.
* ``("html", "<html>...")``: 200 text/html.  ``("garbage", b"...")``: 200 application/json with that body.
* ``("close", None)``: close the connection without an answer.
* ``("hang", None)``: keep the connection open and never answer (until the server stops).
* ``("trickle", seconds, entry)``: send the answer of ``entry`` (None: the built-in one), status line and headers
  included, one byte every ``seconds``: no single read ever waits long, the whole answer takes long.
  ``("trickle_body", seconds, entry)``: the same, the status line and headers sent at once.
* ``("redirect", url)``: 302 to ``url``.
* a callable ``(request: Received) -> entry``.

``reference.requests`` lists every ``Received`` (method, path, query (name -> last value), headers (lower-case
name -> value), body (parsed JSON with Decimals, or None), raw (bytes), client_port); ``reference.last(prefix)``
the last one.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

# kind -> (method, path, query templates, body template): what ``configure(kind)`` stores by default.
DEFAULTS: dict[str, tuple[str, str, dict[str, str], Any]] = {
    "product_search": (
        "GET",
        "/products/search",
        {
            "q": "{search_term}",
            "market": "{market}",
            "currency_code": "{currency_code}",
            "shop_id": "{shop_id}",
            "limit": "{limit}",
        },
        None,
    ),
    "product_lookup": (
        "GET",
        "/products/lookup",
        {"barcode": "{barcode}", "market": "{market}", "currency_code": "{currency_code}", "shop_id": "{shop_id}"},
        None,
    ),
    "customer_lookup": (
        "GET",
        "/customers",
        {"q": "{search_term}", "market": "{market}", "shop_id": "{shop_id}"},
        None,
    ),
    "customer_discounts": (
        "GET",
        "/customers/{customer_id}/discounts",
        {"market": "{market}", "currency_code": "{currency_code}"},
        None,
    ),
    "shipping_options": (
        "POST",
        "/shipping-options",
        {},
        {
            "shop_id": "{shop_id}",
            "currency_code": "{currency_code}",
            "market": "{market}",
            "address": {
                "name": "{name}",
                "street": "{street}",
                "city": "{city}",
                "postal_code": "{postal_code}",
                "country": "{country}",
                "country_code": "{country_code}",
                "email": "{email}",
                "phone": "{phone}",
            },
        },
    ),
    "giftcard_create": (
        "POST",
        "/giftcards",
        {},
        {"amount": "{amount}", "currency_code": "{currency_code}", "shop_id": "{shop_id}", "market": "{market}"},
    ),
    "giftcard_activate": (
        "POST",
        "/giftcards/{code}/activate",
        {},
        {
            "id": "{id}",
            "amount": "{amount}",
            "currency_code": "{currency_code}",
            "shop_id": "{shop_id}",
            "sale_id": "{sale_id}",
        },
    ),
    "giftcard_read": ("GET", "/giftcards/{code}", {"currency_code": "{currency_code}", "shop_id": "{shop_id}"}, None),
    "giftcard_pay": (
        "POST",
        "/giftcards/{code}/pay",
        {},
        {
            "id": "{id}",
            "amount": "{amount}",
            "currency_code": "{currency_code}",
            "shop_id": "{shop_id}",
            "sale_id": "{sale_id}",
        },
    ),
    "customer_account_read": (
        "GET",
        "/customer-accounts/{customer_id}",
        {"currency_code": "{currency_code}", "shop_id": "{shop_id}"},
        None,
    ),
    "customer_account_pay": (
        "POST",
        "/customer-accounts/{customer_id}/pay",
        {},
        {
            "amount": "{amount}",
            "currency_code": "{currency_code}",
            "purchase_amount": "{purchase_amount}",
            "payment_type": "{payment_type}",
            "shop_id": "{shop_id}",
        },
    ),
}

PRODUCTS: list[dict[str, Any]] = [
    {
        "id": "web-1",
        "variant_id": "web-1-blue-m",
        "name": {"da": "Trøje", "en": "Sweater"},
        "variant_name": "Blue / M",
        "description": "Wool",
        "barcode": "5701234567890",
        "image_url": "https://cdn.example.com/web-1.jpg",
        "product_group": "knitwear",
        "retail_price": Decimal("499.95"),
        "sale_price": Decimal("399.95"),
        "cost_price": Decimal("180"),
        "taxes": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}],
    },
    {"id": "web-2", "name": "Socks", "retail_price": Decimal("49")},
]

CUSTOMERS: list[dict[str, Any]] = [
    {
        "identifier": "c-1",
        "name": "Acme Wholesale ApS",
        "street": "Vestergade 1",
        "city": "København",
        "postal_code": "1456",
        "country": "Denmark",
        "country_code": "DK",
        "email": "buyer@acme.example",
        "organization_number": "DK12345678",
        "balance": Decimal("100"),
        "credit_limit": Decimal("500"),
    },
    {
        "identifier": "c-2",
        "name": "Jens Jensen",
        "phone": "+4512345678",
        "balance": {"identifier": "acct-c-2", "balance": Decimal("-250")},
        "balance_overdue": Decimal("250"),
    },
    {"identifier": "c-3", "name": "Blocked Person", "block_sales": True, "additional_info": "Ask for ID"},
]

SHIPPING_OPTIONS: list[dict[str, Any]] = [
    {"id": "gls", "price": Decimal("39"), "title": "GLS", "subtitle": "1-2 business days"},
    {"id": "pickup", "price": Decimal("0"), "title": "Pick up in shop", "subtitle": "Ready tomorrow"},
]

NO_RESULTS_TERM = "nothing"
UNKNOWN_BARCODE = "0000000000000"
DEFAULT_BALANCE = Decimal("1000")


@dataclass
class Received:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw: bytes
    client_port: int = 0  # the client's port: the same port on two requests means a kept-alive connection

    def value(self, name: str) -> Any:
        """A named input from the JSON body, else the query (the built-in answers accept both)."""
        if isinstance(self.body, dict) and name in self.body:
            return self.body[name]
        return self.query.get(name)


Entry = Any
_ROUTES: list[tuple[str, str]] = [  # (pattern key, regex) — the most specific first
    ("/products/search", r"/products/search"),
    ("/products/lookup", r"/products/lookup"),
    ("/customers/{customer_id}/discounts", r"/customers/(?P<customer_id>[^/]+)/discounts"),
    ("/customers", r"/customers"),
    ("/shipping-options", r"/shipping-options"),
    ("/giftcards/{code}/activate", r"/giftcards/(?P<code>[^/]+)/activate"),
    ("/giftcards/{code}/pay", r"/giftcards/(?P<code>[^/]+)/pay"),
    ("/giftcards/{code}", r"/giftcards/(?P<code>[^/]+)"),
    ("/giftcards", r"/giftcards"),
    ("/customer-accounts/{customer_id}/pay", r"/customer-accounts/(?P<customer_id>[^/]+)/pay"),
    ("/customer-accounts/{customer_id}", r"/customer-accounts/(?P<customer_id>[^/]+)"),
]


def customer_discount(customer_id: str) -> dict[str, Any]:
    """The one discount of each customer: a new price of 79 for product p-1."""
    return {
        "id": f"cd-{customer_id}",
        "type": "new_price_discount-single_product",
        "product_id": "p-1",
        "new_price_per_item": Decimal("79"),
        "name": "Customer price",
        "display_name": "Your price",
        "priority": 10,
    }


def _route(path: str) -> tuple[str | None, dict[str, str]]:
    for key, regex in _ROUTES:
        match = re.fullmatch(regex, path)
        if match:
            return key, {name: unquote(value) for name, value in match.groupdict().items()}
    return None, {}


def _number(value: Any) -> Decimal | None:
    if isinstance(value, bool) or value is None or value == "":
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _json_default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(type(value).__name__)


class ReferenceIntegrator:
    """The server's state: what it received, scripts, the gift card and customer account stores."""

    def __init__(self) -> None:
        self.url = ""
        self.requests: list[Received] = []
        self.script: dict[str, list[Entry]] = {}
        self.always: dict[str, Entry] = {}
        self.cards: dict[str, dict[str, Any]] = {}
        self.balances: dict[str, Decimal] = {}
        self.pay_partial: Decimal | None = None
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self._next_card = 0

    # --- helpers for tests -------------------------------------------------------------------------------
    def add_card(
        self,
        code: str = "GC-TEST",
        *,
        amount: Decimal | int | str = 100,
        status: int = 2,
        currency_code: str = "DKK",
        expiry_date: float | None = None,
        card_id: str | None = None,
    ) -> dict[str, Any]:
        card = {
            "amount": Decimal(str(amount)),
            "code": code,
            "create_date": time.time(),
            "currency_code": currency_code,
            "expiry_date": expiry_date if expiry_date is not None else time.time() + 365 * 86400,
            "id": card_id or f"id-{code}",
            "status": status,
            "external_giftcard": {"issuer": "reference"},
        }
        self.cards[code] = card
        return card

    def last(self, path_prefix: str = "") -> Received:
        """The last request whose path starts with ``path_prefix``."""
        return [r for r in self.requests if r.path.startswith(path_prefix)][-1]

    # --- answering ----------------------------------------------------------------------------------------
    def entry_for(self, request: Received, route: str | None) -> Entry | None:
        with self.lock:
            for key in (request.path, route, "*"):
                if key is None:
                    continue
                if key in self.always:
                    return self.always[key]
                queue = self.script.get(key)
                if queue:
                    return queue.pop(0)
        return None

    def builtin(self, request: Received, route: str | None, params: dict[str, str]) -> tuple[int, Any]:
        with self.lock:
            return self._builtin(request, route, params)

    def _builtin(self, request: Received, route: str | None, params: dict[str, str]) -> tuple[int, Any]:
        term = request.value("q") or request.value("search_term")
        if route == "/products/search":
            return 200, [] if term == NO_RESULTS_TERM else PRODUCTS
        if route == "/products/lookup":
            barcode = str(request.value("barcode") or "")
            if not barcode or barcode == UNKNOWN_BARCODE:
                return 404, {"error": "no such product"}
            return 200, {
                "id": f"ext-{barcode}",
                "name": {"da": "Ekstern vare", "en": "External product"},
                "barcode": barcode,
                "product_group": "external",
                "retail_price": Decimal("149.95"),
                "cost_price": Decimal("60"),
                "taxes": [{"name": "VAT", "rate": Decimal("0.25"), "type": "vat"}],
            }
        if route == "/customers":
            return 200, [] if term == NO_RESULTS_TERM else CUSTOMERS
        if route == "/customers/{customer_id}/discounts":
            return 200, [customer_discount(params["customer_id"])]
        if route == "/shipping-options":
            return 200, SHIPPING_OPTIONS
        if route == "/giftcards" and request.method == "POST":
            self._next_card += 1
            card = self.add_card(
                f"GC{self._next_card:06d}",
                amount=_number(request.value("amount")) or 0,
                status=1,
                currency_code=str(request.value("currency_code") or "DKK"),
            )
            return 200, card
        if route and route.startswith("/giftcards/{code}"):
            return self._giftcard(request, route, params["code"])
        if route == "/customer-accounts/{customer_id}":
            return 200, {"amount": self.balances.get(params["customer_id"], DEFAULT_BALANCE)}
        if route == "/customer-accounts/{customer_id}/pay":
            amount = _number(request.value("amount"))
            if amount is None or amount <= 0:
                return 400, {"error": "amount must be a positive number"}
            used = min(amount, self.pay_partial) if self.pay_partial is not None else amount
            customer_id = params["customer_id"]
            self.balances[customer_id] = self.balances.get(customer_id, DEFAULT_BALANCE) - used
            return 200, {"amount": used}
        return 404, {"error": f"no route {request.method} {request.path}"}

    def _giftcard(self, request: Received, route: str, code: str) -> tuple[int, Any]:
        card = self.cards.get(code)
        if card is None:
            return 404, {"error": "unknown gift card"}
        if route == "/giftcards/{code}":
            return 200, card
        if route == "/giftcards/{code}/activate":
            if card["status"] == 1:
                amount = _number(request.value("amount"))
                if amount is not None:
                    card["amount"] = amount
                card["status"] = 2
            elif card["status"] == 3:
                return 409, {"error": "gift card already used"}
            return 200, card
        # pay
        amount = _number(request.value("amount"))
        if amount is None or amount <= 0:
            return 400, {"error": "amount must be a positive number"}
        if card["status"] != 2:
            return 409, {"error": "gift card is not active"}
        currency = request.value("currency_code")
        if currency and currency != card["currency_code"]:
            return 400, {"error": "wrong currency"}
        if card["expiry_date"] < time.time():
            return 410, {"error": "gift card expired"}
        if amount > card["amount"]:
            return 402, {"error": "insufficient balance"}
        card["amount"] -= amount
        if card["amount"] == 0:
            card["status"] = 3
        return 200, card


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive, as a real integrator (and the bench) needs
    # Headers and body go out in two writes: without TCP_NODELAY the body waits for the client's delayed ACK
    # (40 ms on Linux), which would drown every timing.
    disable_nagle_algorithm = True

    trickle = 0.0  # seconds between the bytes of the answer (a "trickle" entry)
    trickle_headers = False

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        state = self.server.state
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body = json.loads(raw, parse_float=Decimal) if raw else None
        except ValueError:
            body = None
        parts = urlsplit(self.path)
        request = Received(
            method=self.command,
            path=parts.path,
            query=dict(parse_qsl(parts.query, keep_blank_values=True)),
            headers={name.lower(): value for name, value in self.headers.items()},
            body=body,
            raw=raw,
            client_port=int(self.client_address[1]),
        )
        with state.lock:
            state.requests.append(request)
        route, params = _route(request.path)
        entry = state.entry_for(request, route)
        while callable(entry):
            entry = entry(request)
        if isinstance(entry, tuple) and entry and entry[0] == "sleep":
            state.stopping.wait(float(entry[1]))
            entry = entry[2] if len(entry) > 2 else None
        if isinstance(entry, tuple) and entry and entry[0] in ("trickle", "trickle_body"):
            self.trickle, self.trickle_headers = float(entry[1]), entry[0] == "trickle"
            entry = entry[2] if len(entry) > 2 else None
        if entry is None:
            status, payload = state.builtin(request, route, params)
            return self._send(status, payload)
        kind, payload = entry[0], entry[1]
        if kind == "hang":
            state.stopping.wait()
            self.close_connection = True
            return None
        if kind == "close":
            self.close_connection = True
            self.connection.close()
            return None
        if kind == "html":
            return self._send(200, str(payload), "text/html; charset=utf-8")
        if kind == "garbage":
            return self._send(200, payload if isinstance(payload, bytes) else str(payload).encode())
        if kind == "redirect":
            return self._send(302, "", headers={"Location": str(payload)})
        return self._send(int(kind), payload)

    def _send(
        self, status: int, payload: Any, content_type: str | None = None, headers: dict[str, str] | None = None
    ) -> None:
        if isinstance(payload, bytes):
            data, ctype = payload, "application/json"
        elif isinstance(payload, str):
            data, ctype = payload.encode(), "text/plain; charset=utf-8"
        else:
            data, ctype = json.dumps(payload, default=_json_default).encode(), "application/json"
        self.send_response(status)
        self.send_header("Content-Type", content_type or ctype)
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        if self.trickle and self.trickle_headers:
            self._headers_buffer.append(b"\r\n")  # what end_headers would send, but byte by byte below
            self._trickle(b"".join(self._headers_buffer) + data)
            self._headers_buffer = []
            return
        if self.trickle:
            self.end_headers()
            self._trickle(data)
            return
        self.end_headers()
        self.wfile.write(data)

    def _trickle(self, data: bytes) -> None:
        state = self.server.state
        for i in range(len(data)):
            if state.stopping.wait(self.trickle):
                break
            try:
                self.wfile.write(data[i : i + 1])
                self.wfile.flush()
            except OSError:  # the client gave up: what a trickle is for
                break
        self.close_connection = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a sleeping handler must not hold the test run up at shutdown
    state: ReferenceIntegrator


@contextmanager
def running() -> Iterator[ReferenceIntegrator]:
    """Start a reference integrator on a free port of 127.0.0.1; stop it on exit."""
    state = ReferenceIntegrator()
    server = _Server(("127.0.0.1", 0), _Handler)
    server.state = state
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        state.stopping.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
