"""core.nodes: what each node accepts, as the OpenAPI schema it describes itself with."""

from __future__ import annotations

from decimal import Decimal

import pytest

from accounts.money import is_currency_code as accounts_is_currency_code
from core.nodes import (
    INVALID,
    MAX_AMOUNT,
    Arr,
    Bool,
    Components,
    Currency,
    Enum,
    Int,
    L10nString,
    MarketPrice,
    Node,
    Num,
    Obj,
    Report,
    Str,
    Url,
    _currency_codes,
    exactly_one_of,
    is_currency_code,
    nullable,
)


def schema(node: Node) -> dict:
    return node.json_schema(Components())


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        (Str(), {"type": "string", "maxLength": 255, "minLength": 1, "pattern": r"\S"}),
        (Str(max_length=32, allow_blank=True), {"type": "string", "maxLength": 32}),
        (Url(https_only=True), {"type": "string", "format": "uri", "maxLength": 2048, "pattern": "^https://[^/?#]"}),
        (Bool(), {"type": "boolean"}),
        (Int(minimum=0, maximum=10), {"type": "integer", "minimum": 0, "maximum": 10}),
        (Enum(("a", "b")), {"type": "string", "enum": ["a", "b"]}),
        (
            Num(),
            {"type": "number", "exclusiveMinimum": -1_000_000_000_000, "exclusiveMaximum": 1_000_000_000_000},
        ),
        (Num(minimum=0, maximum=1), {"type": "number", "minimum": 0, "maximum": 1}),
        (
            Num(positive=True),
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 10**12},
        ),
        (
            Arr(Bool(), min_items=1, max_items=5),
            {"type": "array", "items": {"type": "boolean"}, "maxItems": 5, "minItems": 1},
        ),
    ],
)
def test_each_node_describes_what_it_accepts(node, expected):
    assert schema(node) == expected


def test_bounds_print_as_numbers_not_floats():
    described = schema(Num(minimum=Decimal("0.5"), maximum=Decimal("100")))
    assert described["minimum"] == Decimal("0.5")
    assert type(described["maximum"]) is int
    assert not any(isinstance(v, float) for v in described.values())


def test_a_string_with_forbidden_characters_has_both_patterns():
    described = schema(Str(forbidden="./"))
    assert described["allOf"] == [{"pattern": r"\S"}, {"pattern": r"^[^\.\/]*$"}]


def test_an_object_shows_optional_fields_as_taking_null_and_its_rules():
    node = Obj(
        {"a": Str(), "b": Str(), "c": Currency(), "d": Enum(("x", "y"))},
        required=("a",),
        rules=(exactly_one_of("b", "c"),),
    )
    described = schema(node)

    assert described["required"] == ["a"]
    assert described["properties"]["a"]["type"] == "string"
    assert described["properties"]["b"]["type"] == ["string", "null"]
    assert described["properties"]["c"] == {"oneOf": [{"$ref": "#/components/schemas/CurrencyCode"}, {"type": "null"}]}
    assert described["properties"]["d"] == {"type": ["string", "null"], "enum": ["x", "y", None]}
    assert described["description"] == "- Exactly one of `b` or `c`."


def test_null_is_added_to_each_shape_once():
    assert nullable({"type": ["string", "null"]}) == {"type": ["string", "null"]}
    assert nullable({"oneOf": [{"type": "string"}], "description": "D."}) == {
        "oneOf": [{"type": "string"}, {"type": "null"}],
        "description": "D.",
    }
    assert nullable({"allOf": [{"$ref": "#/x"}], "description": "D."}) == {
        "oneOf": [{"allOf": [{"$ref": "#/x"}]}, {"type": "null"}],
        "description": "D.",
    }
    assert nullable({}) == {}


def test_text_and_prices_of_several_languages_and_markets_are_one_of_two_shapes():
    assert [s.get("type") for s in schema(L10nString())["oneOf"]] == ["string", "object"]
    price = schema(MarketPrice())["oneOf"]
    assert price[0]["minimum"] == 0
    assert price[1]["additionalProperties"] == price[0]


def test_a_node_without_a_schema_of_its_own_accepts_anything():
    class Anything(Node):
        pass

    assert schema(Anything()) == {}


def test_the_currency_codes_are_those_of_accounts_money():
    assert all(accounts_is_currency_code(code) for code in _currency_codes())
    for code in ("DKK", "EUR", "XYZ", "dkk", 5, None):
        assert is_currency_code(code) == accounts_is_currency_code(code)
    report = Report()
    assert Currency().check("XYZ", "currency", report) is INVALID
    assert report.errors[0]["code"] == "invalid_currency"


def test_max_amount_is_the_documented_bound():
    assert schema(Num())["exclusiveMaximum"] == int(MAX_AMOUNT)


def int_outcome(node: Int, value: object) -> object:
    report = Report()
    cleaned = node.check(value, "n", report)
    return [e["code"] for e in report.errors] if cleaned is INVALID else cleaned


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (3, 3),
        (Decimal("3.0"), 3),
        (Decimal("3e0"), 3),
        (Decimal("0.3E1"), 3),
        (Decimal("-0.0"), 0),
        (Decimal("10.000"), 10),
        (Decimal("3.5"), ["invalid_type"]),
        (Decimal("3.0000000000000000000000000001"), ["invalid_type"]),
        (Decimal("1e-400000"), ["invalid_type"]),
        (Decimal("NaN"), ["invalid_type"]),
        (Decimal("Infinity"), ["invalid_type"]),
        (3.0, ["invalid_type"]),  # the parser never makes a float
        (True, ["invalid_type"]),
        ("3", ["invalid_type"]),
        (Decimal("11.0"), ["out_of_range"]),
        (Decimal("-1.0"), ["out_of_range"]),
        (Decimal("1e400000"), ["out_of_range"]),
        (Decimal("-1e400000"), ["out_of_range"]),
    ],
)
def test_an_integer_is_any_whole_number_as_json_schema_says(value, expected):
    cleaned = int_outcome(Int(minimum=0, maximum=10), value)

    assert cleaned == expected
    assert type(cleaned) is type(expected)


def test_a_whole_number_below_a_minimum_of_one_is_not_positive():
    assert int_outcome(Int(minimum=1), Decimal("-0.0")) == ["out_of_range"]
    assert int_outcome(Int(minimum=1), Decimal("1.0")) == 1


class Unconvertible(Decimal):
    """A number the node must refuse without converting it: int() of 1e4000000 builds a 4,000,001-digit number
    (minutes of CPU)."""

    def __int__(self) -> int:
        raise AssertionError("converted to int")


def test_a_huge_whole_number_is_refused_by_its_exponent_before_it_is_converted():
    for node in (Int(minimum=0), Int()):
        report = Report()
        assert node.check(Unconvertible("1e4000000"), "n", report) is INVALID
        assert report.errors == [{"field": "n", "message": "must be at most 1000000", "code": "out_of_range"}]
    report = Report()
    assert Int().check(Unconvertible("-1e4000000"), "n", report) is INVALID
    assert report.errors[0]["code"] == "out_of_range"
    assert Int().check(Decimal("-1e29"), "n", Report()) == -(10**29)
