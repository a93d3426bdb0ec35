"""The worked line of docs/amounts.md, posted as it is written there, with every figure of its table checked in the
stored sale, its statement rows and the register close statement."""

from __future__ import annotations

import json
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from ledger.models import RegisterCloseStatement, Sale, SaleLine
from tests.support.api import PosApi
from tests.support.register_day import basket, checkout

pytestmark = pytest.mark.usefixtures("register")
D = Decimal
DOC = Path(__file__).resolve().parents[2] / "docs" / "amounts.md"


def worked_line() -> dict[str, Any]:
    text = DOC.read_text()
    match = re.search(r"<!-- worked-line -->\s*```json\n(.*?)```", text, re.S)
    assert match, "docs/amounts.md has the worked line"
    return json.loads(match.group(1), parse_float=Decimal)


@pytest.fixture
def posted(pos: PosApi) -> dict[str, Any]:
    body = checkout("co-1", 1, basket([worked_line()]), [("card.external", "359.90", {})], minutes=0)
    response = pos.post("checkouts", body)
    assert response.status_code == 201, response.json()
    return response.json()


def test_the_worked_line_is_stored_as_sent_without_warnings(posted: dict[str, Any]) -> None:
    assert posted["warnings"] == []
    [line] = Sale.objects.get().document["summary"]["line_items"]
    assert line["quantity"] == 2
    assert (line["retail_price"], line["sub_total"], line["total"]) == (D("399.90"), D("359.90"), D("359.90"))
    assert (line["vat_amount"], line["total_tax_amount"], line["cost_price"]) == (D("71.98"), D("71.98"), D(120))


def test_the_worked_lines_derived_figures(posted: dict[str, Any]) -> None:
    [line] = Sale.objects.get().document["summary"]["line_items"]

    assert line["retail_price"] - line["sub_total"] == D(40) == line["discounts"][0]["amount"]
    assert line["retail_price"] / line["quantity"] == D("199.95")  # unit price
    assert line["cost_price"] / line["quantity"] == D(60)  # unit cost
    assert line["retail_price"] == 2 * D("199.95")
    assert line["vat_amount"] == (line["sub_total"] * D("0.25") / D("1.25")).quantize(D("0.01"))


def test_the_worked_lines_margins_are_amounts(posted: dict[str, Any]) -> None:
    row = SaleLine.objects.get()

    assert (row.margin_total, row.margin) == (D("287.92"), D("167.92"))
    assert row.margin_total - row.margin == D(120)
    assert row.total_discounts == D(40)


def test_the_worked_lines_statement_reads_its_cost_as_margin_total_less_margin(
    pos: PosApi, posted: dict[str, Any]
) -> None:
    response = pos.post("registers/reg-1/close", {"counted": [{"payment_type_identifier": "cash", "counted": 0}]})
    assert response.status_code in (200, 201), response.json()

    sales = RegisterCloseStatement.objects.get().document["register_summary"]["sales"]
    assert (sales["margin_total"], sales["margin"]) == (D("287.92"), D("167.92"))
    assert sales["margin_total"] - sales["margin"] == D(120)
    assert sales["total_discounts"] == sales["base_price"] - sales["sub_total"] == D(40)
