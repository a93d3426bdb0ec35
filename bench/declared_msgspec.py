"""Prototype for bench/validation.py: the incoming order (orders.definitions.IncomingOrder) as msgspec Structs.

Two ways in: ``msgspec.convert`` of the values core.jsonparse made, or ``msgspec.json.decode`` of the bytes
(each item through ``msgspec.Raw``, so that one bad item refuses only itself). msgspec stops at the first
error of an item and gives it as one message (``Expected `int` >= 1 - at `$.basket.line_items[0].quantity```),
which is translated back to ``{field, message, code}`` by its wording; our own checks (numbers, currency, URL,
rules) run in ``__post_init__`` and raise ``"code|field|message"``. Numbers are typed ``Any`` and checked in
Python: ``convert`` turns the string ``"9.95"`` into ``Decimal("9.95")`` for a ``Decimal`` field (a string is
Decimal's builtin form in msgspec), so a ``Decimal`` type cannot refuse it; decoding bytes, ``float_hook=Decimal``
keeps the fractions of those ``Any`` fields exact. Unknown fields are dropped
without a warning (msgspec does not report them).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec

from core.nodes import MAX_AMOUNT, _type_name, is_currency_code

NOT_BLANK = r"^(?=[\s\S]*\S)[^\x00]*$"


def Text(max_length: int = 255, *, allow_blank: bool = False) -> Any:  # used as a type
    if allow_blank:
        return Annotated[str, msgspec.Meta(max_length=max_length, pattern=r"^[^\x00]*$")]
    return Annotated[str, msgspec.Meta(max_length=max_length, pattern=NOT_BLANK)]


class Refused(ValueError):
    def __init__(self, code: str, field: str, message: str) -> None:
        super().__init__(f"{code}|{field}|{message}")


def number(value: Any, field: str, *, minimum: int | None = None, positive: bool = False) -> None:
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise Refused("invalid_type", field, f"must be a number, not {_type_name(value)}")
    if isinstance(value, Decimal) and not value.is_finite():
        raise Refused("invalid_number", field, "must be a finite number")
    if abs(Decimal(value)) >= MAX_AMOUNT:
        raise Refused("out_of_range", field, f"must be less than {MAX_AMOUNT:f} in size")
    if positive and value <= 0:
        raise Refused("out_of_range", field, "must be positive")
    if minimum is not None and value < minimum:
        raise Refused("out_of_range", field, f"must be at least {minimum}")


def l10n(value: Any, field: str) -> None:
    if value is None or isinstance(value, str):
        return
    if not value:
        raise Refused("blank", field, "must name at least one language")


class Struct(msgspec.Struct, omit_defaults=True):
    pass


class LineItemDiscount(Struct):
    name: Text()
    type: Literal["amount", "amount_per_item", "percentage", "new_price", "new_price_per_item"]
    amount: Any

    def __post_init__(self) -> None:
        number(self.amount, "amount", minimum=0)
        if self.type == "percentage" and not 0 <= self.amount <= 1:
            raise Refused("out_of_range", "amount", "a percentage discount must be between 0 and 1")


HINTS = {"amount_per_item", "new_price_per_item"}


class BasketDiscount(Struct):
    name: Text()
    type: str
    amount: Any

    def __post_init__(self) -> None:
        if self.type in HINTS:
            raise Refused("not_allowed", "type", f"'{self.type}' is only allowed on line items, not on the basket")
        if self.type not in ("amount", "percentage", "new_price"):
            raise Refused("invalid_choice", "type", f"'{self.type[:60]}' is not one of: amount, percentage, new_price")
        number(self.amount, "amount", minimum=0)
        if self.type == "percentage" and not 0 <= self.amount <= 1:
            raise Refused("out_of_range", "amount", "a percentage discount must be between 0 and 1")


class LineItem(Struct):
    product_identifier: Text()
    name: Text(1000)
    quantity: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]
    price: Any
    variant_identifier: Text() | None = None
    barcode: Text() | None = None
    image_url: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    discounts: Annotated[list[LineItemDiscount], msgspec.Meta(max_length=100)] | None = None

    def __post_init__(self) -> None:
        number(self.price, "price", positive=True)
        if self.image_url is not None:
            parts = urlsplit(self.image_url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise Refused("invalid_url", "image_url", "must be an absolute http or https URL")


class Basket(Struct):
    currency: str
    line_items: Annotated[list[LineItem], msgspec.Meta(min_length=1, max_length=1000)]
    discounts: Annotated[list[BasketDiscount], msgspec.Meta(max_length=100)] | None = None

    def __post_init__(self) -> None:
        if not is_currency_code(self.currency):
            raise Refused("invalid_currency", "currency", f"'{self.currency[:10]}' is not an ISO 4217 currency code")


class Customer(Struct):
    customer_identifier: Text() | None = None
    name: Text(1000) | None = None
    phone_number: Text(64) | None = None
    email: Text(320) | None = None


class Payment(Struct):
    reference: Text(1000)


class Address(Struct):
    street: Text(1000, allow_blank=True) | None = None
    city: Text(allow_blank=True) | None = None
    postal_code: Text(32, allow_blank=True) | None = None
    name: Text(1000, allow_blank=True) | None = None
    country: Text(allow_blank=True) | None = None
    country_code: Text(2, allow_blank=True) | None = None


class Shipping(Struct):
    address: Address | None = None
    method_id: Text() | None = None
    method_title: str | dict[str, Text(1000)] | None = None
    method_subtitle: str | dict[str, Text(1000)] | None = None

    def __post_init__(self) -> None:
        l10n(self.method_title, "method_title")
        l10n(self.method_subtitle, "method_subtitle")


class IncomingOrder(Struct):
    order_identifier: Text()
    basket: Basket
    customer: Customer | None = None
    payment: Payment | None = None
    shipping: Shipping | None = None

    def __post_init__(self) -> None:
        if self.shipping is not None and self.payment is None:
            raise Refused(
                "shipping_without_payment",
                "shipping",
                "shipping requires payment (a Ship from Store order is pre-paid); "
                "send payment.reference or leave shipping out",
            )


class IncomingOrders(msgspec.Struct):
    orders: list[msgspec.Raw]


# --- The one error as {field, message, code} ------------------------------------------------------------

_AT = re.compile(r"^(?P<message>.*?)(?: - at `\$(?P<path>[^`]*)`)?$", re.DOTALL)
_WORDS = [
    (re.compile(r"^Object missing required field `(?P<name>[^`]+)`"), "required"),
    (re.compile(r"^Expected `[^`]+`, got `null`"), "required"),
    (re.compile(r"^Expected `[^`]+`, got `(?P<got>\w+)`"), "invalid_type"),
    (re.compile(r"^Expected `str` of length <= (?P<n>\d+)"), "too_long"),
    (re.compile(r"^Expected `str` matching regex"), "blank"),
    (re.compile(r"^Expected `int` [<>]="), "out_of_range"),
    (re.compile(r"^Expected `array` of length >= 1"), "empty"),
    (re.compile(r"^Expected `array` of length <="), "too_long"),
    (re.compile(r"^Invalid enum value"), "invalid_choice"),
]


def translate(exc: msgspec.ValidationError) -> dict[str, str]:
    match = _AT.match(str(exc))
    assert match is not None
    message, path = match["message"], (match["path"] or "").lstrip(".")
    if message.count("|") >= 2:  # one of ours
        code, field, text = message.split("|", 2)
        return {"field": f"{path}.{field}" if path else field, "message": text, "code": code}
    for pattern, code in _WORDS:
        found = pattern.match(message)
        if found:
            if "name" in found.groupdict():
                path = f"{path}.{found['name']}" if path else found["name"]
            return {"field": path, "message": message, "code": code}
    return {"field": path, "message": message, "code": "invalid"}


def check(value: Any) -> tuple[Any, list[dict[str, str]]]:
    """(cleaned or None, [the first error]) from the parsed values."""
    try:
        order = msgspec.convert(value, IncomingOrder)
    except msgspec.ValidationError as exc:
        return None, [translate(exc)]
    return msgspec.to_builtins(order, builtin_types=(Decimal,)), []


_items = msgspec.json.Decoder(IncomingOrders)
# ``float_hook``: a fraction in an ``Any`` field (the numbers) is made from its text, never a float.
_order = msgspec.json.Decoder(IncomingOrder, float_hook=Decimal)


def check_bytes(raw: bytes) -> list[tuple[Any, list[dict[str, str]]]]:
    """Each order of ``{"orders": [...]}`` decoded from the bytes: (cleaned or None, [the first error])."""
    out: list[tuple[Any, list[dict[str, str]]]] = []
    for item in _items.decode(raw).orders:
        try:
            order = _order.decode(item)
        except msgspec.ValidationError as exc:
            out.append((None, [translate(exc)]))
        else:
            out.append((msgspec.to_builtins(order, builtin_types=(Decimal,)), []))
    return out
