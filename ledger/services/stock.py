"""Stock levels and stock events (spec: Stock event)."""

from __future__ import annotations

from collections.abc import Sequence

from accounts.models import Account
from ledger.models import Sale, StockEvent


def record_sale_stock_events(*, account: Account, sales: Sequence[Sale]) -> list[StockEvent]:
    """Spec: Stock event, types ``sale`` and ``return``: move stock for the product lines of these sales.

    Called by the checkout service inside the transaction that stores the sales."""
    return []
