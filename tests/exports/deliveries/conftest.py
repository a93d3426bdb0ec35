"""The render context and rendered file every delivery test sends (the servers: tests/support/servers.py)."""

from __future__ import annotations

import datetime as dt

import pytest

from exports.deliveries.base import RenderContext, Rendered


@pytest.fixture
def context() -> RenderContext:
    return RenderContext(
        queue={"id": 7, "name": "sales", "entity_type": "sale", "trigger": "real_time"},
        account={"identifier": "acme", "name": "Acme"},
        now=dt.datetime(2025, 3, 4, 5, 6, 7, tzinfo=dt.UTC),
        delivery_id="0b7c5e0e-delivery-1",
    )


@pytest.fixture
def rendered() -> Rendered:
    return Rendered(content=b"id;total\r\n1;9.50\r\n\x00\xff binary-safe\n", content_type="text/csv", extension="csv")
