"""A register day in the shape the platform's POS sends it (docs/amounts.md): multi-line sales with
discounts, a B2B customer, cash in two currencies, a return, an expense, a voided sale and the close.

Amounts follow the platform's tools: a line's ``retail_price`` and ``cost_price`` are the line's (quantity x unit),
``sub_total`` is after discounts with VAT included (25 %), so a line's discount is ``retail_price - sub_total``;
``margin_total`` is the net amount and ``margin`` the profit. Numbers are JSON numbers, as the apps send them.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from tests.support.checkouts import basket_of, json_numbers

D = Decimal
CENT = D("0.01")
RATE = D("0.25")
TIMESTAMP = 1736931900  # 2025-01-15T09:05:00Z
TSHIRT_NAME = {"da": "T-shirt basis", "en": "Basic T-shirt"}
SOCKS_NAME = {"en": "Socks"}  # no Danish name: a Danish export falls back


def _money(value: Decimal) -> Decimal:
    return value.quantize(CENT, rounding=ROUND_HALF_UP)


def line(
    line_item_id: str,
    product_id: str | None,
    name: Any,
    quantity: int,
    unit_price: str,
    *,
    discount: str = "0",
    unit_cost: str | None = None,
    group: str | None = "clothing",
    **extra: Any,
) -> dict[str, Any]:
    """One line: ``quantity`` units at ``unit_price`` (VAT included) less ``discount`` for the whole line."""
    retail_price = _money(D(unit_price) * quantity)
    off = D(discount) if quantity > 0 else -D(discount)
    sub_total = retail_price - off
    vat = _money(sub_total * RATE / (1 + RATE))
    item: dict[str, Any] = {
        "line_item_id": line_item_id,
        "quantity": quantity,
        "retail_price": retail_price,
        "base_price": retail_price,
        "sub_total": sub_total,
        "total": sub_total,
        "vat_amount": vat,
        "sales_tax_amount": D(0),
        "total_tax_amount": vat,
        "taxes": [{"amount": vat, "rate": RATE, "name": "VAT", "type": "vat"}],
    }
    if product_id is not None:
        item["id"] = product_id
    if name is not None:
        item["name"] = name
    if group is not None:
        item["product_group"] = group
    if unit_cost is not None:
        item["cost_price"] = _money(D(unit_cost) * quantity)
    if off:
        item["discounts"] = [
            {
                "amount": off,
                "discount": {
                    "id": f"{line_item_id}-manual",
                    "application": {"line_item": line_item_id},
                    "mode": {"manual": True},
                    "type": {"amount": D(discount)},
                },
            }
        ]
    item.update(extra)
    return item


def basket(lines: list[dict[str, Any]], *, is_return: bool = False, **extra: Any) -> dict[str, Any]:
    return {**basket_of(lines, vat_rate=RATE, is_return=is_return), **extra}


def checkout(
    identifier: str,
    sequence_number: int,
    sale: dict[str, Any],
    payments: list[tuple[str, str, dict[str, Any]]],
    *,
    minutes: int,
    voided: bool = False,
) -> dict[str, Any]:
    body: dict[str, Any] = {
        "identifier": identifier,
        "timing": {"timestamp": TIMESTAMP + 60 * minutes, "timezone": "Europe/Copenhagen"},
        "source": {"register_id": "reg-1", "cashier_id": "cashier-7", "cashier_name": "AB"},
        "base_currency_code": "DKK",
        "payments": [
            {"identifier": f"{identifier}-pay-{n}", "payment_type": kind, "amount": D(amount), "success": True, **more}
            for n, (kind, amount, more) in enumerate(payments, start=1)
        ],
        "sales": [{"identifier": f"{identifier}-s1", "sequence_number": sequence_number, "basket": sale}],
    }
    if voided:
        body["voided"] = True
    return json_numbers(body)


B2B_CUSTOMER = {
    "identifier": "C-1001",
    "name": "Hansen ApS",
    "street": "Vestergade 1",
    "city": "Aarhus",
    "postal_code": "8000",
    "country_code": "DK",
    "organization_number": "DK12345678",
}


def register_day() -> list[dict[str, Any]]:
    """The day's checkouts, in the order the register posts them."""
    tshirts = line(
        "li-1",
        "tshirt",
        TSHIRT_NAME,
        2,
        "199.95",
        discount="40.00",
        unit_cost="60.00",
        # Sent by the POS, in the platform's meaning: the net amount, and the profit on it.
        margin_total=D("287.92"),  # 359.90 - 71.98 VAT
        margin=D("167.92"),  # 287.92 - 120.00 cost
    )
    socks = line("li-2", "socks", SOCKS_NAME, 3, "49.95", discount="49.95", unit_cost="15.00", group="accessories")
    cap = line("li-1", "cap", {"da": "Kasket", "en": "Cap"}, 1, "150.00", unit_cost="50.00", group="accessories")
    returned = line("li-1", "tshirt", TSHIRT_NAME, -1, "199.95", discount="20.00", unit_cost="60.00")
    coffee = line(
        "li-1",
        None,
        {"da": "Kaffe", "en": "Coffee"},
        1,
        "-40.00",
        group=None,
        behavior={"expense": {"identifier": "coffee", "image_urls": []}},
    )
    return [
        # A B2B sale of two lines in two product groups with discounts, paid on two cards.
        checkout(
            "co-1",
            1,
            basket([tshirts, socks], customer=B2B_CUSTOMER),
            [("card.external", "400.00", {}), ("card.external", "59.80", {})],
            minutes=0,
        ),
        # A cap paid in cash: 10 EUR (74.50 DKK) and 80 DKK, 4.50 DKK back.
        checkout(
            "co-2",
            2,
            basket([cap]),
            [
                ("cash", "74.50", {"foreign_currency": "EUR", "foreign_currency_amount": D("10.00")}),
                ("cash", "80.00", {}),
                ("cash", "-4.50", {}),
            ],
            minutes=10,
        ),
        # One T-shirt of co-1 back, with its half of the discount, refunded to the card.
        checkout(
            "co-3",
            3,
            basket([returned], is_return=True, return_reference="co-1-s1"),
            [("card.external", "-179.95", {})],
            minutes=20,
        ),
        # Coffee for the shop, paid from the drawer.
        checkout("co-4", 4, basket([coffee]), [("cash", "-40.00", {})], minutes=30),
        # A sale voided during payment.
        checkout("co-5", 5, basket([dict(cap, line_item_id="li-1")]), [], minutes=40, voided=True),
    ]


# Cash in the drawer at the close: 80 - 4.50 - 40 DKK, and the 10 EUR.
CLOSE_BODY: dict[str, Any] = {
    "identifier": "close-1",
    "counted": [
        {"payment_type_identifier": "cash", "currency_code": "DKK", "counted": 35.5},
        {"payment_type_identifier": "cash", "currency_code": "EUR", "counted": 10},
    ],
}
