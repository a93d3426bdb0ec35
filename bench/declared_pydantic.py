"""Prototype for bench/validation.py: the incoming order (orders.definitions.IncomingOrder) as pydantic v2 models.

Fed the values core.jsonparse made (Decimal for fractions, int for whole numbers), with as much as possible left
to pydantic-core (Rust), to give pydantic its best figure: strict models; strings by length and pattern; numbers
as the union of a strict int and a strict Decimal with their bounds (pydantic's lax ``Decimal`` takes
``"9.95"`` and floats, and a strict ``Decimal`` alone refuses ``int``), whose two branch errors are folded into
one. Python only where pydantic has no constraint: the currency, the language map, the basket's discount type
(with its hint) and the rules, raising ``PydanticCustomError`` with our code. pydantic's error types are
translated to ``{field, message, code}``; a rule's error names its field through ``ctx["at"]`` (a validator
does not know its path). Unknown fields: validated once with ``extra="forbid"`` so that they come back with
their paths, turned into warnings (and validated again with ``extra="ignore"`` when they were the only
problems). The JSON schema needs ``WithJsonSchema`` wherever a validator is Python or the union would show
Decimal as a string.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

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
    model_validator,
)
from pydantic_core import PydanticCustomError

from core.jsonparse import format_path
from core.nodes import MAX_AMOUNT, _type_name, is_currency_code

# --- Field types ---------------------------------------------------------------------------------------

# Strings in pydantic-core (Rust): a length and a pattern. NOT_BLANK is "no NUL, and not only white space"
# (pydantic-core's regex has no look-ahead); which of the two failed is read from the value.
NOT_BLANK = r"^[^\x00]*[^\s\x00][^\x00]*$"
NO_NUL = r"^[^\x00]*$"


def Text(max_length: int = 255, *, allow_blank: bool = False) -> Any:  # used as a type
    return Annotated[StrictStr, Field(max_length=max_length, pattern=NO_NUL if allow_blank else NOT_BLANK)]


def _currency(value: str) -> str:
    if not is_currency_code(value):
        raise PydanticCustomError("invalid_currency", "'{code}' is not an ISO 4217 currency code", {"code": value[:10]})
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
URL = r"^[hH][tT][tT][pP][sS]?://[^/?#]"
Url = Annotated[StrictStr, Field(max_length=2048, pattern=URL)]
CurrencyCode = Annotated[StrictStr, AfterValidator(_currency)]

BASKET_HINTS = {
    t: f"'{t}' is only allowed on line items, not on the basket" for t in ("amount_per_item", "new_price_per_item")
}


def _basket_type(value: str) -> str:
    if value not in ("amount", "percentage", "new_price"):
        if value in BASKET_HINTS:
            raise PydanticCustomError("not_allowed", BASKET_HINTS[value])
        raise PydanticCustomError(
            "invalid_choice", "'{value}' is not one of: amount, percentage, new_price", {"value": value[:60]}
        )
    return value


# --- Models --------------------------------------------------------------------------------------------


class Model(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore")


class PercentageRule(Model):
    @model_validator(mode="after")
    def percentage_between_0_and_1(self) -> Any:
        if self.type == "percentage" and not 0 <= self.amount <= 1:  # type: ignore[attr-defined]
            raise PydanticCustomError("out_of_range", "a percentage discount must be between 0 and 1", {"at": "amount"})
        return self


class LineItemDiscount(PercentageRule):
    name: Text()
    type: Literal["amount", "amount_per_item", "percentage", "new_price", "new_price_per_item"]
    amount: Number(minimum=0)


BasketType = Annotated[
    StrictStr, AfterValidator(_basket_type), WithJsonSchema({"enum": ["amount", "percentage", "new_price"]})
]


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


class Customer(Model):
    customer_identifier: Text() | None = None
    name: Text(1000) | None = None
    phone_number: Text(64) | None = None
    email: Text(320) | None = None


class Payment(Model):
    reference: Text(1000)


class Address(Model):
    street: Text(1000, allow_blank=True) | None = None
    city: Text(allow_blank=True) | None = None
    postal_code: Text(32, allow_blank=True) | None = None
    name: Text(1000, allow_blank=True) | None = None
    country: Text(allow_blank=True) | None = None
    country_code: Text(2, allow_blank=True) | None = None


class Shipping(Model):
    address: Address | None = None
    method_id: Text() | None = None
    method_title: L10nString | None = None
    method_subtitle: L10nString | None = None


class IncomingOrder(Model):
    order_identifier: Text()
    basket: Basket
    customer: Customer | None = None
    payment: Payment | None = None
    shipping: Shipping | None = None

    @model_validator(mode="after")
    def _shipping_needs_payment(self) -> IncomingOrder:
        if self.shipping is not None and self.payment is None:
            raise PydanticCustomError(
                "shipping_without_payment",
                "shipping requires payment (a Ship from Store order is pre-paid); "
                "send payment.reference or leave shipping out",
                {"at": "shipping"},
            )
        return self


# --- Errors as {field, message, code} -------------------------------------------------------------------

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
                folded[key] = (
                    {**error, "loc": key, "type": "number_type"}
                    if error["type"] in TYPE_ERRORS
                    else {
                        **error,
                        "loc": key,
                    }
                )
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


def check(value: Any) -> tuple[Any, list[dict[str, str]], list[dict[str, str]]]:
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


def validate_only(value: Any) -> bool:
    """The floor: validation alone, no dump and no error translation."""
    try:
        IncomingOrder.model_validate(value, extra="forbid")
    except ValidationError:
        return False
    return True
