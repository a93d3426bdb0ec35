"""Spec-shaped entities for the transform tests: a Sale (and a large one), a register close statement, and
the outbox elements that carry them; rendering them with a transform."""

from __future__ import annotations

import copy
from typing import Any

from exports.transforms.base import Element, RenderContext, Transform

# 2024-03-01 13:05:00 UTC = 14:05 in Copenhagen
SALE_TIMESTAMP = 1709298300.25


def make_sale(identifier: str = "sale-1", **overrides: Any) -> dict[str, Any]:
    """A sale of two 25 % VAT items and one 0 % item, paid by card and cash (with rounding)."""
    sale: dict[str, Any] = {
        "base_currency_code": "DKK",
        "identifier": identifier,
        "sequence_number": 17,
        "voided": False,
        "source": {
            "market_id": "dk",
            "market_name": "Denmark",
            "shop_id": "shop-1",
            "shop_name": "Main street",
            "register_id": "reg-1",
            "register_name": "Register 1",
            "cashier_id": "c-1",
            "cashier_name": "Ann",
        },
        "timing": {
            "timestamp": SALE_TIMESTAMP,
            "timestamp_string": "2024-03-01T14:05:00.250+01:00",
            "timezone": "Europe/Copenhagen",
            "timestamp_date_string": "2024-03-01-14-05",
            "timestamp_week_string": "2024-09",
        },
        "receipt_metadata": {"vat_number": "DK12345678", "shop_address": {"city": "Aarhus"}},
        "summary": {
            "base_price": 130.1,
            "sales_tax_amount": 0,
            "sub_total": 106.1,
            "total": 130.1,
            "total_discounts": 10.0,
            "total_tax_amount": 24.0,
            "vat_amount": 24.0,
            "is_return": False,
            "taxes": [
                {"amount": 24.0, "rate": 0.25, "name": "VAT 25%", "type": "vat"},
                {"amount": 0, "rate": 0, "name": "VAT 0%", "type": "vat"},
            ],
            "line_items": [
                {
                    "line_item_id": "li-1",
                    "id": "p-100",
                    "name": "T-shirt",
                    "barcode": "5701234567890",
                    "quantity": 2,
                    "base_price": 100.0,
                    "retail_price": 100.0,  # the line's, before discounts (docs/amounts.md)
                    "sales_tax_amount": 0,
                    "sub_total": 72.0,
                    "total": 90.0,
                    "total_tax_amount": 18.0,
                    "vat_amount": 18.0,
                    "taxes": [{"amount": 18.0, "rate": 0.25, "name": "VAT 25%", "type": "vat"}],
                    "discounts": [
                        {
                            "amount": 10.0,
                            "discount": {
                                "id": "d-1",
                                "application": {"line_item": "li-1"},
                                "mode": {"manual": True},
                                "type": {"amount": 10},
                            },
                        }
                    ],
                },
                {
                    "line_item_id": "li-2",
                    "id": "p-200",
                    "name": "Socks",
                    "quantity": 1,
                    "base_price": 30.0,
                    "retail_price": 30.0,
                    "sales_tax_amount": 0,
                    "sub_total": 24.0,
                    "total": 30.0,
                    "total_tax_amount": 6.0,
                    "vat_amount": 6.0,
                    "taxes": [{"amount": 6.0, "rate": 0.250, "name": "VAT 25%", "type": "vat"}],
                },
                {
                    "line_item_id": "li-3",
                    "id": "p-300",
                    "name": "Newspaper",
                    "quantity": 1,
                    "base_price": 10.1,
                    "retail_price": 10.1,
                    "sales_tax_amount": 0,
                    "sub_total": 10.1,
                    "total": 10.1,
                    "total_tax_amount": 0,
                    "vat_amount": 0,
                    "taxes": [{"amount": 0, "rate": 0, "name": "VAT 0%", "type": "vat"}],
                },
            ],
        },
        "payments": [
            {"identifier": "pay-1", "payment_type": "card.external", "amount": 100.0, "success": True},
            {"identifier": "pay-2", "payment_type": "cash", "amount": 30.35, "success": True},
            {"identifier": "pay-3", "payment_type": "cash.rounding", "amount": -0.25, "success": True},
            {
                "identifier": "pay-4",
                "payment_type": "card.external",
                "amount": 5.0,
                "success": False,
                "error": "declined",
            },
        ],
    }
    sale.update(overrides)
    return sale


def make_large_sale(identifier: str = "sale-large", line_items: int = 400) -> dict[str, Any]:
    """A wholesale-sized sale: ``line_items`` lines like the T-shirt above (25 % VAT, a manual discount on every
    fifth), with product names in Danish (non-ASCII, so sizes in bytes and in characters differ)."""
    sale = make_sale(identifier)
    first = sale["summary"]["line_items"][0]
    lines = []
    for n in range(line_items):
        line = copy.deepcopy(first)
        line.update(
            line_item_id=f"li-{n}",
            id=f"p-{n % 97}",
            name=f"Økologisk T-shirt, rund hals, str. {'SML'[n % 3]} \u2013 farve {n % 13}",
            barcode=f"57012345{n:05d}",
            variant_id=f"v-{n}",
            product_group="Tøj / Overdele",
            tags=["sommer", "bomuld", f"parti-{n % 10}"],
        )
        if n % 5:
            del line["discounts"]
        lines.append(line)
    sale["summary"]["line_items"] = lines
    return sale


def make_register_close_statement() -> dict[str, Any]:
    return {
        "base_currency_code": "DKK",
        "reconciliation_time": 1709330400.5,
        "sequence_number": 3,
        "source": {"shop_id": "shop-1", "register_id": "reg-1"},
        "timing": {"timestamp": 1709330400500, "timestamp_string": "2024-03-01T22:00:00.500Z", "timezone": "UTC"},
        "comment": '=HYPERLINK("http://evil")',
        "reconciliations": [
            {
                "payment_type_identifier": "cash",
                "currency_code": "DKK",
                "counted": 1520.5,
                "total": 1530.5,
                "depositing": "manual",
                "should_be_reconciled": True,
                "transaction_count": 12,
            },
            {
                "payment_type_identifier": "cash",
                "currency_code": "EUR",
                "counted": 20,
                "total": 20,
                "depositing": "automatic",
                "should_be_reconciled": True,
                "transaction_count": 1,
            },
            {
                "payment_type_identifier": "card.external",
                "currency_code": "DKK",
                "counted": 4200.75,
                "total": 4200.75,
                "depositing": "none",
                "should_be_reconciled": False,
                "transaction_count": 30,
            },
        ],
        "register_summary": {
            "id": "rs-1",
            "cash_total_at_open": 500,
            "cash_drawer_open_count": 14,
            "number_of_aborted_sales": 0,
            "number_of_initiated_sales": 43,
            "voided_count": 1,
            "all": {
                "base_price": 5731.25,
                "margin": 0,
                "margin_total": 0,
                "sub_total": 4585,
                "total": 5731.25,
                "total_discounts": 0,
                "total_tax_amount": 1146.25,
                "count": 42,
                "item_count": 80,
                "tax_summaries": [
                    {"amount": 1146.25, "rate": 0.25, "name": "VAT 25%", "type": "vat"},
                    {"amount": 0, "rate": 0, "name": "VAT 0%", "type": "vat"},
                ],
                "payments": [],
            },
        },
    }


def elements_of(*sales: dict[str, Any]) -> list[Element]:
    return [Element(f"sales/{sale['identifier']}", copy.deepcopy(sale)) for sale in sales]


def rendered_text(transform: Transform, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> str:
    """``config`` validated by ``transform``, then ``elements`` rendered with it, as text."""
    transform.validate(config)
    return transform.render(elements, context, config).content.decode("utf-8")
