"""Stock levels and stock events (spec: Stock event; Sale, line items; Events, Stock Events).

Every move of stock is a ``StockEvent`` and changes one ``StockLevel`` (stock location, product, variant).
All writes go through ``apply_stock_moves``, which takes row locks on the levels it touches in one stable
order (stock location, product, variant), so two concurrent sales of one product never lose an update and
two requests touching the same products in any order cannot deadlock. Stock may go negative: a shop sells
what is on the shelf even when the books say otherwise, and a later count corrects it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts import selectors as account_selectors
from accounts.models import Account, StockLocation
from core import outbox
from core.errors import InvalidInput
from ledger.models import Sale, SaleKind, StockEvent, StockEventType, StockLevel
from ledger.outbox import stock_event_key

# Line items that move no goods of the shop's own stock (decided): gift cards and vouchers sold or used,
# expenses, deposits to a customer account, and container deposits (the deposit is a price rule, not an item).
NON_STOCK_BEHAVIORS = frozenset(
    {
        "giftcard",
        "voucher",
        "giftcard_use",
        "voucher_use",
        "expense",
        "customer_account_deposit",
        "container_deposit",
    }
)
BATCH_SIZE = 500
QUANTITY_DIGITS, QUANTITY_PLACES = 20, 6  # StockLevel.quantity

StockKey = tuple[int, str, str]  # (stock location id, product id, variant id or "")


@dataclass(frozen=True)
class StockMove:
    """One stock event to record: ``adjustment`` or ``new_stock_value`` (exactly one) on one item."""

    stock_location: StockLocation
    product_id: str
    variant_id: str
    type: str
    timestamp: datetime
    adjustment: Decimal | None = None
    new_stock_value: Decimal | None = None
    sale_id: str = ""
    stock_count_id: str = ""
    identifier: str = ""  # the sender's, optional: a move whose identifier is recorded already is a replay

    @property
    def key(self) -> StockKey:
        return (self.stock_location.pk, self.product_id, self.variant_id)


def apply_stock_moves(*, account: Account, moves: Sequence[StockMove], offer: bool = True) -> list[StockEvent]:
    """Spec: Stock event. Record the moves in the order given: lock (creating at 0 where missing) the levels
    they touch, apply them, store the events and put them into the account's stock event export queues (unless
    ``offer`` is false: then the caller offers them with its own entities, ``stock_event_entries``).

    A stock count reset stores the level it replaced as ``stock_count_expected`` and the difference as
    ``stock_count_diff``. A move carrying an ``identifier`` already recorded (by an earlier request, or earlier
    in this one) is a replay: it changes nothing and its stored event stands in its place in the answer, so a
    sender may repeat a request whose answer it lost. Runs in the caller's transaction when there is one."""
    if not moves:
        return []
    try:
        return _apply(account=account, moves=moves, offer=offer)
    except IntegrityError:
        # Another request recorded one of these identifiers meanwhile: this time it is a replay.
        if not any(move.identifier for move in moves):
            raise
        return _apply(account=account, moves=moves, offer=offer)


def stock_event_entries(events: Iterable[StockEvent]) -> list[outbox.Entry]:
    """The outbox entries of stored stock events."""
    return [
        outbox.Entry(
            object_id=event.pk,
            element_key=stock_event_key(event),
            stock_location_id=event.stock_location_id,
            stock_event_type=event.type,
        )
        for event in events
    ]


def _apply(*, account: Account, moves: Sequence[StockMove], offer: bool) -> list[StockEvent]:
    wanted = {move.identifier for move in moves if move.identifier}
    # A savepoint only where the caller retries (identifiers recorded meanwhile); moves without identifiers
    # fail with the caller's transaction, and two statements fewer per checkout.
    with transaction.atomic(savepoint=bool(wanted)):
        recorded: dict[str, StockEvent] = (
            {e.identifier: e for e in StockEvent.objects.filter(account=account, identifier__in=wanted)}
            if wanted
            else {}
        )
        fresh: list[StockMove] = []
        seen = set(recorded)
        for move in moves:
            if move.identifier:
                if move.identifier in seen:
                    continue
                seen.add(move.identifier)
            fresh.append(move)
        now = timezone.now()
        added = _added_up(fresh)
        levels = _locked_levels(account=account, added=added, now=now)
        events: list[StockEvent] = []
        for move in fresh:
            level = levels[move.key]
            event = StockEvent(
                account=account,
                identifier=move.identifier,
                stock_location=move.stock_location,
                product_id=move.product_id,
                variant_id=move.variant_id,
                type=move.type,
                adjustment=move.adjustment,
                new_stock_value=move.new_stock_value,
                sale_id=move.sale_id,
                timestamp=move.timestamp,
            )
            events.append(event)
            if added[move.key] is not None:
                continue  # added up in the locking statement
            before = level.quantity
            if move.adjustment is not None:
                level.quantity = before + move.adjustment
            else:
                assert move.new_stock_value is not None
                level.quantity = move.new_stock_value
            if move.type == StockEventType.STOCK_COUNT_RESET:
                event.stock_count_id = move.stock_count_id
                event.stock_count_expected = before
                event.stock_count_diff = level.quantity - before
            level.updated_at = now
        moved_one_by_one = [levels[key] for key, total in added.items() if total is None]
        if moved_one_by_one:
            StockLevel.objects.bulk_update(moved_one_by_one, ["quantity", "updated_at"], batch_size=BATCH_SIZE)
        StockEvent.objects.bulk_create(events, batch_size=BATCH_SIZE)
        if offer:
            outbox.offer(
                account=account, entity_type=outbox.EntityType.STOCK_EVENTS, entries=stock_event_entries(events)
            )
    if not wanted:
        return events
    recorded.update((event.identifier, event) for event in events if event.identifier)
    anonymous = iter([event for event in events if not event.identifier])
    return [recorded[move.identifier] if move.identifier else next(anonymous) for move in moves]


def _added_up(moves: Iterable[StockMove]) -> dict[StockKey, Decimal | None]:
    """Per item, the sum of its adjustments; None for an item with a reset among its moves, which is applied move
    by move (a reset needs the level it replaces)."""
    added: dict[StockKey, Decimal | None] = {}
    for move in moves:
        total = added.get(move.key, Decimal(0))
        added[move.key] = None if total is None or move.adjustment is None else total + move.adjustment
    return added


def _locked_levels(
    *, account: Account, added: dict[StockKey, Decimal | None], now: datetime
) -> dict[StockKey, StockLevel]:
    """The levels of these items, locked for the transaction, as they are after adding ``added``'s sums.

    One ``INSERT ... ON CONFLICT DO UPDATE ... RETURNING`` per BATCH_SIZE items, rows in key order: it creates a
    missing level (two first sales of a new item both go on, the second waiting for the first's row instead of
    failing), takes the row locks in that one order (two requests touching the same items in any order cannot
    deadlock) and adds the adjustments, in one statement whatever the number of items."""
    ordered = sorted(added)
    table = StockLevel._meta.db_table
    ops = connection.ops
    levels: dict[StockKey, StockLevel] = {}
    for start in range(0, len(ordered), BATCH_SIZE):
        batch = ordered[start : start + BATCH_SIZE]
        params: list[Any] = []
        for location_id, product_id, variant_id in batch:
            total = added[(location_id, product_id, variant_id)] or Decimal(0)
            quantity = ops.adapt_decimalfield_value(total, QUANTITY_DIGITS, QUANTITY_PLACES)
            params += [account.pk, location_id, product_id, variant_id, quantity, ops.adapt_datetimefield_value(now)]
        rows = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(batch))
        # Only the model's table name and placeholders are formatted in; every value is a parameter.
        sql = (
            f"INSERT INTO {table} (account_id, stock_location_id, product_id, variant_id, quantity, updated_at)"  # noqa: S608
            f" VALUES {rows} ON CONFLICT (stock_location_id, product_id, variant_id) DO UPDATE"
            f" SET quantity = {table}.quantity + excluded.quantity, updated_at = excluded.updated_at"
            " RETURNING id, account_id, stock_location_id, product_id, variant_id, quantity, updated_at"
        )
        for row in StockLevel.objects.raw(sql, params):
            levels[(row.stock_location_id, row.product_id, row.variant_id)] = row
    return {key: levels[key] for key in ordered}


# --- Sales (spec: Sale, line items) -------------------------------------------------------------------------


def record_sale_stock_events(*, account: Account, sales: Sequence[Sale], offer: bool = True) -> list[StockEvent]:
    """Spec: Stock event, types ``sale`` and ``return``: move stock for the product lines of these sales.

    Called by the checkout service inside the transaction that stores the sales. One event per line item
    with a product ``id``; not for voided sales, lines fulfilled by the e-commerce system (``ecom_id``) or
    lines whose behavior moves no goods (``NON_STOCK_BEHAVIORS``). The adjustment is ``-quantity`` for
    both: a return's quantities are negative, so its stock goes up."""
    moves: list[StockMove] = []
    for sale in sales:
        if sale.voided or sale.kind == SaleKind.EXPENSE:
            continue
        kind = StockEventType.RETURN if sale.kind == SaleKind.RETURN else StockEventType.SALE
        for line in (sale.document.get("summary") or {}).get("line_items") or []:
            product_id = line.get("id")
            if not _moves_stock(line) or not isinstance(product_id, str) or not product_id:
                continue
            quantity = _decimal(line.get("quantity"))
            if not quantity:
                continue
            moves.append(
                StockMove(
                    stock_location=sale.stock_location,
                    product_id=product_id,
                    variant_id=line.get("variant_id") or "",
                    type=kind,
                    timestamp=sale.timestamp,
                    adjustment=-quantity,
                    sale_id=sale.identifier,
                )
            )
    return apply_stock_moves(account=account, moves=moves, offer=offer)


def _moves_stock(line: dict[str, Any]) -> bool:
    if line.get("ecom_id") is not None:
        return False
    behavior = line.get("behavior") or {}
    return not any(key in NON_STOCK_BEHAVIORS and value is not None for key, value in behavior.items())


def _decimal(value: Any) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | Decimal | str):
        return Decimal(0)
    return Decimal(str(value))


# --- Posted events (POS, imports) ---------------------------------------------------------------------------


def moves_from(
    *, account: Account, events: Sequence[dict[str, Any]], paths: Sequence[str]
) -> tuple[dict[int, StockMove], dict[int, dict[str, str]]]:
    """Validated events (cleaned by ``ledger.bodies.stock``) as moves, by position; and, by position,
    the error of each naming a stock location the account does not have (field ``<path>.stock_location_id``)."""
    locations = account_selectors.stock_locations_by_identifier(
        account=account, identifiers={e["stock_location_id"] for e in events}
    )
    now = timezone.now()
    moves: dict[int, StockMove] = {}
    errors: dict[int, dict[str, str]] = {}
    for index, (event, path) in enumerate(zip(events, paths, strict=True)):
        location = locations.get(event["stock_location_id"])
        if location is None:
            field = f"{path}.stock_location_id" if path else "stock_location_id"
            shown = event["stock_location_id"][:64]
            errors[index] = {"field": field, "message": f"unknown stock location '{shown}'", "code": "unknown"}
            continue
        moves[index] = StockMove(
            stock_location=location,
            product_id=event["product_id"],
            variant_id=event.get("variant_id", ""),
            type=event["type"],
            timestamp=event.get("timestamp") or now,
            adjustment=event.get("adjustment"),
            new_stock_value=event.get("new_stock_value"),
            stock_count_id=event.get("stock_count_id", ""),
            identifier=event.get("identifier", ""),
        )
    return moves, errors


def record_stock_events(
    *, account: Account, events: Sequence[dict[str, Any]], paths: Sequence[str]
) -> list[StockEvent]:
    """Spec: Stock event, from the POS (``received``, ``stock_count_reset``, ``external_reset``).

    All or nothing: when any event names an unknown stock location, every such event is reported (by its
    path in the body) and nothing is recorded."""
    moves, errors = moves_from(account=account, events=events, paths=paths)
    if errors:
        raise InvalidInput(list(errors.values()))
    return apply_stock_moves(account=account, moves=[moves[i] for i in range(len(events))])
