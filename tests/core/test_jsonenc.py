"""Stored and written JSON carries every Decimal exactly: no float on the way out."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.db import connection
from hypothesis import given
from hypothesis import strategies as st

from core.jsonenc import DecimalJSONDecoder, DecimalJSONEncoder, decimal_json, decimal_number
from exports.transforms.common import dumps
from imports.models import ImportItem
from tests.factories import ImportItemFactory

# 17 significant digits: the nearest double is 12345678901234568, so a float on the way would show.
PRECISE = Decimal("12345678901234567.89")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (PRECISE, "12345678901234567.89"),
        (Decimal("12.50"), "12.5"),
        (Decimal("1E+2"), "100"),
        (Decimal("100"), "100"),
        (Decimal("0.0000001"), "0.0000001"),
        (Decimal("-0.00"), "-0"),
        (Decimal("0.00"), "0"),
        (Decimal("1E-7"), "0.0000001"),
        (Decimal("1" + "0" * 30), "1" + "0" * 30),
        (Decimal("0E-999999"), "0"),
        (Decimal("0.30000000000000004441"), "0.30000000000000004441"),
    ],
)
def test_decimal_number_is_the_exact_plain_number(value: Decimal, text: str) -> None:
    assert decimal_number(value) == text
    assert json.loads(text, parse_float=Decimal) == value


@pytest.mark.parametrize("text", ["NaN", "Infinity", "-Infinity", "1E+999999", "1E-999999"])
def test_a_decimal_with_no_json_number_is_written_as_its_text(text: str) -> None:
    assert decimal_number(Decimal(text)) is None
    assert decimal_json(Decimal(text)) == json.dumps(text)
    assert json.dumps({"a": Decimal(text)}, cls=DecimalJSONEncoder) == json.dumps({"a": text})


def test_the_encoder_writes_decimals_exactly_and_everything_else_as_json_does() -> None:
    value = {"list": [Decimal("1.10"), 1, 1.5, None, True, "x"], "nested": {"rate": Decimal("0.25")}}
    as_json_writes_them = {"list": [1.1, 1, 1.5, None, True, "x"], "nested": {"rate": 0.25}}
    for options in ({}, {"indent": 2, "ensure_ascii": False, "sort_keys": True}, {"separators": (",", ":")}):
        assert json.dumps(value, cls=DecimalJSONEncoder, **options) == json.dumps(as_json_writes_them, **options)
    text = json.dumps({"amount": PRECISE}, cls=DecimalJSONEncoder)
    assert text == '{"amount": 12345678901234567.89}'
    assert json.loads(text, cls=DecimalJSONDecoder) == {"amount": PRECISE}


def test_a_string_shaped_like_the_encoders_marker_stays_a_string() -> None:
    # The marker carries a nonce drawn for each call, so no string a client sends can be taken for one.
    text = json.dumps({"a": Decimal("1.5"), "b": "\x00deadbeefdeadbeef<2>deadbeefdeadbeef\x00"}, cls=DecimalJSONEncoder)
    assert json.loads(text) == {"a": 1.5, "b": "\x00deadbeefdeadbeef<2>deadbeefdeadbeef\x00"}


@given(st.decimals(allow_nan=False, allow_infinity=False, min_value=-(10**30), max_value=10**30, places=12))
def test_every_decimal_the_parser_accepts_round_trips_exactly(value: Decimal) -> None:
    text = json.dumps([value], cls=DecimalJSONEncoder)
    assert json.loads(text, cls=DecimalJSONDecoder)[0] == value
    assert dumps([value]) == text.replace(" ", "")


@pytest.mark.django_db
def test_a_stored_document_keeps_every_digit() -> None:
    item = ImportItemFactory(payload={"amount": PRECISE, "rate": Decimal("0.25")})
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(ImportItem._meta.db_table)
        cursor.execute(f"SELECT CAST(payload AS TEXT) FROM {table} WHERE id = %s", [item.pk])  # noqa: S608
        stored_text = cursor.fetchone()[0]
    assert "12345678901234567.89" in stored_text
    assert ImportItem.objects.get(pk=item.pk).payload["amount"] == PRECISE
