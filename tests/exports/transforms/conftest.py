"""Spec-shaped entities (Sale, Register close statement) and a render context for the transform tests."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from exports.transforms.base import Element, RenderContext
from tests.support.clocks import FakeClock
from tests.support.sales import make_register_close_statement, make_sale


@pytest.fixture
def render_context() -> RenderContext:
    return RenderContext(
        queue={"id": "q-1", "name": "Sales to ERP", "entity_type": "sales", "trigger": "cron"},
        account={"identifier": "acme", "name": "Acme Retail"},
        now=datetime(2024, 3, 2, 3, 0, tzinfo=UTC),
        delivery_id="dlv-1",
    )


@pytest.fixture
def sale() -> dict[str, Any]:
    return make_sale()


@pytest.fixture
def sale_element() -> Element:
    return Element("sales/sale-1", make_sale())


@pytest.fixture
def statement_element() -> Element:
    return Element("register_close_statements/3", make_register_close_statement())


@pytest.fixture
def output_limit_1000(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("exports.transforms.common.MAX_OUTPUT_BYTES", 1000)


@pytest.fixture
def render_timeout_50ms(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("exports.transforms.common.RENDER_TIMEOUT_SECONDS", 0.05)


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    clock = FakeClock()
    monkeypatch.setattr("exports.transforms.common.time", clock)
    return clock
