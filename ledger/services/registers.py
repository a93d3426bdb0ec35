"""Register periods and register close statements (spec: Register close statement).

A register is open from its opening to its close; that span is a ``RegisterPeriod`` and every sale is
booked into the open period of its register. Opening is explicit (``open_register``, with the cash put in
the drawer) or implicit, when a sale arrives at a closed register (``open_period_for``, which carries over
what the last close left in the drawer). Closing (``close_register``) computes the statement from the
period's stored rows, locks the period shut and offers the statement to exports, in one transaction.

Concurrency: opening and closing lock the register's row first, closing then the open period's row; booking a
sale locks the open period's row (and the register's only when it must open a period), so a sale posted while
the register closes is booked either before the close (and counted in its statement) or after it (into
the next period), never into a closed period.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import connection, transaction
from django.db.models import Max
from django.utils import timezone

from accounts.models import Account, Register
from accounts.money import minor_unit
from core import outbox
from core.errors import Conflict, NotFound, ServiceError
from ledger.models import RegisterCloseStatement, RegisterPeriod
from ledger.outbox import statement_key
from ledger.selectors import registers as selectors
from ledger.statements import CountedAmount, StatementContext, cash_left_in_drawer, statement_document


def open_period_for(*, account: Account, register: Register, at: datetime | None = None) -> RegisterPeriod:
    """The register's open period, locked, opened now when there is none (a register whose first sale arrives
    after a close opens implicitly, with the cash the last close left in the drawer). Must run inside the
    caller's transaction.

    A booking locks the open period's row (one query): a concurrent close, which locks the register and then that
    row, waits for this booking and counts it; a booking that waited for a close finds the row closed when its lock
    is granted (PostgreSQL re-reads a locked row's condition) and goes on as when there is none. Only then is the
    register row locked, so that two concurrent first sales open one period, not two."""
    if not connection.in_atomic_block:
        raise RuntimeError("open_period_for must run inside the transaction that books into the period")
    period = _locked_open_period(account=account, register=register)
    if period is not None:
        return period
    Register.objects.select_for_update().filter(pk=register.pk, account=account).values_list("pk").get()
    period = _locked_open_period(account=account, register=register)
    if period is not None:
        return period
    return _new_period(account=account, register=register, at=at or timezone.now(), cash_total_at_open=None)


def open_period_of(*, account: Account, register_identifier: str, at: datetime) -> RegisterPeriod | None:
    """``open_period_for`` the account's register of this identifier, with the register, its shop and market read
    by the query that locks the period (a checkout's first query), and with what the outbox's sinks need to know
    of the account (``core.outbox.read_along``: its export queues); None when the account has no such register."""
    period = (
        RegisterPeriod.objects.select_for_update(of=("self",))
        .select_related("register__stock_location__market")
        .annotate(**outbox.read_along(account=account))
        .filter(account=account, register__account=account, register__identifier=register_identifier)
        .filter(closed_at__isnull=True)
        .first()
    )
    if period is not None:
        return period
    register = (
        Register.objects.select_related("stock_location__market")
        .filter(account=account, identifier=register_identifier)
        .first()
    )
    if register is None:
        return None
    period = open_period_for(account=account, register=register, at=at)
    period.register = register
    return period


def _locked_open_period(*, account: Account, register: Register) -> RegisterPeriod | None:
    return (
        RegisterPeriod.objects.select_for_update()
        .filter(account=account, register=register, closed_at__isnull=True)
        .first()
    )


def _new_period(
    *, account: Account, register: Register, at: datetime, cash_total_at_open: Decimal | None
) -> RegisterPeriod:
    last = RegisterPeriod.objects.filter(register=register).aggregate(n=Max("sequence_number"))["n"] or 0
    if cash_total_at_open is None:
        statement = selectors.last_statement(account=account, register=register)
        cash_total_at_open = cash_left_in_drawer(statement.document) if statement is not None else Decimal(0)
    return RegisterPeriod.objects.create(
        account=account,
        register=register,
        sequence_number=last + 1,
        opened_at=at,
        cash_total_at_open=cash_total_at_open,
    )


def _locked_register(*, account: Account, register_identifier: str) -> Register:
    register = (
        Register.objects.select_for_update(of=("self",))
        .select_related("stock_location__market")
        .filter(account=account, identifier=register_identifier)
        .first()
    )
    if register is None:
        raise NotFound(f"No register '{register_identifier[:100]}'.", field="register_id")
    return register


def open_register(
    *, account: Account, register_identifier: str, cash_total_at_open: Decimal | None = None, at: datetime | None = None
) -> RegisterPeriod:
    """Spec: Register close statement (``cash_total_at_open``, ``opened_at``). Open a register period with
    the cash counted into the drawer; without it, what the last close left in the drawer. 409 when the
    register is already open."""
    with transaction.atomic():
        register = _locked_register(account=account, register_identifier=register_identifier)
        if selectors.open_period(account=account, register=register) is not None:
            raise Conflict(
                f"The register '{register.identifier}' is already open.", field="register_id", code="already_open"
            )
        if cash_total_at_open is not None:
            currency = register.stock_location.market.currency
            places = Decimal(1).scaleb(-minor_unit(currency))
            if cash_total_at_open != cash_total_at_open.quantize(places):
                raise ServiceError(
                    f"has more decimals than {currency} has", field="cash_total_at_open", code="precision"
                )
        return _new_period(
            account=account, register=register, at=at or timezone.now(), cash_total_at_open=cash_total_at_open
        )


def close_register(
    *,
    account: Account,
    register_identifier: str,
    counted: Sequence[Mapping[str, Any]] = (),
    comment: str | None = None,
    event_counts: Mapping[str, int] | None = None,
    cashier: Mapping[str, Any] | None = None,
    at: datetime | None = None,
    identifier: str = "",
) -> RegisterCloseStatement:
    """Spec: Register close statement. Close the register's open period: compute the statement from what
    was stored for the period, store it, close the period and offer the statement to exports.

    ``counted`` entries are ``{payment_type_identifier, currency_code?, counted, deposited_amount?}``
    (currency defaults to the base currency). 404 for an unknown register, 409 when it is not open, 400
    (naming every field) when a reconciled amount is missing or an entry matches no reconciliation.
    ``identifier`` (the app's own, optional) makes a repeated close answer the statement it made.
    """
    at = at or timezone.now()
    with transaction.atomic():
        register = _locked_register(account=account, register_identifier=register_identifier)
        if identifier:
            replayed = selectors.statement_by_identifier(account=account, register=register, identifier=identifier)
            if replayed is not None:
                return replayed
        period = _open_period(account=account, register=register)
        context = _statement_context(
            account=account,
            register=register,
            period=period,
            at=at,
            counted=counted,
            comment=comment,
            event_counts=event_counts,
            cashier=cashier,
        )
        figures = selectors.period_figures(account=account, period=period)
        document = statement_document(figures, context)
        statement = RegisterCloseStatement.objects.create(
            account=account,
            register=register,
            period=period,
            sequence_number=period.sequence_number,
            reconciliation_time=context.reconciliation_time,
            document=document,
            identifier=identifier,
        )
        period.closed_at = context.reconciliation_time
        period.save(update_fields=["closed_at"])
        entry = outbox.Entry(statement.pk, statement_key(statement), stock_location_id=register.stock_location_id)
        outbox.offer(account=account, entity_type=outbox.EntityType.REGISTER_CLOSE_STATEMENTS, entries=[entry])
    return statement


def _open_period(*, account: Account, register: Register) -> RegisterPeriod:
    """The register's open period, locked until the close commits; 409 when the register is not open."""
    period = (
        RegisterPeriod.objects.select_for_update()
        .filter(account=account, register=register, closed_at__isnull=True)
        .first()
    )
    if period is None:
        raise Conflict(f"The register '{register.identifier}' is not open.", field="register_id", code="not_open")
    return period


def _statement_context(
    *,
    account: Account,
    register: Register,
    period: RegisterPeriod,
    at: datetime,
    counted: Sequence[Mapping[str, Any]],
    comment: str | None,
    event_counts: Mapping[str, int] | None,
    cashier: Mapping[str, Any] | None,
) -> StatementContext:
    """What the statement needs besides the period's stored figures: the period, the counted amounts (in the
    market's currency unless given), and who and where it was closed. Reconciled no earlier than the opening; its
    local times in the account's zone, the one a sale's timing defaults to."""
    base_currency = register.stock_location.market.currency
    return StatementContext(
        base_currency_code=base_currency,
        sequence_number=period.sequence_number,
        opened_at=period.opened_at,
        cash_total_at_open=period.cash_total_at_open,
        reconciliation_time=max(at, period.opened_at),
        payment_types=register.payment_types,
        counted=[
            CountedAmount(
                payment_type_identifier=entry["payment_type_identifier"],
                currency_code=entry.get("currency_code") or base_currency,
                counted=Decimal(entry["counted"]),
                deposited_amount=(
                    Decimal(entry["deposited_amount"]) if entry.get("deposited_amount") is not None else None
                ),
                index=i,
            )
            for i, entry in enumerate(counted)
        ],
        source=_source(register=register, cashier=cashier),
        shop_info=_shop_info(register=register),
        summary_id=f"{register.identifier}-{period.sequence_number}",
        timezone=account.timezone,
        comment=comment or None,
        event_counts=dict(event_counts or {}),
    )


def _source(*, register: Register, cashier: Mapping[str, Any] | None) -> dict[str, str]:
    """The statement's ``source``: a name left blank is left out, as a checkout's and a signup's are (the schema's
    ``SaleSource`` names are non-blank strings)."""
    shop = register.stock_location
    source = {
        "market_id": shop.market.identifier,
        "market_name": shop.market.name,
        "shop_id": shop.identifier,
        "shop_name": shop.name,
        "register_id": register.identifier,
        "register_name": register.name,
    }
    if cashier:
        source["cashier_id"] = str(cashier["identifier"])
        source["cashier_name"] = str(cashier.get("full_name") or cashier["display_name"])
    return {key: value for key, value in source.items() if value}


def _shop_info(*, register: Register) -> dict[str, Any]:
    shop = register.stock_location
    address = {"city": shop.city, "name": shop.name, "street": shop.street, "zip": shop.zip}
    info: dict[str, Any] = {"shop_address": {k: v for k, v in address.items() if v}}
    if shop.vat_number:
        info["vat_number"] = shop.vat_number
    return info
