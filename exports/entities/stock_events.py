"""Stock events (spec: Events; Stock event). Element key: ``"stock-event-<id>"``.

The JSON form is built from the row's columns (filled in by the stock area).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from exports.entities.base import EntityDefinition
from ledger.models import StockEvent


def element_key(event: StockEvent) -> str:
    return f"stock-event-{event.pk}"


def load(object_ids: Iterable[int]) -> dict[int, dict[str, Any]]:
    raise NotImplementedError


def find(account_id: int, object_id: int | None) -> tuple[int, str] | None:
    rows = StockEvent.objects.filter(account_id=account_id)
    if object_id is not None:
        rows = rows.filter(pk=object_id)
    row = rows.order_by("-pk").first()
    return (row.pk, element_key(row)) if row else None


ENTITY = EntityDefinition(
    code="stock_events", model_label="ledger.StockEvent", element_key="stock-event-<id>", load=load, find=find
)
