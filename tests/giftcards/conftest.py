"""Fixtures of the gift card and customer account tests: a stored, paid sale that sells a gift card."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from accounts.models import Register
from tests.support.api import PosApi
from tests.support.checkouts import checkout_body


@pytest.fixture
def sell_giftcard(pos: PosApi, register: Register) -> Callable[..., str]:
    """Posts a checkout whose sale sells gift card ``code`` (a line with ``behavior.giftcard``); returns the
    sale identifier."""

    def sell(code: str, *, identifier: str = "co-gc", voided: bool = False, behavior: Any = None) -> str:
        body = checkout_body(identifier=identifier, lines=[("giftcard", None, 1, 500)], voided=voided)
        line = body["sales"][0]["basket"]["line_items"][0]
        line["behavior"] = behavior or {
            "giftcard": {"code": code, "integration_id": "reference", "payment_type_id": "giftcard.integration"}
        }
        # A gift card is not taxed when sold: no VAT on the line or the basket.
        basket = body["sales"][0]["basket"]
        for item in (line, basket):
            item["total_tax_amount"] = item["vat_amount"] = 0
        line["taxes"] = basket["taxes"] = []
        response = pos.post("checkouts", body)
        assert response.status_code == 201, response.json()
        sale_id: str = body["sales"][0]["identifier"]
        return sale_id

    return sell
