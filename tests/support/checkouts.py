"""POS checkouts in tests: a valid checkout body (a sale or return of given lines, paid by card unless told
otherwise), an exchange of two sales, posting one that must be accepted, and a queue that only collects."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from exports.models import ExportQueue
from tests.support.api import PosApi
from tests.support.tenants import Tenant

CheckoutLine = tuple[str, str | None, int | Decimal, int | Decimal | str]


def _money(value: Decimal, currency: str) -> Decimal:
    places = 0 if currency in ("JPY", "ISK", "KRW") else 2
    return value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)


def json_numbers(value: Any) -> Any:
    """Decimals as JSON numbers (the POS sends numbers; the server parses fractions as Decimal)."""
    if isinstance(value, dict):
        return {k: json_numbers(v) for k, v in value.items()}
    if isinstance(value, list):
        return [json_numbers(v) for v in value]
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    return value


def basket_of(line_items: list[dict[str, Any]], *, vat_rate: Decimal, is_return: bool) -> dict[str, Any]:
    """A sale's basket of ``line_items``: their sums, discounts the base price less the subtotal, one VAT at
    ``vat_rate``."""

    def total(name: str) -> Decimal:
        return sum((Decimal(line[name]) for line in line_items), Decimal(0))

    vat = total("vat_amount")
    return {
        "base_price": total("base_price"),
        "sub_total": total("sub_total"),
        "total": total("total"),
        "total_discounts": total("base_price") - total("sub_total"),
        "total_tax_amount": vat,
        "vat_amount": vat,
        "sales_tax_amount": Decimal(0),
        "is_return": is_return,
        "line_items": line_items,
        "taxes": [{"amount": vat, "rate": vat_rate, "name": "VAT", "type": "vat"}] if line_items else [],
    }


def checkout_body(
    *,
    identifier: str = "co-1",
    register_id: str = "reg-1",
    lines: Sequence[CheckoutLine] = (("p-1", "tops", 2, "100.00"),),
    payments: Sequence[tuple[str, int | Decimal | str]] | None = None,
    is_return: bool = False,
    currency: str = "DKK",
    vat_rate: Decimal | str = "0.25",
    sale_identifier: str | None = None,
    sequence_number: int = 1,
    timestamp: int | Decimal = 1736931900,  # 2025-01-15T09:05:00Z
    timezone: str | None = "Europe/Copenhagen",
    voided: bool = False,
) -> dict[str, Any]:
    """A valid checkout body with one sale (or return) of ``lines`` ``(product_id, group, quantity,
    unit_price)``, prices including VAT at ``vat_rate``. A return negates positive quantities. Without
    ``payments`` the total is paid by card. The sale is ``sale_identifier`` or ``<identifier>-s1``."""
    rate = Decimal(str(vat_rate))
    line_items = []
    for n, (product_id, group, quantity, unit_price) in enumerate(lines, start=1):
        qty = Decimal(str(quantity))
        if is_return and qty > 0:
            qty = -qty
        price = Decimal(str(unit_price))
        amount = _money(qty * price, currency)
        vat = _money(amount * rate / (1 + rate), currency)
        line: dict[str, Any] = {
            "line_item_id": f"li-{n}",
            "id": product_id,
            "quantity": qty,
            "retail_price": amount,  # the line's, before discounts (docs/amounts.md)
            "base_price": amount,
            "sub_total": amount,
            "total": amount,
            "total_tax_amount": vat,
            "vat_amount": vat,
            "sales_tax_amount": Decimal(0),
            "taxes": [{"amount": vat, "rate": rate, "name": "VAT", "type": "vat"}],
        }
        if group is not None:
            line["product_group"] = group
        line_items.append(line)

    basket = basket_of(line_items, vat_rate=rate, is_return=is_return)
    paid = [("card.external", basket["total"])] if payments is None else payments
    body: dict[str, Any] = {
        "identifier": identifier,
        "timing": {"timestamp": timestamp, **({"timezone": timezone} if timezone else {})},
        "source": {"register_id": register_id, "cashier_id": "cashier-7", "cashier_name": "AB"},
        "base_currency_code": currency,
        "payments": [
            {"amount": Decimal(str(amount)), "identifier": f"pay-{n}", "payment_type": kind, "success": True}
            for n, (kind, amount) in enumerate(paid, start=1)
        ],
        "sales": [
            {
                "identifier": sale_identifier or f"{identifier}-s1",
                "sequence_number": sequence_number,
                "basket": basket,
            }
        ],
    }
    if voided:
        body["voided"] = True
    return json_numbers(body)


def exchange_body(*, identifier: str = "co-x") -> dict[str, Any]:
    """A checkout of two sales: a T-shirt bought (300) and one returned (-100); 200 paid by card."""
    sale = checkout_body(identifier=identifier, lines=[("p-2", "tops", 1, 300)])
    ret = checkout_body(identifier=identifier, lines=[("p-1", "tops", 1, 100)], is_return=True)
    sale_part = {**sale["sales"][0], "identifier": f"{identifier}-sale", "payments": sale["payments"]}
    return_part = {
        **ret["sales"][0],
        "identifier": f"{identifier}-return",
        "sequence_number": 2,
        "payments": [{"amount": -100, "identifier": "pay-r", "payment_type": "card.external", "success": True}],
    }
    sale["sales"] = [sale_part, return_part]
    sale["payments"] = [{"amount": 200, "identifier": "pay-1", "payment_type": "card.external", "success": True}]
    return sale


def export_queue(
    tenant: Tenant, entity_type: str, *, trigger: str = "daily", name: str = "", **fields: Any
) -> ExportQueue:
    """An enabled queue that only collects (a daily trigger sends nothing during the test), unless told otherwise."""
    return ExportQueue.objects.create(
        account=tenant.account,
        name=name or f"{entity_type} {trigger}",
        entity_type=entity_type,
        trigger=trigger,
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
        **fields,
    )


def post_ok(pos: PosApi, body: Any) -> dict[str, Any]:
    response = pos.post("checkouts", body)
    assert response.status_code == 201, response.json()
    return response.json()
