"""Order reads. Every function takes the account first."""

from __future__ import annotations

from accounts.models import Account, StockLocation
from orders.models import ExternalOrder, IncomingOrder

_ORDER_MODELS = {"incoming_order": IncomingOrder, "external_order": ExternalOrder}


def used_order_identifiers(
    *, account: Account, kind: str, stock_location: StockLocation, identifiers: set[str]
) -> set[str]:
    """Which of these identifiers already name an order of this kind on the stock location."""
    if not identifiers:
        return set()
    model = _ORDER_MODELS[kind]
    return set(
        model.objects.filter(
            account=account, stock_location=stock_location, order_identifier__in=identifiers
        ).values_list("order_identifier", flat=True)
    )
