"""Order reads. Every function takes the account first."""

from __future__ import annotations

from typing import Any, TypedDict, Unpack

from django.db.models import Prefetch, QuerySet

from accounts.models import Account, StockLocation
from core.selectors import filter_given
from orders.models import ExternalOrder, IncomingOrder, OrderStateChange, OutgoingOrder

_ORDER_MODELS: dict[str, type[IncomingOrder] | type[ExternalOrder]] = {
    "incoming_order": IncomingOrder,
    "external_order": ExternalOrder,
}


def used_order_identifiers(
    *, account: Account, kind: str, stock_location: StockLocation, identifiers: set[str]
) -> QuerySet[Any, str]:
    """Which of these identifiers already name an order of this kind on the stock location: a query of the
    identifiers, which a caller may combine with its own (``union``) to ask in one round trip."""
    model = _ORDER_MODELS[kind]
    return model.objects.filter(
        account=account, stock_location=stock_location, order_identifier__in=identifiers
    ).values_list("order_identifier", flat=True)


# --- Back-office REST API (/api/v1/) ------------------------------------------------------------


def _history() -> Prefetch:
    # One query for the histories of a whole page of orders, oldest change first.
    return Prefetch("state_changes", queryset=OrderStateChange.objects.order_by("created_at", "id"))


class OrderFilters(TypedDict, total=False):
    """The optional filters of the order lists; ``stock_location`` is the stock location's identifier (an
    external order has no ``state``)."""

    stock_location: str | None
    state: str | None
    order_identifier: str | None


def _filtered(queryset: QuerySet, filters: OrderFilters) -> QuerySet:
    queryset = filter_given(queryset, filters, lookups={"stock_location": "stock_location__identifier"})
    return queryset.order_by("-created_at", "-id")


def incoming_orders(*, account: Account, **filters: Unpack[OrderFilters]) -> QuerySet[IncomingOrder]:
    """Incoming orders of the account, newest first, with their state history."""
    queryset = (
        IncomingOrder.objects.filter(account=account).select_related("stock_location").prefetch_related(_history())
    )
    return _filtered(queryset, filters)


def incoming_order(*, account: Account, pk: int) -> IncomingOrder:
    """One incoming order of the account with its state history (after a change, for the answer)."""
    return incoming_orders(account=account).get(pk=pk)


def outgoing_order(*, account: Account, pk: int) -> OutgoingOrder:
    """One outgoing order of the account with its receiving incoming order and state history."""
    return outgoing_orders(account=account).get(pk=pk)


def external_orders(
    *, account: Account, stock_location: str | None = None, order_identifier: str | None = None
) -> QuerySet[ExternalOrder]:
    """External orders of the account, newest first (they have no state)."""
    queryset = ExternalOrder.objects.filter(account=account).select_related("stock_location")
    return _filtered(queryset, {"stock_location": stock_location, "order_identifier": order_identifier})


def outgoing_orders(*, account: Account, **filters: Unpack[OrderFilters]) -> QuerySet[OutgoingOrder]:
    """Outgoing orders of the account, newest first, with destination and state history."""
    queryset = (
        OutgoingOrder.objects.filter(account=account)
        .select_related("stock_location", "destination", "incoming_order__stock_location")
        .prefetch_related(_history())
    )
    return _filtered(queryset, filters)
