"""JSON for stored payloads: amounts are parsed as Decimal and written back as the exact JSON numbers they are.

No float on the way out either: a Decimal is written from its own digits (``decimal_number``), so
``Decimal("12345678901234567.89")`` is stored, exported and answered as ``12345678901234567.89``, never as the
nearest double. Trailing zeros of the fraction are dropped (``12.50`` is written ``12.5``: the same number; JSON has no
scale), and the notation is plain (``1E+2`` is written ``100``).
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterator
from decimal import Decimal
from typing import Any

from django.db import models

# Decimals whose exponent lies outside this range are written as JSON strings of their text instead of numbers: only a
# refused item's payload, kept for the log, can carry one (the parser refuses such numbers in what it accepts), and a
# plain-notation number of millions of digits must never be written, nor handed to PostgreSQL's numeric type.
PLAIN_EXPONENT_LIMIT = 40


def decimal_number(value: Decimal) -> str | None:
    """The JSON number ``value`` is, exactly and in plain notation; None if it has none (NaN, an infinity, an exponent
    beyond ``PLAIN_EXPONENT_LIMIT``)."""
    if not value.is_finite():
        return None
    text = str(value)
    if "E" in text:  # scientific notation: plain notation only within the exponent limit
        if not value:
            return "-0" if value.is_signed() else "0"
        if not -PLAIN_EXPONENT_LIMIT <= value.adjusted() <= PLAIN_EXPONENT_LIMIT:
            return None
        text = f"{value:f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    return text


def decimal_json(value: Decimal) -> str:
    """``value`` as JSON text: its exact number, or a string of its text where it has no JSON number."""
    number = decimal_number(value)
    return number if number is not None else json.dumps(str(value))


# The marks around a Decimal's digits while the standard encoder writes it as a string, as they read once encoded.
# The nonce is drawn once per process and never written anywhere, so no string a client sends can carry a mark (the
# JSON parser refuses NUL characters besides).
_NONCE = secrets.token_hex(8)
_OPEN, _CLOSE = f"\x00{_NONCE}<", f">{_NONCE}\x00"
_OPEN_ENCODED, _CLOSE_ENCODED = f'"\\u0000{_NONCE}<', f'>{_NONCE}\\u0000"'


class DecimalJSONEncoder(json.JSONEncoder):
    """``json.JSONEncoder`` (its C speed included) that writes every Decimal as its exact number.

    The standard encoder writes a number only from a float, so a Decimal goes through as a string of its digits
    between two marks, and the marks and the string's quotes are taken out afterwards. ``default`` is kept as the
    fallback for other types."""

    def __init__(self, *, default: Callable[[Any], Any] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self._fallback = default

    def default(self, o: Any) -> Any:
        if isinstance(o, Decimal):
            number = decimal_number(o)
            return str(o) if number is None else _OPEN + number + _CLOSE
        if self._fallback is not None:
            return self._fallback(o)
        return super().default(o)

    def encode(self, o: Any) -> str:
        text = "".join(super().iterencode(o, _one_shot=True))
        if _OPEN_ENCODED in text:
            text = text.replace(_OPEN_ENCODED, "").replace(_CLOSE_ENCODED, "")
        return text

    def iterencode(self, o: Any, _one_shot: bool = False) -> Iterator[str]:
        yield self.encode(o)


class DecimalJSONDecoder(json.JSONDecoder):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("parse_float", Decimal)
        super().__init__(*args, **kwargs)


class DecimalJSONField(models.JSONField):
    """A JSONField whose numbers are written exactly and whose numbers with a fraction are read back as Decimal."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("encoder", DecimalJSONEncoder)
        kwargs.setdefault("decoder", DecimalJSONDecoder)
        super().__init__(*args, **kwargs)

    def get_placeholder(self, value: Any, compiler: Any, connection: Any) -> str:
        # Defining this keeps PostgreSQL bulk inserts off Django 5.2's UNNEST path, where psycopg escapes
        # every JSON document as an array element in Python; measured 2x slower for 100 import items.
        return "%s"


class OrderedJSONField(DecimalJSONField):
    """A DecimalJSONField stored as the JSON text it is written as, so an object's keys read back in their order.

    For configuration whose key order is part of what it means (a simple JSON transform's output keys, a web hook's
    headers, a runtime integration's query parameters, headers and body template): PostgreSQL's jsonb reorders an
    object's keys (shorter first, then bytewise), so the column is text on every database (SQLite keeps its
    JSON_VALID check). Python sees what a JSONField gives (None saved is SQL NULL, as there); the database sees
    text, so the column has no lookups by key (refused on every database, where jsonb would have answered them)."""

    def get_internal_type(self) -> str:
        # A text column to the database (its type, a migration's cast from and to jsonb), JSON to Python.
        return "TextField"

    def db_check(self, connection: Any) -> str | None:
        check = connection.data_type_check_constraints.get("JSONField")  # SQLite: JSON_VALID
        return None if check is None else check % self.db_type_parameters(connection)

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        # The text itself, never the backend's JSON adapter (psycopg's Jsonb would go through jsonb on the way in).
        if not prepared:
            value = self.get_prep_value(value)
        return json.dumps(value, cls=self.encoder)

    def get_transform(self, name: str) -> Any:
        # No key transform (JSONField's fallback for any name): a FieldError, rather than SQL that SQLite's JSON
        # functions would answer and PostgreSQL would refuse on text.
        return models.Field.get_transform(self, name)


def epoch(value: Any) -> float | None:
    """A datetime as Unix seconds with decimals (the spec's timestamps)."""
    return None if value is None else round(value.timestamp(), 3)
