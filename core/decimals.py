"""Exact amounts in JSON a partner produced: one rule for every app that takes such JSON in."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any


def floats_as_decimals(value: Any) -> Any:
    """Floats (a JSON parser without ``parse_float=Decimal``, or a transform) as Decimals through their text,
    so no float reaches an amount; everything else as it is."""
    if isinstance(value, float):
        return Decimal(str(value))
    if isinstance(value, Mapping):
        return {k: floats_as_decimals(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [floats_as_decimals(v) for v in value]
    return value
