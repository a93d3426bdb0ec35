"""The outbox: how a domain app offers the entities it creates to whatever carries them outward.

A domain app (ledger, orders) calls ``offer`` inside the transaction that creates its entities; the exports app
registers itself as a sink in its ``AppConfig.ready`` and writes its outbox rows (export items and deliveries)
in that same transaction, so a rolled-back entity exports nothing and a committed one is never lost. The domain
never imports exports; exports imports the domain (dependencies in one direction:
the layers in docs/architecture.md).

Entity types are the spec's ("Events"), enumerated here once (``EntityType``) so both sides spell them the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from django.db import connection, models
from django.utils.translation import gettext_lazy as _


class EntityType(models.TextChoices):
    """The eight exportable entity types (spec: Events, Exportable entities): the one list of their codes, which
    the domain apps offer their entities under and the exports app stores, registers and documents."""

    CHECKOUTS = "checkouts", _("Checkouts")
    SALES = "sales", _("Sales")
    REGISTER_CLOSE_STATEMENTS = "register_close_statements", _("Register Close Statements")
    PRODUCT_EDIT_EVENTS = "product_edit_events", _("Product Edit Events")
    NEWSLETTER_SIGNUPS = "newsletter_signups", _("Newsletter Signups")
    STOCK_EVENTS = "stock_events", _("Stock Events")
    INCOMING_ORDER_STATE_CHANGES = "incoming_order_state_changes", _("Incoming Order State Changes")
    OUTGOING_ORDERS = "outgoing_orders", _("Outgoing Orders")


@dataclass(frozen=True)
class Entry:
    """One entity offered: its row, its element key, where it happened (for queue filters)."""

    object_id: int
    element_key: str
    stock_location_id: int | None = None
    stock_event_type: str | None = None


class Sink(Protocol):
    def __call__(self, *, account: Any, offers: Mapping[str, Sequence[Entry]], configuration: Any = None) -> int: ...


class Reader(Protocol):
    """A sink's configuration for an account as one column (a scalar subquery) of a query someone else runs."""

    def __call__(self, *, account: Any) -> Any: ...


_sinks: list[Sink] = []
_readers: list[Reader | None] = []  # each sink's, at its index


def register(sink: Sink, *, reader: Reader | None = None) -> None:
    """Called by an app that carries entities outward, in its ``AppConfig.ready``; registering twice is harmless.
    ``reader``: how the sink's configuration is read along with a caller's own query (``read_along``)."""
    if sink not in _sinks:
        _sinks.append(sink)
        _readers.append(reader)


def _column(n: int) -> str:
    return f"outbox_configuration_{n}"


def read_along(*, account: Any) -> dict[str, Any]:
    """Annotations for a query the caller runs anyway in the transaction that will offer entities (a checkout's
    lock of its register period): every sink's configuration for the account, read by that query. Pass the row it
    returns to ``offer_all(read_with=...)`` and offering costs no read of its own."""
    return {_column(n): reader(account=account) for n, reader in enumerate(_readers) if reader is not None}


def offer(*, account: Any, entity_type: str, entries: Sequence[Entry]) -> int:
    """Offer entities to every registered sink. Must run inside the transaction that creates them. Returns the
    number of outbox rows written."""
    return offer_all(account=account, offers={entity_type: entries})


def offer_all(*, account: Any, offers: Mapping[str, Sequence[Entry]], read_with: Any = None) -> int:
    """``offer`` for entities of several types at once (a checkout, its sales and their stock events): a sink
    handles them together, so their outbox rows cost a fixed number of queries, not a few per type. ``read_with``:
    a row annotated with ``read_along`` in this transaction (without its annotations, each sink reads its own)."""
    for entity_type in offers:
        if entity_type not in EntityType.values:
            raise ValueError(f"unknown entity type {entity_type!r}")
    if not connection.in_atomic_block:
        raise RuntimeError("core.outbox.offer must run inside the transaction that creates the entity")
    offered = {entity_type: entries for entity_type, entries in offers.items() if entries}
    if not offered:
        return 0
    return sum(
        sink(account=account, offers=offered, configuration=getattr(read_with, _column(n), None))
        for n, sink in enumerate(_sinks)
    )
