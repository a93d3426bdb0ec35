"""Fixtures of the gift card and customer account tests: the POS client (with GET), the reference
integrator and a stored, paid sale that sells a gift card."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from accounts.models import Register
from tests.conftest import Tenant
from tests.integrations.conftest import allow_loopback, configure, reference
from tests.ledger.conftest import PosApi, error_fields, register
from tests.ledger.test_checkouts import checkout_body


class Pos(PosApi):
    """The ledger's PosApi plus GET with query parameters next to the credentials."""

    def get(self, path: str, **params: str) -> Response:
        extra = f"&{urlencode(params)}" if params else ""
        return self.client.get(self.url(path) + extra)


@pytest.fixture
def pos(client: APIClient, tenant: Tenant) -> Pos:
    return Pos(client, tenant)


@pytest.fixture
def sell_giftcard(pos: Pos, register: Register) -> Callable[..., str]:
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


__all__ = ["allow_loopback", "configure", "error_fields", "reference", "register"]


def missing_once(lookup: Callable[..., Any]) -> Callable[..., Any]:
    """``lookup`` that finds nothing the first time: the check before a pay's insert misses the pay already
    recorded, as a concurrent retry's check does, so the insert meets the unique constraint."""
    calls = iter([True])

    def lookup_missing_once(**keywords: Any) -> Any:
        return None if next(calls, False) else lookup(**keywords)

    return lookup_missing_once
