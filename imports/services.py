"""Imports: validate posted items, queue them durably, materialise them (spec: Endpoints A, Errors, Limits).

Orders and state changes are queued: the request stores every item as an ``ImportItem`` in the
transaction that answers, and hands the pending ones to Celery after commit. A beat task sweeps
items still pending after a grace period, so a lost hand-off (broker down, worker killed) only
delays an item. Campaigns and product rules are applied in the request itself; their items are
logged too, so the import log shows every item an integration posted.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial
from itertools import groupby
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q, QuerySet
from django.db.models.fields.json import KT
from django.utils import timezone

from accounts import selectors as account_selectors
from accounts.models import Account, Integration, Market, StockLocation
from campaigns import services as campaign_services
from core import bulk, liveness
from core.errors import ServiceError
from core.nodes import INVALID, Node, Report
from imports import bodies
from imports.models import ImportItem, ImportKind, ImportStatus
from ledger.services import stock as stock_services
from orders import bodies as order_bodies
from orders import selectors as order_selectors
from orders import services as order_services
from orders.models import ExternalOrder, IncomingOrder, OrderStateChange

logger = logging.getLogger(__name__)

# The task that materialises items (imports.tasks); routed by CELERY_TASK_ROUTES under this name.
MATERIALISE_TASK = "imports.tasks.materialise_import_items"

# Item ids per Celery message: large enough to insert in bulk, small enough to finish well within a minute.
MATERIALISE_CHUNK = 500

# Items one materialising task takes at most: its own, then its account's oldest other pending items, so a burst of
# requests is materialised by a few large tasks (a task's fixed cost is most of a small one's). At least
# MATERIALISE_CHUNK, the ids of one message.
MATERIALISE_BATCH = 1000


@dataclass
class ImportResult:
    """What an import request achieved: how many items were accepted, which failed and why (the answer's body,
    ``ImportResult`` in the OpenAPI schema)."""

    noun: str
    accepted: int = 0
    failed: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    verb: str = "initiated"
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def status(self) -> str:
        if not self.failed:
            return "OK"
        return "PARTIAL" if self.accepted else "ERROR"

    @property
    def message(self) -> str:
        if self.accepted == 0 and self.failed:
            return f"No {self.noun} was accepted: every item failed (see 'failed')"
        text = f"Import of {self.accepted} {self.noun}(s) {self.verb}"
        return f"{text}; {len(self.failed)} failed (see 'failed')" if self.failed else text

    def body(self) -> dict[str, Any]:
        body: dict[str, Any] = {"status": self.status, "message": self.message}
        if self.failed:
            body["failed"] = self.failed
        if self.warnings:
            body["warnings"] = self.warnings
        body.update(self.extra)
        return body


@dataclass
class _Checked:
    index: int
    identifier: str | None
    cleaned: Any
    report: Report

    @property
    def ok(self) -> bool:
        return self.cleaned is not INVALID and not self.report.errors


MAX_REPORTED_WARNINGS = 100
# Per item index: the errors the bounded JSON parser found in it (``core.jsonparse``).
Refused = Mapping[int, list[dict[str, str]]]


def _check_all(
    items: Sequence[Any],
    check: Callable[[Any, str, Report], Any],
    *,
    id_field: str,
    markets: tuple[str, ...] = (),
    unique: bool = True,
    refused: Mapping[int, list[dict[str, str]]] | None = None,
) -> list[_Checked]:
    """Validate every item. With ``unique``, an identifier seen earlier in the request is a duplicate.

    ``refused`` are the errors the bounded JSON parser found in an item (a number out of range, a lone
    surrogate): such an item fails with them and is not validated further."""
    checked: list[_Checked] = []
    seen: set[str] = set()
    for index, raw in enumerate(items):
        report = Report(markets=markets)
        if refused and index in refused:
            report.errors.extend(refused[index])
            cleaned = INVALID
        else:
            cleaned = check(raw, "", report)
        ident = raw.get(id_field) if isinstance(raw, dict) else None
        identifier = ident if isinstance(ident, str) else None
        if unique and cleaned is not INVALID and identifier is not None:
            if identifier in seen:
                report.error(id_field, f"'{identifier}' appears more than once in this request", "duplicate")
                cleaned = INVALID
            seen.add(identifier)
        checked.append(_Checked(index, identifier, cleaned, report))
    return checked


def _result_of(noun: str, checked: Sequence[_Checked], *, verb: str = "initiated") -> ImportResult:
    result = ImportResult(noun=noun, verb=verb)
    for c in checked:
        if c.ok:
            result.accepted += 1
        else:
            # An over-long identifier is invalid anyway; echo a bounded part of it, not megabytes.
            echoed = c.identifier[:255] if c.identifier is not None else None
            result.failed.append({"index": c.index, "id": echoed, "errors": c.report.errors})
        for warning in c.report.warnings:
            if len(result.warnings) < MAX_REPORTED_WARNINGS:
                result.warnings.append({"index": c.index, **warning})
    return result


@dataclass(frozen=True)
class _Log:
    """One request's entries in the import log: who sent it, which kind of item, one request id and one time.

    Every log row is built by ``row``, so the rows of a request always share these."""

    account: Account
    integration: Integration
    kind: str
    request_id: uuid.UUID = field(default_factory=uuid.uuid4)
    at: datetime = field(default_factory=timezone.now)

    def row(self, index: int, identifier: str, *, processed: bool, **fields: Any) -> ImportItem:
        return ImportItem(
            account=self.account,
            integration=self.integration,
            kind=self.kind,
            request_id=self.request_id,
            index=index,
            identifier=identifier,
            processed_at=self.at if processed else None,
            **fields,
        )


def _log_rows(
    log: _Log,
    checked: Sequence[_Checked],
    raw_items: Sequence[Any],
    *,
    status_ok: str,
    message_ok: str,
    stock_location: StockLocation | None = None,
    stock_location_ids: dict[int, int] | None = None,
    markets: Sequence[str] = (),
) -> list[ImportItem]:
    """A log row per checked item: accepted ones with ``status_ok`` and ``message_ok``, refused ones with their
    errors. The stock location is one for all (``stock_location``) or per item index (``stock_location_ids``)."""
    rows = []
    for c in checked:
        ok = c.ok
        rows.append(
            log.row(
                c.index,
                (c.identifier or "")[:255],
                processed=not (ok and status_ok == ImportStatus.PENDING),
                stock_location_id=(
                    stock_location_ids.get(c.index)
                    if stock_location_ids is not None
                    else (stock_location.pk if stock_location else None)
                ),
                markets=list(markets),
                payload=c.cleaned if ok else raw_items[c.index],
                status=status_ok if ok else ImportStatus.REJECTED,
                message=message_ok
                if ok
                else "; ".join(f"{e['field']}: {e['message']}" for e in c.report.errors)[:2000],
                errors=[] if ok else c.report.errors,
            )
        )
    return rows


def _hand_off(account_id: int, item_ids: list[int]) -> None:
    """After commit: give the pending items to Celery. A failure here only delays them (sweeper).

    The task is found by its name in Celery's registry (``imports.tasks`` is registered by ``ImportsConfig.ready``):
    the tasks call the services, and the services name the task, so the two modules form no import cycle."""
    materialise = current_app.tasks[MATERIALISE_TASK]
    for start in range(0, len(item_ids), MATERIALISE_CHUNK):
        chunk = item_ids[start : start + MATERIALISE_CHUNK]
        try:
            # argsrepr: what the worker's log and events show; Celery's own (saferepr of 500 ids) was half the
            # hand-off's time.
            materialise.apply_async((account_id, chunk), argsrepr=f"({account_id}, [{len(chunk)} item ids])")
        except Exception:  # the broker may be down; the items are safe in the database
            logger.warning("hand-off of %d import item(s) failed; the sweeper will retry", len(chunk), exc_info=True)
            return


def _queue(rows: list[ImportItem], account: Account) -> None:
    with transaction.atomic():
        bulk.insert(rows)
        pending = [r.pk for r in rows if r.status == ImportStatus.PENDING]
        if pending:
            transaction.on_commit(partial(_hand_off, account.pk, pending))


# --- Orders ------------------------------------------------------------------------------------------

ORDER_KINDS: dict[str, tuple[Node, str]] = {
    ImportKind.INCOMING_ORDER: (order_bodies.IncomingOrder, "order"),
    ImportKind.EXTERNAL_ORDER: (order_bodies.ExternalOrder, "external order"),
}


def queue_orders(
    *,
    account: Account,
    integration: Integration,
    kind: str,
    stock_location: StockLocation,
    items: Sequence[Any],
    refused: Refused | None = None,
) -> ImportResult:
    """Spec: Endpoints A, incoming and external orders. Valid orders (``items``) are queued; the rest reported.

    An ``order_identifier`` already used on the stock location (stored, or queued and pending) is
    reported as a duplicate now; one that races in concurrently fails in the import log later.
    """
    schema, noun = ORDER_KINDS[kind]
    checked = _check_all(items, schema.check, id_field="order_identifier", refused=refused)
    candidates = {c.identifier for c in checked if c.ok and c.identifier is not None}
    taken = _taken_identifiers(account=account, kind=kind, stock_location=stock_location, identifiers=candidates)
    for c in checked:
        if c.ok and c.identifier in taken:
            c.report.error("order_identifier", order_services.duplicate_message(c.identifier or ""), "duplicate")
    log = _Log(account, integration, kind)
    rows = _log_rows(
        log, checked, items, status_ok=ImportStatus.PENDING, message_ok="queued", stock_location=stock_location
    )
    _queue(rows, account)
    return _result_of(noun, checked)


def _taken_identifiers(
    *, account: Account, kind: str, stock_location: StockLocation, identifiers: set[str]
) -> set[str]:
    """Which of these identifiers already name an order on the stock location, or a pending item of the same
    kind there: one query for both."""
    if not identifiers:
        return set()
    # Not filtered by account: the stock location is the account's, and with the account in the query the planner
    # may read every pending item of the account (import_item_pending) instead of these identifiers'.
    pending = ImportItem.objects.filter(stock_location=stock_location, kind=kind, status=ImportStatus.PENDING)
    pending = pending.filter(identifier__in=identifiers)
    used = order_selectors.used_order_identifiers(
        account=account, kind=kind, stock_location=stock_location, identifiers=identifiers
    )
    # No ORDER BY in either part (the models' default orderings): a compound statement refuses them.
    return set(used.order_by().union(pending.order_by().values_list("identifier", flat=True)))


# --- Outgoing order state changes -----------------------------------------------------------------------


def queue_outgoing_order_state_changes(
    *, account: Account, integration: Integration, changes: Sequence[Any], refused: Refused | None = None
) -> ImportResult:
    """Spec: Endpoints A, outgoing order state changes. Applied in order when materialised."""
    checked = _check_all(
        changes,
        order_bodies.OutgoingOrderStateChange.check,
        id_field="order_identifier",
        unique=False,
        refused=refused,
    )
    locations = account_selectors.stock_locations_by_identifier(
        account=account, identifiers={c.cleaned["stock_location"] for c in checked if c.ok}
    )
    location_ids: dict[int, int] = {}
    for c in checked:
        if not c.ok:
            continue
        location = locations.get(c.cleaned["stock_location"])
        if location is None:
            c.report.error("stock_location", f"unknown stock location '{c.cleaned['stock_location']}'", "unknown")
        else:
            location_ids[c.index] = location.pk
    log = _Log(account, integration, ImportKind.OUTGOING_ORDER_STATE_CHANGE)
    rows = _log_rows(
        log, checked, changes, status_ok=ImportStatus.PENDING, message_ok="queued", stock_location_ids=location_ids
    )
    _queue(rows, account)
    return _result_of("outgoing order state change", checked)


# --- Campaigns and product rules ------------------------------------------------------------------------


def resolve_markets(*, account: Account, markets_param: str | None) -> list[Market]:
    """The ``markets`` query parameter (comma-separated, default ``dk``) as the account's markets."""
    identifiers = [m.strip() for m in (markets_param or "dk").split(",") if m.strip()]
    if not identifiers:
        raise ServiceError("markets must name at least one market", field="markets")
    found = account_selectors.markets_by_identifier(account=account, identifiers=identifiers)
    unknown = [m for m in identifiers if m not in found]
    if unknown:
        raise ServiceError(f"unknown market(s): {', '.join(unknown)}", field="markets", code="unknown")
    return [found[m] for m in dict.fromkeys(identifiers)]


# Each kind of per-market definition import: what the campaigns app declares of it, and the kind its deletions log as.
DEFINITION_KINDS: dict[str, tuple[campaign_services.Definitions, ImportKind]] = {
    ImportKind.DISCOUNT_CAMPAIGN: (campaign_services.CAMPAIGNS, ImportKind.DISCOUNT_CAMPAIGN_DELETION),
    ImportKind.PRODUCT_RULE: (campaign_services.PRODUCT_RULES, ImportKind.PRODUCT_RULE_DELETION),
}


def import_definitions(
    *,
    account: Account,
    integration: Integration,
    kind: str,
    markets: Sequence[Market],
    items: Sequence[Any],
    refused: Refused | None = None,
) -> ImportResult:
    """Spec: Discount campaign, Product rule. Valid items are stored in every listed market, overwriting
    an item with the same id (upsert); the rest are reported. Applied in the request, not queued."""
    definition, _ = DEFINITION_KINDS[kind]
    market_ids = tuple(m.identifier for m in markets)
    checked = _check_all(items, definition.check, id_field="id", markets=market_ids, refused=refused)
    stored = f"stored in market(s) {', '.join(market_ids)}"
    log = _Log(account, integration, kind)
    rows = _log_rows(log, checked, items, status_ok=ImportStatus.SUCCESS, message_ok=stored, markets=market_ids)
    with transaction.atomic():
        definition.upsert(account=account, markets=markets, items=[c.cleaned for c in checked if c.ok])
        bulk.insert(rows)
    result = _result_of(definition.noun, checked, verb="completed")
    result.extra["markets"] = list(market_ids)
    return result


# The log row of a listed id: deleted (True) or not found (False).
_DELETION_LOG: dict[bool, dict[str, str]] = {
    True: {"status": ImportStatus.SUCCESS, "message": "deleted"},
    False: {"status": ImportStatus.FAILURE, "message": "not found in the listed market(s)"},
}


def delete_definitions(
    *, account: Account, integration: Integration, kind: str, markets: Sequence[Market], ids: Sequence[str]
) -> dict[str, Any]:
    """DELETE of campaigns or product rules: unknown ids are reported, not an error for the rest."""
    definition, deletion_kind = DEFINITION_KINDS[kind]
    ids = list(dict.fromkeys(ids))
    market_ids = [m.identifier for m in markets]
    log = _Log(account, integration, deletion_kind)
    with transaction.atomic():
        deleted, not_found = definition.delete(account=account, markets=markets, ids=ids)
        bulk.insert(
            [
                log.row(i, identifier, processed=True, markets=market_ids, **_DELETION_LOG[identifier in deleted])
                for i, identifier in enumerate(ids)
            ]
        )
    message = f"Deleted {len(deleted)} {definition.noun}(s) from market(s) {', '.join(market_ids)}"
    if not_found:
        message += f"; {len(not_found)} not found"
    return {"status": "OK", "message": message, "markets": market_ids, "deleted": deleted, "not_found": not_found}


# --- Stock events (external resets) ---------------------------------------------------------------------


def import_stock_events(
    *, account: Account, integration: Integration, events: Sequence[Any], refused: Refused | None = None
) -> ImportResult:
    """Spec: Stock event, type ``external_reset``. Valid events are applied in the request, in the order
    posted (not queued: a reset is cheap and the sender wants its effect now); the rest are reported."""
    checked = _check_all(
        events, bodies.IMPORTED_STOCK_EVENT.check, id_field="product_id", unique=False, refused=refused
    )
    valid = [c for c in checked if c.ok]
    moves, errors = stock_services.moves_from(
        account=account, events=[c.cleaned for c in valid], paths=["" for _ in valid]
    )
    for position, error in errors.items():
        valid[position].report.errors.append(error)
    applied = [moves[p] for p in sorted(moves)]
    rows = _log_rows(
        _Log(account, integration, ImportKind.STOCK_EVENT),
        checked,
        events,
        status_ok=ImportStatus.SUCCESS,
        message_ok="stock reset applied",
        stock_location_ids={c.index: moves[p].stock_location.pk for p, c in enumerate(valid) if p in moves},
    )
    for row in rows:  # the cleaned event holds a datetime; the log keeps the event as it was posted
        row.payload = events[row.index]
    with transaction.atomic():
        stock_services.apply_stock_moves(account=account, moves=applied)
        bulk.insert(rows)
    return _result_of("stock event", checked, verb="completed")


# --- Materialisation (Celery) ---------------------------------------------------------------------------


def materialise_items(*, account_id: int, item_ids: Sequence[int]) -> int:
    """Turn pending import items into orders and state changes. Safe to run twice: only pending
    items are taken, locked, and marked done in the same transaction. Returns how many it processed.

    A task takes its own pending ``item_ids``, then the oldest other pending items of its account up to
    ``MATERIALISE_BATCH`` in all, skipping items another task holds; the tasks of those other items then find them
    done. An item whose message is alive is always its task's (or already another's): items whose message was lost
    (broker down, the sweeper's until the grace period) never hold back a new request's."""
    with transaction.atomic():
        pending = (
            # of=self: lock the items only; a lock on a joined row would make concurrent imports skip them.
            ImportItem.objects.select_for_update(skip_locked=True, of=("self",))
            .filter(account_id=account_id, status=ImportStatus.PENDING)
            .only("id", "kind", "identifier", "stock_location_id")  # what materialising reads of an item
        )
        items = list(pending.filter(id__in=list(item_ids)))
        if len(items) < MATERIALISE_BATCH:
            others = pending.exclude(id__in=[i.pk for i in items]).order_by("id")  # the import_item_pending index
            items += others[: MATERIALISE_BATCH - len(items)]
        if not items:
            return 0
        account = Account.objects.get(pk=account_id)
        outcome: dict[int, str | None] = {}
        for kind, group in groupby(sorted(items, key=lambda i: (i.kind, i.pk)), key=lambda i: i.kind):
            outcome.update(_MATERIALISERS[kind](account, list(group)))
        _record_outcome(items, outcome)
    return len(items)


def _order_source(items: list[ImportItem], *, incoming: bool) -> QuerySet[ImportItem]:
    """The items as rows of new orders (orders.services.INCOMING_SOURCE_COLUMNS), read from the payload
    in the database."""
    columns: dict[str, Any] = {
        "order_identifier": F("identifier"),
        "currency": KT("payload__basket__currency"),
        "basket": F("payload__basket"),
        "customer": F("payload__customer"),
    }
    if incoming:
        columns["payment"] = F("payload__payment")
        columns["shipping"] = F("payload__shipping")
        columns["handling_type"] = order_services.handling_type_expression(
            payment=Q(payload__has_key="payment"), shipping=Q(payload__has_key="shipping")
        )
    return ImportItem.objects.filter(pk__in=[i.pk for i in items]).order_by("id").annotate(**columns)


def _materialise_orders(kind: str, account: Account, items: list[ImportItem]) -> dict[int, str | None]:
    outcome: dict[int, str | None] = {
        i.pk: "the stock location no longer exists" for i in items if i.stock_location_id is None
    }
    placeable = [i for i in items if i.stock_location_id is not None]
    incoming = kind == ImportKind.INCOMING_ORDER
    created = order_services.insert_orders_from(
        account=account,
        model=IncomingOrder if incoming else ExternalOrder,
        source=_order_source(placeable, incoming=incoming),
    )
    claimed: set[tuple[int, str]] = set()
    for item in placeable:  # in id order: of two items with one identifier, the first created the order
        key = (item.stock_location_id, item.identifier)
        if key in created and key not in claimed:
            claimed.add(key)
            outcome[item.pk] = None
        else:
            outcome[item.pk] = order_services.duplicate_message(item.identifier)
    return outcome


def _materialise_state_changes(account: Account, items: list[ImportItem]) -> dict[int, str | None]:
    rows = ImportItem.objects.filter(pk__in=[i.pk for i in items]).values_list("id", "payload")
    payloads: dict[int, dict[str, Any]] = {pk: payload or {} for pk, payload in rows}
    outcome: dict[int, str | None] = {}
    for item in items:  # in id order: the changes of one batch apply in the order they were posted
        change = payloads[item.pk]
        if item.stock_location_id is None:
            outcome[item.pk] = "the stock location no longer exists"
            continue
        try:
            order_services.change_outgoing_order_state(
                account=account,
                stock_location_id=item.stock_location_id,
                order_identifier=change["order_identifier"],
                move=order_services.StateMove.posted(change, source=OrderStateChange.Source.IMPORT),
            )
            outcome[item.pk] = None
        except ServiceError as exc:
            outcome[item.pk] = exc.message
    return outcome


_MATERIALISERS: dict[str, Callable[[Account, list[ImportItem]], dict[int, str | None]]] = {
    ImportKind.INCOMING_ORDER: partial(_materialise_orders, ImportKind.INCOMING_ORDER),
    ImportKind.EXTERNAL_ORDER: partial(_materialise_orders, ImportKind.EXTERNAL_ORDER),
    ImportKind.OUTGOING_ORDER_STATE_CHANGE: _materialise_state_changes,
}

SUCCESS_MESSAGES: dict[str, str] = {
    ImportKind.INCOMING_ORDER: "incoming order created",
    ImportKind.EXTERNAL_ORDER: "external order created",
    ImportKind.OUTGOING_ORDER_STATE_CHANGE: "state changed",
}


def _record_outcome(items: Sequence[ImportItem], outcome: dict[int, str | None]) -> None:
    """Mark items done with as few UPDATEs as there are distinct messages."""
    now = timezone.now()
    by_result: dict[tuple[str, str], list[int]] = {}
    for item in items:
        failure = outcome.get(item.pk)
        result = (ImportStatus.FAILURE, failure) if failure else (ImportStatus.SUCCESS, SUCCESS_MESSAGES[item.kind])
        by_result.setdefault(result, []).append(item.pk)
    for (status, message), ids in by_result.items():
        ImportItem.objects.filter(id__in=ids).update(
            status=status, message=message, processed_at=now, attempts=F("attempts") + 1
        )


def sweep_pending(*, grace: timedelta | None = None) -> int:
    """Hand pending items older than the grace period to Celery again; and, when a worker process died since the
    last sweep (``core.liveness.reap``: it stopped proving it is alive without a clean shutdown), every pending item,
    whatever its age: the message it held is lost with it or waits in the broker's unacknowledged set, and which
    items it named cannot be told. Materialising twice is safe (only pending items are taken, under a row lock), so
    the price of a death is one repeated hand-off. Returns how many items were handed over."""
    if grace is None:
        grace = timedelta(seconds=settings.IMPORT_SWEEP_GRACE_SECONDS)
    died = liveness.reap()
    if died:
        logger.warning("worker process(es) %s died: every pending import item is handed over", ", ".join(died))
    cutoff = timezone.now() - (timedelta(0) if died else grace)
    stale = (
        ImportItem.objects.filter(status=ImportStatus.PENDING, created_at__lte=cutoff)
        .order_by("account_id", "id")
        .values_list("account_id", "id")[:50_000]
    )
    count = 0
    for account_id, group in groupby(stale, key=lambda row: row[0]):
        ids = [item_id for _, item_id in group]
        _hand_off(account_id, ids)
        count += len(ids)
    return count
