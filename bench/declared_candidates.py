"""The two library candidates bench/validation.py compares with the nodes: the incoming order
(orders.bodies.IncomingOrder) as pydantic v2 models and as msgspec Structs. What they share (the field
lengths and patterns, the choices, the messages of the rules) is declared once, above both.

**pydantic v2**, fed the values core.jsonparse made (Decimal for fractions, int for whole numbers), with as much as
possible left to pydantic-core (Rust), to give pydantic its best figure: strict models; strings by length and
pattern; numbers as the union of a strict int and a strict Decimal with their bounds (pydantic's lax ``Decimal``
takes ``"9.95"`` and floats, and a strict ``Decimal`` alone refuses ``int``), whose two branch errors are folded
into one. Python only where pydantic has no constraint: the currency, the language map, the basket's discount type
(with its hint) and the rules, raising ``PydanticCustomError`` with our code. pydantic's error types are translated
to ``{field, message, code}``; a rule's error names its field through ``ctx["at"]`` (a validator does not know its
path). Unknown fields: validated once with ``extra="forbid"`` so that they come back with their paths, turned into
warnings (and validated again with ``extra="ignore"`` when they were the only problems). The JSON schema needs
``WithJsonSchema`` wherever a validator is Python or the union would show Decimal as a string.

**msgspec** (the ``...Struct`` classes), two ways in: ``msgspec.convert`` of the values core.jsonparse made, or
``msgspec.json.decode`` of the bytes (each item through ``msgspec.Raw``, so that one bad item refuses only itself).
msgspec stops at the first error of an item and gives it as one message (``Expected `int` >= 1 - at
`$.basket.line_items[0].quantity```), which is translated back to ``{field, message, code}`` by its wording; our
own checks (numbers, currency, URL, rules) run in ``__post_init__`` and raise ``"code|field|message"``. Numbers
are typed ``Any`` and checked in Python: ``convert`` turns the string ``"9.95"`` into ``Decimal("9.95")`` for a
``Decimal`` field (a string is Decimal's builtin form in msgspec), so a ``Decimal`` type cannot refuse it;
decoding bytes, ``float_hook=Decimal`` keeps the fractions of those ``Any`` fields exact. Unknown fields are
dropped without a warning (msgspec does not report them).
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    Strict,
    StrictInt,
    StrictStr,
    ValidationError,
    WithJsonSchema,
    create_model,
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.jsonparse import format_path
from core.nodes import MAX_AMOUNT, _type_name, is_currency_code

# --- What both declare alike -----------------------------------------------------------------------------

# Strings: a length and a pattern. NOT_BLANK is "no NUL, and not only white space" (pydantic-core's regex has no
# look-ahead); which of the two failed is read from the value.
NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL = r"^[^\x00]*$"
URL = r"^[hH][tT][tT][pP][sS]?://[^/?#]"
# The text fields of the leaves: name -> longest length (an address's may be blank).
CUSTOMER_FIELDS = {"customer_identifier": 255, "name": 1000, "phone_number": 64, "email": 320}
PAYMENT_FIELDS = {"reference": 1000}
ADDRESS_FIELDS = {"street": 1000, "city": 255, "postal_code": 32, "name": 1000, "country": 255, "country_code": 2}
LINE_DISCOUNT_TYPE = Literal["amount", "amount_per_item", "percentage", "new_price", "new_price_per_item"]
BASKET_DISCOUNT_TYPES = ("amount", "percentage", "new_price")
BASKET_HINTS = {
    t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
}
PERCENTAGE = "a percentage discount must be between 0 and 1"
SHIPPING_NEEDS_PAYMENT = (
    "shipping requires payment (a Ship from Store order is pre-paid); send payment.reference or leave shipping out"
)


def texts(text: Any, lengths: dict[str, int], *, allow_blank: bool = False) -> list[tuple[str, Any]]:
    """(name, text type) of each field of ``lengths``, the type made by a library's ``text`` factory."""
    return [(key, text(n, allow_blank=allow_blank)) for key, n in lengths.items()]


def order_tree(
    make: Any, text: Any, l10n: Any, basket: Any, *, shipping_base: Any, order_base: Any, suffix: str = ""
) -> Any:
    """The incoming order above its basket (customer, payment, shipping and its address, the order itself), as one
    library declares it: ``make(name, base=..., required=[(name, type)], optional=[(name, type)])`` makes a class,
    ``text(max_length, allow_blank=...)`` a string type, ``l10n`` is the language map's type; each class is named
    with ``suffix``. The bases hold each library's rules."""
    customer = make(f"Customer{suffix}", optional=texts(text, CUSTOMER_FIELDS))
    address = make(f"Address{suffix}", optional=texts(text, ADDRESS_FIELDS, allow_blank=True))
    payment = make(f"Payment{suffix}", required=texts(text, PAYMENT_FIELDS))
    shipping = make(
        f"Shipping{suffix}",
        base=shipping_base,
        optional=[("address", address), ("method_id", text()), ("method_title", l10n), ("method_subtitle", l10n)],
    )
    return make(
        f"IncomingOrder{suffix}",
        base=order_base,
        required=[("order_identifier", text()), ("basket", basket)],
        optional=[("customer", customer), ("payment", payment), ("shipping", shipping)],
    )


def not_a_basket_type(value: str) -> str:
    return f"'{value[:60]}' is not one of: {', '.join(BASKET_DISCOUNT_TYPES)}"


def not_a_currency(value: str) -> str:
    return f"'{value[:10]}' is not an ISO 4217 currency code"


# --- pydantic v2: field types -----------------------------------------------------------------------------


def Text(max_length: int = 255, *, allow_blank: bool = False) -> Any:  # used as a type
    return Annotated[StrictStr, Field(max_length=max_length, pattern=NO_NUL if allow_blank else NOT_BLANK)]


def _currency(value: str) -> str:
    if not is_currency_code(value):
        raise PydanticCustomError("invalid_currency", not_a_currency(value))
    return value


def Number(*, minimum: int | None = None, positive: bool = False) -> Any:
    """An int or a Decimal (never a bool, string or float), within MAX_AMOUNT, checked by pydantic-core: a union
    of a strict int and a strict Decimal, whose two branches' errors ``_translate`` folds into one."""
    low = {"gt": 0} if positive else {"ge": minimum} if minimum is not None else {"gt": -MAX_AMOUNT}
    schema: dict[str, Any] = {"type": "number", "exclusiveMaximum": True, "maximum": int(MAX_AMOUNT)}
    schema.update({"minimum": 0, "exclusiveMinimum": True} if positive else {"minimum": minimum or -int(MAX_AMOUNT)})
    return Annotated[
        Annotated[StrictInt, Field(lt=int(MAX_AMOUNT), **low)]
        | Annotated[Decimal, Strict(), Field(lt=MAX_AMOUNT, **low)],
        WithJsonSchema(schema),
    ]


def _l10n(value: Any) -> Any:
    if isinstance(value, str):
        if not value.strip():
            raise PydanticCustomError("blank", "must not be blank")
        return value if len(value) <= 1000 else _too_long(1000)
    if not isinstance(value, dict):
        raise PydanticCustomError(
            "invalid_type",
            "must be a string or an object of language code to string, not {type}",
            {"type": _type_name(value)},
        )
    if not value:
        raise PydanticCustomError("blank", "must name at least one language")
    for lang, text in value.items():
        if not (2 <= len(lang) <= 16) or not lang.replace("-", "").replace("_", "").isalnum():
            raise PydanticCustomError("invalid", "is not a language code", {"at": lang[:20]})
        if not isinstance(text, str):
            raise PydanticCustomError(
                "invalid_type", "must be a string, not {type}", {"type": _type_name(text), "at": lang}
            )
        if not text.strip():
            raise PydanticCustomError("blank", "must not be blank", {"at": lang})
    return value


def _too_long(n: int) -> Any:
    raise PydanticCustomError("too_long", f"must be at most {n} characters")


L10nString = Annotated[
    Any,
    PlainValidator(_l10n),
    WithJsonSchema({"oneOf": [{"type": "string"}, {"type": "object", "additionalProperties": {"type": "string"}}]}),
]
Url = Annotated[StrictStr, Field(max_length=2048, pattern=URL)]
CurrencyCode = Annotated[StrictStr, AfterValidator(_currency)]


def _basket_type(value: str) -> str:
    if value not in BASKET_DISCOUNT_TYPES:
        if value in BASKET_HINTS:
            raise PydanticCustomError("not_allowed", BASKET_HINTS[value])
        raise PydanticCustomError("invalid_choice", not_a_basket_type(value))
    return value


# --- pydantic v2: models ----------------------------------------------------------------------------------


class Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class PercentageRule(Model):
    @model_validator(mode="after")
    def percentage_between_0_and_1(self) -> Any:
        if self.type == "percentage" and not 0 <= self.amount <= 1:
            raise PydanticCustomError("out_of_range", PERCENTAGE, {"at": "amount"})
        return self


class LineItemDiscount(PercentageRule):
    name: Text()
    type: LINE_DISCOUNT_TYPE
    amount: Number(minimum=0)


BasketType = Annotated[StrictStr, AfterValidator(_basket_type), WithJsonSchema({"enum": list(BASKET_DISCOUNT_TYPES)})]


class BasketDiscount(PercentageRule):
    name: Text()
    type: BasketType
    amount: Number(minimum=0)


class LineItem(Model):
    product_identifier: Text()
    variant_identifier: Text() | None = None
    barcode: Text() | None = None
    image_url: Url | None = None
    name: Text(1000)
    quantity: Annotated[StrictInt, Field(ge=1, le=1_000_000)]
    price: Number(positive=True)
    discounts: Annotated[list[LineItemDiscount], Field(max_length=100)] | None = None


class Basket(Model):
    currency: CurrencyCode
    line_items: Annotated[list[LineItem], Field(min_length=1, max_length=1000)]
    discounts: Annotated[list[BasketDiscount], Field(max_length=100)] | None = None


def _model(name: str, *, base: type[Model] = Model, required: Any = (), optional: Any = ()) -> Any:
    """A model of ``required`` and ``optional`` fields (name, type), the optional ones None when left out."""
    fields: Any = {key: (kind, ...) for key, kind in required} | {key: (kind | None, None) for key, kind in optional}
    return create_model(name, __base__=base, **fields)


class ShippingNeedsPayment(Model):
    @model_validator(mode="after")
    def _shipping_needs_payment(self) -> Any:
        if self.shipping is not None and self.payment is None:
            raise PydanticCustomError("shipping_without_payment", SHIPPING_NEEDS_PAYMENT, {"at": "shipping"})
        return self


IncomingOrder = order_tree(_model, Text, L10nString, Basket, shipping_base=Model, order_base=ShippingNeedsPayment)


# --- pydantic v2: errors as {field, message, code} --------------------------------------------------------

EXPECTED = {
    "string_type": "a string",
    "int_type": "an integer",
    "bool_type": "a boolean",
    "list_type": "an array",
    "model_type": "an object",
    "dict_type": "an object",
    "model_attributes_type": "an object",
}


UNION_BRANCHES = {"constrained-int", "decimal"}
TYPE_ERRORS = {"int_type", "is_instance_of"}


def _fold_unions(errors: list[Any]) -> list[Any]:
    """One error per number: the two branches of int | Decimal each report; keep the one that says more."""
    out: list[Any] = []
    folded: dict[tuple[Any, ...], Any] = {}
    for error in errors:
        loc = error["loc"]
        if loc and loc[-1] in UNION_BRANCHES:
            key = loc[:-1]
            known = folded.get(key)
            if known is None:
                folded[key] = {**error, "loc": key} | ({"type": "number_type"} if error["type"] in TYPE_ERRORS else {})
                out.append(key)
            elif error["type"] not in TYPE_ERRORS:
                folded[key] = {**error, "loc": key}
        else:
            out.append(error)
    return [folded[e] if isinstance(e, tuple) else e for e in out]


def _translate(error: Any) -> tuple[str, str, str]:
    kind = error["type"]
    ctx = error.get("ctx") or {}
    loc = list(error["loc"])
    if "at" in ctx:
        loc.append(ctx["at"])
    field = format_path(loc)
    value = error.get("input")
    if kind == "missing" or (value is None and (kind in EXPECTED or kind in ("invalid_type", "number_type"))):
        return field, "is required", "required"
    if kind in EXPECTED:
        return field, f"must be {EXPECTED[kind]}, not {_type_name(value)}", "invalid_type"
    if kind == "number_type":
        return field, f"must be a number, not {_type_name(value)}", "invalid_type"
    if kind == "string_pattern_mismatch":
        if ctx["pattern"] == URL:
            return field, "must be an absolute http or https URL", "invalid_url"
        if "\x00" in value:
            return field, "must not contain NUL characters", "invalid"
        return field, "must not be blank", "blank"
    if kind == "string_too_long":
        return field, f"must be at most {ctx['max_length']} characters", "too_long"
    if kind == "too_short":
        return field, "must not be empty", "empty"
    if kind == "too_long":
        return field, f"must have at most {ctx['max_length']} items", "too_long"
    if kind == "finite_number":
        return field, "must be a finite number", "invalid_number"
    if kind == "less_than" or (kind == "greater_than" and ctx["gt"] < 0):
        return field, f"must be less than {MAX_AMOUNT:f} in size", "out_of_range"
    if kind == "greater_than":
        return field, "must be positive", "out_of_range"
    if kind == "greater_than_equal":
        return field, "must be positive" if ctx["ge"] == 1 else f"must be at least {ctx['ge']}", "out_of_range"
    if kind == "less_than_equal":
        return field, f"must be at most {ctx['le']}", "out_of_range"
    if kind == "literal_error":
        allowed = ctx["expected"].replace("'", "").replace(" or ", ", ")
        return field, f"'{str(value)[:60]}' is not one of: {allowed}", "invalid_choice"
    return field, error["msg"], kind  # our PydanticCustomError: its type is our code


def pydantic_check(value: Any) -> tuple[Any, list[dict[str, str]], list[dict[str, str]]]:
    """(cleaned or None, errors, warnings), each error ``{field, message, code}``."""
    try:
        model = IncomingOrder.model_validate(value, extra="forbid")
    except ValidationError as exc:
        errors, warnings = [], []
        for error in _fold_unions(exc.errors(include_url=False)):
            if error["type"] == "extra_forbidden":
                warnings.append(
                    {"field": format_path(error["loc"]), "message": "unknown field, ignored", "code": "unknown_field"}
                )
            else:
                field, message, code = _translate(error)
                errors.append({"field": field, "message": message, "code": code})
        if errors:
            return None, errors, warnings
        model = IncomingOrder.model_validate(value)
        return model.model_dump(exclude_unset=True, exclude_none=True), [], warnings
    return model.model_dump(exclude_unset=True, exclude_none=True), [], []


def pydantic_validate_only(value: Any) -> bool:
    """The floor: validation alone, no dump and no error translation."""
    try:
        IncomingOrder.model_validate(value, extra="forbid")
    except ValidationError:
        return False
    return True


# --- msgspec: Structs -------------------------------------------------------------------------------------


def TextStruct(max_length: int = 255, *, allow_blank: bool = False) -> Any:  # used as a type
    return Annotated[str, msgspec.Meta(max_length=max_length, pattern=NO_NUL if allow_blank else NOT_BLANK)]


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


def discount_amount(discount: Any) -> None:
    number(discount.amount, "amount", minimum=0)
    if discount.type == "percentage" and not 0 <= discount.amount <= 1:
        raise Refused("out_of_range", "amount", PERCENTAGE)


def l10n(value: Any, field: str) -> None:
    if value is None or isinstance(value, str):
        return
    if not value:
        raise Refused("blank", field, "must name at least one language")


class Struct(msgspec.Struct, omit_defaults=True):
    pass


class LineItemDiscountStruct(Struct):
    name: TextStruct()
    type: LINE_DISCOUNT_TYPE
    amount: Any

    def __post_init__(self) -> None:
        discount_amount(self)


class BasketDiscountStruct(Struct):
    name: TextStruct()
    type: str
    amount: Any

    def __post_init__(self) -> None:
        if self.type in BASKET_HINTS:
            raise Refused("not_allowed", "type", BASKET_HINTS[self.type])
        if self.type not in BASKET_DISCOUNT_TYPES:
            raise Refused("invalid_choice", "type", not_a_basket_type(self.type))
        discount_amount(self)


class LineItemStruct(Struct):
    product_identifier: TextStruct()
    name: TextStruct(1000)
    quantity: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)]
    price: Any
    variant_identifier: TextStruct() | None = None
    barcode: TextStruct() | None = None
    image_url: Annotated[str, msgspec.Meta(max_length=2048)] | None = None
    discounts: Annotated[list[LineItemDiscountStruct], msgspec.Meta(max_length=100)] | None = None

    def __post_init__(self) -> None:
        number(self.price, "price", positive=True)
        if self.image_url is not None:
            parts = urlsplit(self.image_url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise Refused("invalid_url", "image_url", "must be an absolute http or https URL")


class BasketStruct(Struct):
    currency: str
    line_items: Annotated[list[LineItemStruct], msgspec.Meta(min_length=1, max_length=1000)]
    discounts: Annotated[list[BasketDiscountStruct], msgspec.Meta(max_length=100)] | None = None

    def __post_init__(self) -> None:
        if not is_currency_code(self.currency):
            raise Refused("invalid_currency", "currency", not_a_currency(self.currency))


def _struct(name: str, *, base: type[Struct] = Struct, required: Any = (), optional: Any = ()) -> Any:
    """A Struct of ``required`` and ``optional`` fields (name, type), the optional ones None when left out."""
    fields = [*required, *((key, kind | None, None) for key, kind in optional)]
    return msgspec.defstruct(name, fields, bases=(base,))


class ShippingRules(Struct):
    def __post_init__(self) -> None:
        l10n(self.method_title, "method_title")
        l10n(self.method_subtitle, "method_subtitle")


class OrderRules(Struct):
    def __post_init__(self) -> None:
        if self.shipping is not None and self.payment is None:
            raise Refused("shipping_without_payment", "shipping", SHIPPING_NEEDS_PAYMENT)


IncomingOrderStruct = order_tree(
    _struct,
    TextStruct,
    str | dict[str, TextStruct(1000)],
    BasketStruct,
    shipping_base=ShippingRules,
    order_base=OrderRules,
    suffix="Struct",
)


class IncomingOrdersStruct(msgspec.Struct):
    orders: list[msgspec.Raw]


# --- msgspec: the one error as {field, message, code} -----------------------------------------------------

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


def msgspec_check(value: Any) -> tuple[Any, list[dict[str, str]]]:
    """(cleaned or None, [the first error]) from the parsed values."""
    try:
        order = msgspec.convert(value, IncomingOrderStruct)
    except msgspec.ValidationError as exc:
        return None, [translate(exc)]
    return msgspec.to_builtins(order, builtin_types=(Decimal,)), []


_items = msgspec.json.Decoder(IncomingOrdersStruct)
# ``float_hook``: a fraction in an ``Any`` field (the numbers) is made from its text, never a float.
_order = msgspec.json.Decoder(IncomingOrderStruct, float_hook=Decimal)


def msgspec_check_bytes(raw: bytes) -> list[tuple[Any, list[dict[str, str]]]]:
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
