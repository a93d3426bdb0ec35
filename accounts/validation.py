"""Small validators shared by model ``clean()`` methods and the REST API."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

TAX_TYPES = ("vat", "sales_tax")
# Spec: a tax ``{name, rate, type}`` (a product's, a market's defaults), each field's meaning: what the API's
# serializers and the declared bodies publish.
TAX_DESCRIPTIONS = {
    "name": "The tax's name as receipts print it, e.g. `VAT`; not blank.",
    "rate": "The rate as a fraction, from 0 to 1: 0.25 for 25%.",
    "type": "`vat`: included in the prices; `sales_tax`: added on top of them.",
}


def validate_taxes(taxes: Any) -> list[str]:
    """Problems with a list of taxes ``[{"name", "rate", "type"}]``; empty when valid."""
    if not isinstance(taxes, list):
        return ["must be a list of {name, rate, type}"]
    problems: list[str] = []
    for i, tax in enumerate(taxes):
        if not isinstance(tax, dict):
            problems.append(f"[{i}] must be an object")
            continue
        if not isinstance(tax.get("name"), str) or not tax.get("name"):
            problems.append(f"[{i}].name is required")
        rate = tax.get("rate")
        if isinstance(rate, bool) or not isinstance(rate, int | float | Decimal) or not 0 <= rate <= 1:
            problems.append(f"[{i}].rate must be a number between 0 and 1")
        if tax.get("type") not in TAX_TYPES:
            problems.append(f"[{i}].type must be one of {', '.join(TAX_TYPES)}")
    return problems
