from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core.jsonenc import DecimalJSONEncoder
from exports.transforms.common import (
    BoundedWriter,
    RenderBudget,
    format_date,
    format_money,
    format_number,
    json_default,
    neutralise_formula,
    parse_path,
    resolve,
    to_decimal,
    write_json,
)


def test_parse_path_compiles_keys_and_indexes() -> None:
    assert parse_path("summary.line_items[0].taxes[1].rate") == ("summary", "line_items", 0, "taxes", 1, "rate")
    assert parse_path("register_summary.all_by_product_group.__none__.total")[-2] == "__none__"


@pytest.mark.parametrize("text", ["", "a..b", ".a", "a.", "a[-1]", "a[01]", "a[b]", "a b", "a]", "a.[0]", "a(0)", 5])
def test_parse_path_refuses_malformed_paths(text: Any) -> None:
    with pytest.raises(ValueError):
        parse_path(text)


def test_resolve_follows_only_keys_and_indexes() -> None:
    data = {"a": [{"b": 1}], "s": "text"}
    assert resolve(data, ("a", 0, "b")) == 1
    assert resolve(data, ("a", 5, "b")) is None
    assert resolve(data, ("s", "upper")) is None
    assert resolve(data, ("a", "append")) is None


@pytest.mark.parametrize(
    ("value", "currency", "expected"),
    [
        (12.5, "DKK", "12.50"),
        (0.125, None, "0.13"),
        (-0.005, "EUR", "-0.01"),
        (1234.5, "JPY", "1235"),
        (1.2345, "KWD", "1.235"),
        ("7", None, "7.00"),
    ],
)
def test_format_money_quantizes_half_up_to_the_minor_unit(value: Any, currency: Any, expected: str) -> None:
    assert format_money(value, currency=currency) == expected


def test_format_money_refuses_non_numbers() -> None:
    assert format_money(True) is None
    assert format_money("abc") is None
    assert format_money(float("nan")) is None


def test_format_number_has_no_float_noise_or_exponent() -> None:
    assert format_number(0.1 + 0.2) == "0.30000000000000004"
    assert format_number(1e-7) == "0.0000001"
    assert format_number(0.25, decimal_separator=",") == "0,25"


def test_format_date_accepts_seconds_milliseconds_and_iso() -> None:
    assert format_date(1709298300.25, "%Y-%m-%d %H:%M") == "2024-03-01 13:05"
    assert format_date(1709298300250, "%Y-%m-%d %H:%M") == "2024-03-01 13:05"
    assert format_date("2024-03-01T14:05:00+01:00", "%H:%M %z") == "14:05 +0100"
    assert format_date("yesterday", "%Y") is None


@pytest.mark.parametrize(
    ("text", "expected"), [("=1", "'=1"), ("+1", "'+1"), ("-1", "'-1"), ("@a", "'@a"), ("a=1", "a=1")]
)
def test_neutralise_formula(text: str, expected: str) -> None:
    assert neutralise_formula(text) == expected


@given(st.lists(st.decimals(min_value=-10_000, max_value=10_000, places=2), max_size=50))
def test_money_of_a_decimal_sum_is_exact(amounts: list[Decimal]) -> None:
    total = sum((to_decimal(float(amount)) or Decimal(0) for amount in amounts), Decimal(0))
    assert format_money(total) == f"{sum(amounts, Decimal(0)):.2f}"


JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.decimals(allow_nan=False, allow_infinity=False, places=2)
    | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=30,
)


@given(JSON_VALUES, st.sampled_from([(",", ":"), (", ", ": ")]))
def test_write_json_writes_what_json_dumps_writes(value: Any, separators: tuple[str, str]) -> None:
    writer = BoundedWriter(RenderBudget())
    write_json(value, writer, separators=separators)
    assert writer.text() == DecimalJSONEncoder(default=json_default, ensure_ascii=False, separators=separators).encode(
        value
    )
