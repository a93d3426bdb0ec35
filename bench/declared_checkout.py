"""Prototype for bench/validation.py: the checkout (ledger.definitions.CHECKOUT) declared with core.declare.

The body classes of the hot path (checkout, sale part, sale summary, line item) are declared; the leaves they
share with other bodies (discount summary, behavior, taxes, timing, source) are the ledger's nodes, and the
accounting rules are the ledger's functions, attached with ``rule``: the same checks, declared as classes.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from bench import harness
from core.declare import Body, optional, rule
from core.nodes import Arr, Bool, Currency, Int, L10nString, Url
from ledger import definitions as ledger

AMOUNT, ID, TEXT = ledger.AMOUNT, ledger.ID, ledger.TEXT


class Amounts(Body):
    """What a sale's summary and each of its line items both state (spec: Sale)."""

    base_price = sales_tax_amount = sub_total = total = total_tax_amount = vat_amount = AMOUNT
    comment = optional(TEXT)
    margin = optional(AMOUNT)
    margin_total = optional(AMOUNT)


class SaleLineItem(Amounts):
    """Spec: Sale, line item."""

    retail_price = AMOUNT
    quantity = AMOUNT
    line_item_id = ID
    barcode = optional(ID)
    cost_price = optional(AMOUNT)
    ecom_id = optional(ID)
    id = optional(ID)
    image_url = optional(Url())
    product_group = optional(ID)
    variant_id = optional(ID)
    name = optional(L10nString())
    behavior = optional(ledger.Behavior())
    dimensions = optional(Arr(ledger.DIMENSION, max_items=50))
    discounts = optional(Arr(ledger.DISCOUNT_SUMMARY, max_items=100))
    tags = optional(Arr(ID, max_items=100))
    taxes = optional(Arr(ledger.TAX_SUMMARY, max_items=20))


class SaleSummary(Amounts):
    """Spec: Sale, summary."""

    total_discounts = AMOUNT
    return_reference = optional(ID)
    customer = optional(ledger.SALE_CUSTOMER)
    is_return = Bool()
    line_items = Arr(SaleLineItem, max_items=ledger.MAX_LINE_ITEMS)
    purchase_type = optional(ledger.SALE_SUMMARY_FIELDS["purchase_type"])
    taxes = Arr(ledger.TAX_SUMMARY, max_items=100)

    sale_or_return = rule(ledger._sale_or_return)
    expense = rule(ledger._expense)
    line_totals = rule(ledger._line_totals)
    summary_totals = rule(ledger._summary_totals)
    shipping_per_ecom_group = rule(ledger._shipping_per_ecom_group)


class SalePart(Body):
    identifier = ID
    sequence_number = Int(minimum=0, maximum=ledger.MAX_SEQUENCE_NUMBER)
    basket = SaleSummary
    fiscal_rules_data = optional(ledger.AnyValue())
    payments = optional(ledger.PAYMENTS)


class Checkout(Body):
    """Spec: Checkout."""

    identifier = ID
    voided = optional(Bool())
    timing = ledger.TIMING
    source = ledger.SOURCE
    base_currency_code = Currency()
    payments = ledger.PAYMENTS
    receipt_metadata = optional(ledger.RECEIPT_METADATA)
    sales = Arr(SalePart, min_items=1, max_items=ledger.MAX_SALES_PER_CHECKOUT)

    one_return_at_most = rule(ledger._one_return_at_most)
    unique_sale_identifiers = rule(ledger._unique_sale_identifiers)
    payments_cover_totals = rule(ledger._payments_cover_totals)


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
            **harness.line_amounts(amount, vat),
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
