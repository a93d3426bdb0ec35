"""The golden day of ``test_statement.py`` end to end: every sale posted to ``POST /api/v1/pos/checkouts``,
the register opened and closed through the POS API; the stored statement must be the one worked out by hand."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from ledger.models import Expense, RegisterCloseStatement, Sale
from tests.support.checkouts import basket_of, json_numbers
from tests.support.statements import (
    CLOSE_COUNTED,
    DAY,
    EVENT_COUNTS,
    EXPECTED_RECONCILIATIONS,
    EXPECTED_SUMMARY,
    SaleSpec,
)

D = Decimal


def _line_item(spec: SaleSpec, n: int, i: int) -> dict[str, Any]:
    line = spec.lines[i]
    item: dict[str, Any] = {
        "line_item_id": f"li-{i}",
        "id": f"p-{n}-{i}",
        "quantity": line.quantity,
        "retail_price": line.total + line.discount,
        "base_price": line.total + line.discount,
        "sub_total": line.total,
        "total": line.total,
        "total_tax_amount": line.vat_amount,
        "vat_amount": line.vat_amount,
        "sales_tax_amount": D(0),
        "margin_total": line.total - line.vat_amount,
        "taxes": [{"amount": line.vat_amount, "rate": D("0.25"), "name": "VAT", "type": "vat"}],
    }
    if line.margin is not None:
        item["margin"] = line.margin
    if line.product_group:
        item["product_group"] = line.product_group
    if spec.kind == "expense":
        item["behavior"] = {"expense": {"identifier": "coffee", "image_urls": []}}
    return item


def checkout_of(spec: SaleSpec, n: int) -> dict[str, Any]:
    """The checkout a POS posts for one sale of the golden day."""
    items = [_line_item(spec, n, i) for i in range(len(spec.lines))]
    basket = basket_of(items, vat_rate=D("0.25"), is_return=spec.kind == "return")
    payments = []
    for p, pay in enumerate(spec.payments):
        entry: dict[str, Any] = {
            "amount": pay.amount,
            "identifier": f"pay-{n}-{p}",
            "payment_type": pay.payment_type,
            "success": True,
        }
        if pay.foreign_currency:
            entry["foreign_currency"] = pay.foreign_currency
            entry["foreign_currency_amount"] = pay.foreign_currency_amount
        payments.append(entry)
    body: dict[str, Any] = {
        "identifier": f"co-{n}",
        "timing": {"timestamp": 1736931900 + n, "timezone": "UTC"},
        "source": {"register_id": "reg-1"},
        "base_currency_code": "DKK",
        "payments": [] if spec.voided else payments,
        "sales": [{"identifier": f"co-{n}-s1", "sequence_number": n, "basket": basket}],
    }
    if spec.voided:
        body["voided"] = True
    return body


def test_the_golden_day_posted_through_the_pos_api_closes_into_the_statement_worked_out_by_hand(pos, tenant, register):
    Expense.objects.create(account=tenant.account, expense_id="coffee", name="Coffee")
    assert pos.post("registers/reg-1/open", {"cash_total_at_open": 1000}).status_code == 201
    for n, spec in enumerate(DAY, start=1):
        response = pos.post("checkouts", json_numbers(checkout_of(spec, n)))
        assert response.status_code == 201, response.json()
    assert Sale.objects.filter(voided=True).count() == 1

    response = pos.post(
        "registers/reg-1/close",
        {"counted": json_numbers(CLOSE_COUNTED), "comment": "2.50 short", "event_counts": EVENT_COUNTS},
    )

    assert response.status_code == 201, response.json()
    document = RegisterCloseStatement.objects.get(pk=response.json()["id"]).document
    summary = dict(document["register_summary"])
    expected = dict(EXPECTED_SUMMARY)
    assert summary.pop("opened_at") > 0  # opened now, by the POS; the golden day fixes its own clock
    expected.pop("opened_at")
    assert summary == expected
    assert document["reconciliations"] == EXPECTED_RECONCILIATIONS
    assert document["comment"] == "2.50 short"
