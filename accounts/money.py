"""Currencies and money: ISO 4217 data (the ``iso4217`` package), Decimal amounts."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from functools import cache

from iso4217 import Currency


@cache
def _currencies() -> dict[str, Currency]:
    return {c.code: c for c in Currency}


def is_currency_code(code: object) -> bool:
    return isinstance(code, str) and code in _currencies()


def minor_unit(code: str) -> int:
    """Number of decimal places of the currency's minor unit (DKK 2, JPY 0)."""
    exponent = _currencies()[code].exponent
    return 2 if exponent is None else int(exponent)


def quantize(amount: Decimal, code: str) -> Decimal:
    """Round half-up to the currency's minor unit."""
    return amount.quantize(Decimal(1).scaleb(-minor_unit(code)), rounding=ROUND_HALF_UP)
