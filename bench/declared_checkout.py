"""The checkout bench/validation.py times: a valid checkout of 1,000 line items.

The declaration it is validated against is ``ledger.bodies.checkouts.Checkout``; docs/notes/declared.md compares it
with a hand-written tree.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from bench import harness


def large_checkout(lines: int = 1000) -> dict[str, Any]:
    """A valid checkout of one sale of ``lines`` line items (VAT 25%, a discount on every tenth line), as the
    bounded parser hands it over: fractions Decimal, whole numbers int."""
    items = []
    for n in range(lines):
        price = Decimal("99.95") + n % 7
        quantity = 1 + n % 3
        amount = price * quantity
        vat = (amount / 5).quantize(Decimal("0.01"))
        line: dict[str, Any] = {
            "line_item_id": f"li-{n}",
            "id": f"p-{n % 50}",
            "barcode": f"57012345{n:05d}",
            "name": {"da": "Trøje", "en": "Sweater"},
            "product_group": "tops",
            "quantity": quantity,
            **harness.line_amounts(amount, vat),  # the line's (docs/amounts.md)
            "tags": ["wool", "winter"],
            "taxes": [{"amount": vat, "rate": 25, "name": "VAT", "type": "vat"}],
        }
        if n % 10 == 0:
            line["discounts"] = [
                {
                    "amount": 0,
                    "discount": {
                        "id": "winter",
                        "name": "Winter",
                        "application": {"line_item": f"li-{n}"},
                        "mode": {"manual": True},
                        "type": {"percentage": 0},
                    },
                }
            ]
        items.append(line)

    def total(name: str) -> Decimal:
        return sum((Decimal(line[name]) for line in items), Decimal(0))

    vat_total = total("vat_amount")
    basket = {
        "base_price": total("base_price"),
        "sub_total": total("sub_total"),
        "total": total("total"),
        "total_discounts": 0,
        "total_tax_amount": vat_total,
        "vat_amount": vat_total,
        "sales_tax_amount": 0,
        "is_return": False,
        "line_items": items,
        "taxes": [{"amount": vat_total, "rate": 25, "name": "VAT", "type": "vat"}],
    }
    return {
        "identifier": "co-large",
        "timing": {"timestamp": 1736931900, "timezone": "Europe/Copenhagen"},
        "source": {"register_id": "reg-1", "cashier_id": "cashier-7"},
        "base_currency_code": "DKK",
        "payments": [{"amount": basket["total"], "identifier": "pay-1", "payment_type": "card", "success": True}],
        "sales": [{"identifier": "co-large-s1", "sequence_number": 1, "basket": basket}],
    }
