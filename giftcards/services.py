"""Gift cards and customer-account payments through the account's runtime integrations.

Spec: Endpoints B (Runtime integrations), Gift card entity, Gift card status, Customer account payment entity,
Customer rules 1-3, Errors 3. The integrator holds the money; the service keeps its own record of each card
and payment, refuses impossible moves before asking, and changes its record only once the integrator has
confirmed. Nothing is held in a database transaction while the integrator is being asked.

Outcomes of a pay (gift card or customer account), by what the integrator did:

* a 2xx answer of the right shape: confirmed, recorded (``ok`` true);
* a non-2xx answer, a refused connection, no configuration: failed for certain (``ok`` false; the
  ``identifier`` may be used again);
* a timeout, or a 2xx that is not the spec's shape: the outcome is unknown (``ok`` stays null and the
  ``identifier`` stays taken, so a retry with it is refused rather than risking a second payment);
* confirmed but our own write failed: logged at CRITICAL with the answer, and answered ``NotRecorded`` (500)
  carrying the integrator's answer; the pay stays pending, so its identifier cannot pay again.
"""

from __future__ import annotations

import calendar
import contextlib
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any, TypeVar

from django.db import DatabaseError, IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account
from accounts.money import minor_unit
from core.errors import Conflict, NotFound, ServiceError
from giftcards import selectors
from giftcards.models import CustomerAccountPayment, GiftCard, GiftCardMove, GiftCardStatus
from integrations import runtime
from integrations.bodies.answers import require_valid, validate
from integrations.customers import credit_refusal, normalise_balance
from integrations.errors import BadAnswer, IntegrationFailed, IntegrationTimeout, NotConfigured

logger = logging.getLogger(__name__)

# A pay still pending after this long was interrupted (the process died mid-call): its outcome is unknown.
STALE_PENDING = timedelta(minutes=5)


class NotRecorded(ServiceError):
    """The integrator confirmed an action that the service then failed to record. ``answer`` is the
    integrator's answer, so the POS can show what actually happened."""

    status_code = 500
    code = "not_recorded"

    def __init__(self, message: str, *, answer: Any) -> None:
        super().__init__(message, field="answer")
        self.answer = answer


# --- helpers ---------------------------------------------------------------------------------------------


def _timestamp(value: Decimal | int, field: str) -> datetime:
    try:
        return datetime.fromtimestamp(float(value), tz=UTC)
    except (OverflowError, OSError, ValueError):
        raise BadAnswer(f"The integrator's {field} is not a usable timestamp", field=field) from None


def unix(moment: datetime) -> Decimal:
    """A datetime as the spec's Unix timestamp with decimals."""
    return Decimal(calendar.timegm(moment.utctimetuple())) + Decimal(moment.microsecond) / Decimal(1_000_000)


def entity(card: GiftCard, *, amount: Decimal | None = None, status: int | None = None) -> dict[str, Any]:
    """The card as the spec's Gift card entity (optionally as it stood after an earlier move)."""
    body: dict[str, Any] = {
        "amount": plain(card.amount if amount is None else amount, card.currency_code),
        "code": card.code,
        "create_date": unix(card.create_date),
        "currency_code": card.currency_code,
        "expiry_date": unix(card.expiry_date),
        "id": card.card_id,
        "status": card.status if status is None else status,
    }
    if card.external_giftcard is not None:
        body["external_giftcard"] = card.external_giftcard
    return body


def plain(amount: Decimal, currency_code: str) -> Decimal:
    """Stored amounts have 6 places; answered with the currency's minor unit when that is exact."""
    try:
        places = Decimal(1).scaleb(-minor_unit(currency_code))
    except KeyError:
        return amount.normalize()
    amount = Decimal(amount)
    quantized = amount.quantize(places)
    return quantized if quantized == amount else amount.normalize()


def check_places(amount: Decimal, currency_code: str, field: str = "amount") -> None:
    """Refuse an amount finer than the currency's minor unit (10.005 DKK cannot be paid)."""
    places = minor_unit(currency_code)
    amount = Decimal(amount)
    if amount != amount.quantize(Decimal(1).scaleb(-places)):
        raise ServiceError(
            f"{amount} has more decimals than {currency_code} has ({places})", field=field, code="invalid_amount"
        )


def place_values(*, account: Account, shop_id: str) -> dict[str, str]:
    """``shop_id`` and its ``market`` as placeholder values; an unknown shop is refused."""
    if not shop_id:
        return {"shop_id": "", "market": ""}
    shop = selectors.shop(account=account, shop_id=shop_id)
    if shop is None:
        raise ServiceError(f"No shop '{shop_id[:64]}' in this account", field="shop_id", code="unknown_shop")
    return {"shop_id": shop.identifier, "market": shop.market.identifier}


def _unknown_outcome(exc: ServiceError, *, paid_statuses: range) -> bool:
    """Whether the integrator may have acted although we got no usable answer: it timed out, or it answered
    a paying status with something we cannot read. Any other status, or a connection never made, is a
    certain failure."""
    if isinstance(exc, IntegrationTimeout):
        return True
    upstream = getattr(exc, "upstream_status", None)
    return upstream is not None and upstream in paid_statuses


@contextmanager
def _recording(what: str, answer: Any) -> Iterator[None]:
    """One transaction for the write that follows a confirmation; a failure there is logged loudly with the
    integrator's answer (someone must reconcile by hand) and answered as ``NotRecorded``."""
    try:
        with transaction.atomic():
            yield
    except DatabaseError:
        logger.critical("%s: confirmed by the integrator but NOT RECORDED; answer: %r", what, answer, exc_info=True)
        raise NotRecorded(
            f"The integrator confirmed the {what}, but the service could not record it; "
            "the integrator's answer is included; report this to support",
            answer=answer,
        ) from None


def _ask_giftcard(*, account: Account, kind: str, values: Mapping[str, Any], code: str | None) -> dict[str, Any]:
    """Call a gift card integration and return its Gift card entity, checked (spec shape, and the same card)."""
    result = runtime.call(account=account, kind=kind, values=values)
    try:
        answer: dict[str, Any] = require_valid(kind, result.data)
    except BadAnswer as exc:
        exc.upstream_status = result.status_code
        raise
    if code is not None and answer["code"] != code:
        raise BadAnswer(
            f"The integrator answered about gift card '{str(answer['code'])[:64]}', not '{code[:64]}'",
            field="code",
            upstream_status=result.status_code,
        )
    return answer


def _card_fields(answer: Mapping[str, Any]) -> dict[str, Any]:
    """The record's fields from a Gift card entity. Status 3 once the balance is 0 (spec: Gift card status)."""
    status = int(answer["status"])
    if answer["amount"] == 0 and status == GiftCardStatus.ACTIVE:
        status = GiftCardStatus.USED
    return {
        "card_id": answer["id"],
        "currency_code": answer["currency_code"],
        "amount": Decimal(answer["amount"]),
        "status": status,
        "create_date": _timestamp(answer["create_date"], "create_date"),
        "expiry_date": _timestamp(answer["expiry_date"], "expiry_date"),
        "external_giftcard": answer.get("external_giftcard"),
    }


def _card_move(card: GiftCard, action: str, *, before: tuple[Any, Any]) -> dict[str, Any]:
    """The fields of every move row of ``card``: the card, the action, and the card's amount and status before
    the move (``before``)."""
    return {
        "account_id": card.account_id,
        "gift_card": card,
        "code": card.code,
        "action": action,
        "currency_code": card.currency_code,
        "amount_before": before[0],
        "status_before": before[1],
    }


def _confirmed_move(
    card: GiftCard,
    action: str,
    answer: Mapping[str, Any],
    *,
    before: tuple[Any, Any],
    shop_id: str,
    **fields: Any,
) -> GiftCardMove:
    """The log row of a move the integrator confirmed: the card's amount and status before (``before``) and
    after (the card as just updated from ``answer``)."""
    return GiftCardMove.objects.create(
        **_card_move(card, action, before=before),
        ok=True,
        amount_after=card.amount,
        status_after=card.status,
        integrator_status=answer["status"],
        shop_id=shop_id,
        answer=answer,
        completed_at=timezone.now(),
        **fields,
    )


def _apply(card: GiftCard, fields: Mapping[str, Any]) -> None:
    for name, value in fields.items():
        setattr(card, name, value)
    card.save(update_fields=[*fields, "updated_at"])


# --- gift cards ------------------------------------------------------------------------------------------


def create_giftcard(*, account: Account, amount: Decimal, currency_code: str, shop_id: str = "") -> GiftCard:
    """Spec: Gift card status, (none) -> 1: a gift card added to the basket is created by the integrator
    (``giftcard_create``) and recorded as created, inactive."""
    check_places(amount, currency_code)
    values = {"amount": amount, "currency_code": currency_code, **place_values(account=account, shop_id=shop_id)}
    answer = _ask_giftcard(account=account, kind="giftcard_create", values=values, code=None)
    if answer["status"] != GiftCardStatus.CREATED:
        raise BadAnswer("The integrator's new gift card must have status 1 (created)", field="status")
    if answer["currency_code"] != currency_code:
        raise BadAnswer("The integrator's new gift card is in another currency", field="currency_code")
    fields = _card_fields(answer)
    with _recording(f"creation of gift card {answer['code']}", answer):
        card = GiftCard.objects.create(account=account, code=answer["code"], shop_id=shop_id, **fields)
        _confirmed_move(
            card, GiftCardMove.Action.CREATE, answer, before=(None, None), shop_id=shop_id, requested_amount=amount
        )
    return card


@dataclass(frozen=True)
class Activation:
    card: GiftCard
    replayed: bool


def activate_giftcard(*, account: Account, code: str, sale_id: str, shop_id: str = "") -> Activation:
    """Spec: Gift card status, 1 -> 2: only once the sale containing the card is fully paid; the activate call
    carries the inactive card's details. Activating again for the same sale answers the active card."""
    card = selectors.giftcard_by_code(account=account, code=code)
    if card is None:
        raise NotFound(f"No gift card '{code[:64]}' was created here", field="code", code="unknown_giftcard")
    if card.status != GiftCardStatus.CREATED:
        if card.status == GiftCardStatus.ACTIVE and card.sale_id == sale_id:
            return Activation(card=card, replayed=True)  # a POS retry after a lost answer
        raise Conflict(
            f"Gift card '{code[:64]}' is {card.get_status_display()}, not waiting for activation",
            field="code",
            code="giftcard_not_inactive",
        )
    sale = selectors.paid_sale(account=account, sale_id=sale_id)
    if sale is None:
        raise ServiceError(
            f"No paid sale '{sale_id[:64]}': a gift card is activated once the sale selling it is stored",
            field="sale_id",
            code="sale_not_paid",
        )
    if not selectors.sale_sells_giftcard(sale, code):
        raise ServiceError(
            f"Sale '{sale_id[:64]}' has no line item selling gift card '{code[:64]}'",
            field="sale_id",
            code="giftcard_not_in_sale",
        )
    inactive = entity(card)
    values = {
        "code": card.code,
        "id": card.card_id,
        "amount": card.amount,
        "currency_code": card.currency_code,
        "sale_id": sale_id,
        "create_date": inactive["create_date"],
        "expiry_date": inactive["expiry_date"],
        "status": inactive["status"],
        "external_giftcard": inactive.get("external_giftcard"),
        **place_values(account=account, shop_id=shop_id or card.shop_id),
    }
    answer = _ask_giftcard(account=account, kind="giftcard_activate", values=values, code=code)
    if answer["status"] == GiftCardStatus.CREATED:
        raise BadAnswer("The integrator answered the gift card as still inactive (status 1)", field="status")
    before_amount, before_status = card.amount, card.status
    with _recording(f"activation of gift card {code}", answer):
        _apply(card, {**_card_fields(answer), "sale_id": sale_id})
        _confirmed_move(
            card,
            GiftCardMove.Action.ACTIVATE,
            answer,
            before=(before_amount, before_status),
            shop_id=shop_id,
            sale_id=sale_id,
        )
    return Activation(card=card, replayed=False)


def read_giftcard(*, account: Account, code: str, shop_id: str = "") -> GiftCard:
    """Spec: Endpoints B, gift card read: the balance from the integrator, which updates the record. A card
    the service has not seen (sold by the web shop) is recorded from the answer, so it can then be paid."""
    card = selectors.giftcard_by_code(account=account, code=code)
    values = {
        "code": code,
        "id": card.card_id if card else "",
        "currency_code": card.currency_code if card else "",
        **place_values(account=account, shop_id=shop_id),
    }
    answer = _ask_giftcard(account=account, kind="giftcard_read", values=values, code=code)
    fields = _card_fields(answer)
    with _recording(f"read of gift card {code}", answer):
        before_amount = card.amount if card else None
        before_status = card.status if card else None
        if card is None:
            card = GiftCard.objects.create(account=account, code=code, **fields)
        else:
            _apply(card, fields)
        _confirmed_move(card, GiftCardMove.Action.READ, answer, before=(before_amount, before_status), shop_id=shop_id)
    return card


@dataclass(frozen=True)
class GiftCardPayment:
    card: GiftCard
    move: GiftCardMove
    replayed: bool

    def entity(self) -> dict[str, Any]:
        """The card as it stood right after this pay (a replay answers the first result, not today's)."""
        return entity(self.card, amount=self.move.amount_after, status=self.move.status_after)


def _refuse_pay(card: GiftCard | None, *, code: str, amount: Decimal, currency_code: str) -> GiftCard:
    """The moves the record already shows impossible, refused before the integrator is asked."""
    if card is None:
        raise NotFound(
            f"Gift card '{code[:64]}' is not known here: read it first", field="code", code="unknown_giftcard"
        )
    if card.status == GiftCardStatus.CREATED:
        raise Conflict("The gift card is not activated yet", field="code", code="giftcard_inactive")
    if card.status == GiftCardStatus.USED:
        raise Conflict("The gift card is used up", field="code", code="giftcard_used")
    if card.expiry_date <= timezone.now():
        raise Conflict(f"The gift card expired on {card.expiry_date:%Y-%m-%d}", field="code", code="giftcard_expired")
    if currency_code != card.currency_code:
        raise ServiceError(
            f"The gift card is in {card.currency_code}, not {currency_code}",
            field="currency_code",
            code="wrong_currency",
        )
    if amount <= 0:
        raise ServiceError("must be positive", field="amount", code="out_of_range")
    if amount > card.amount:
        raise ServiceError(
            f"{amount} exceeds the gift card's balance of {plain(card.amount, card.currency_code)}",
            field="amount",
            code="insufficient_balance",
        )
    return card


def _replay_pay(move: GiftCardMove, *, code: str, amount: Decimal, currency_code: str) -> GiftCardPayment:
    if move.code != code or move.requested_amount != amount or move.currency_code != currency_code:
        raise Conflict(
            f"Identifier '{move.identifier[:64]}' was used for another payment", field="identifier", code="reused"
        )
    if move.ok is None:
        stale = timezone.now() - move.created_at > STALE_PENDING
        raise Conflict(
            "The payment with this identifier "
            + ("was interrupted and its outcome is unknown" if stale or move.error else "is in progress")
            + ": read the gift card's balance before paying with a new identifier",
            field="identifier",
            code="payment_pending",
        )
    assert move.gift_card is not None
    return GiftCardPayment(card=move.gift_card, move=move, replayed=True)


def pay_giftcard(
    *,
    account: Account,
    code: str,
    amount: Decimal,
    currency_code: str,
    identifier: str = "",
    sale_id: str = "",
    shop_id: str = "",
) -> GiftCardPayment:
    """Spec: Endpoints B, gift card pay (the card used as payment). Refused locally when the record shows it
    impossible; otherwise the integrator pays and the record follows its answer (status 3 at 0). A repeated
    ``identifier`` answers the first result without paying twice."""
    if identifier:
        previous = selectors.pay_move_by_identifier(account=account, identifier=identifier)
        if previous is not None:
            return _replay_pay(previous, code=code, amount=amount, currency_code=currency_code)
    card = _refuse_pay(
        selectors.giftcard_by_code(account=account, code=code), code=code, amount=amount, currency_code=currency_code
    )
    check_places(amount, currency_code)
    values = {
        "code": code,
        "id": card.card_id,
        "amount": amount,
        "currency_code": currency_code,
        "sale_id": sale_id,
        **place_values(account=account, shop_id=shop_id),
    }
    move, earlier = _reserve(
        GiftCardMove,
        lambda: selectors.pay_move_by_identifier(account=account, identifier=identifier),
        _card_move(card, GiftCardMove.Action.PAY, before=(card.amount, card.status))
        | {"identifier": identifier, "requested_amount": amount, "sale_id": sale_id, "shop_id": shop_id},
    )
    if earlier:
        return _replay_pay(move, code=code, amount=amount, currency_code=currency_code)
    try:
        answer = _ask_giftcard(account=account, kind="giftcard_pay", values=values, code=code)
        if answer["status"] == GiftCardStatus.CREATED or answer["currency_code"] != card.currency_code:
            raise BadAnswer("The integrator's answer to the pay is not an active card of this currency", field="status")
    except (IntegrationFailed, NotConfigured) as exc:
        _fail(move, exc, paid_statuses=GIFTCARD_PAID)
        raise
    fields = _card_fields(answer)
    with _recording(f"payment of {amount} {currency_code} with gift card {code}", answer):
        _apply(card, fields)
        move.ok = True
        move.amount_after = card.amount
        move.status_after = card.status
        move.integrator_status = answer["status"]
        move.answer = answer
        move.completed_at = timezone.now()
        move.save(update_fields=["ok", "amount_after", "status_after", "integrator_status", "answer", "completed_at"])
    return GiftCardPayment(card=card, move=move, replayed=False)


_Pay = TypeVar("_Pay", GiftCardMove, CustomerAccountPayment)


def _reserve(model: type[_Pay], earlier: Callable[[], _Pay | None], fields: Mapping[str, Any]) -> tuple[_Pay, bool]:
    """Create a pay's pending row (``fields``), which reserves its identifier: a concurrent retry with the same
    identifier fails here on the unique constraint instead of paying again. Returns the new row and False, or the
    row of the retry that came first (``earlier()``) and True: that one is to be replayed."""
    try:
        with transaction.atomic():
            return model.objects.create(**fields), False
    except IntegrityError:
        previous = earlier()
        if previous is None:
            raise
        return previous, True


# A gift card pay succeeds on any 2xx; a customer account pay only on 200 (spec: Errors 3).
GIFTCARD_PAID = range(200, 300)
ACCOUNT_PAID = range(200, 201)


def _fail(row: GiftCardMove | CustomerAccountPayment, exc: ServiceError, *, paid_statuses: range) -> None:
    """Mark a pending pay failed, or leave it pending with the error when its outcome is unknown."""
    unknown = _unknown_outcome(exc, paid_statuses=paid_statuses)
    row.ok = None if unknown else False
    row.error = ("outcome unknown: " if unknown else "") + exc.message[:2000]
    row.completed_at = timezone.now()
    row.save(update_fields=["ok", "error", "completed_at"])
    if unknown:
        logger.error("pay %s (%s): outcome unknown: %s", row.pk, type(row).__name__, exc.message)
        exc.message += "; the payment may have been made: check the balance before trying again"


# --- customer accounts -----------------------------------------------------------------------------------


def read_customer_account(*, account: Account, customer_id: str, currency_code: str, shop_id: str = "") -> Decimal:
    """Spec: Endpoints B, customer account read: ``customer_id``, ``currency_code`` -> the balance. Any
    non-200 answer is an error."""
    values = {
        "customer_id": customer_id,
        "currency_code": currency_code,
        "shop_id": place_values(account=account, shop_id=shop_id)["shop_id"],
    }
    result = runtime.call(account=account, kind="customer_account_read", values=values)
    if result.status_code != 200:
        raise IntegrationFailed(
            f"The integrator answered {result.status_code}, not 200", upstream_status=result.status_code
        )
    answer = require_valid("customer_account_read", result.data)
    balance: Decimal = Decimal(answer["amount"])
    return balance


def _customer(*, account: Account, customer_id: str, shop_id: str) -> dict[str, Any] | None:
    """The customer ``customer_id`` from the customer lookup, balance normalised; None when no lookup is
    configured (nothing then tells the service the credit limit)."""
    try:
        result = runtime.call(
            account=account,
            kind="customer_lookup",
            values={"search_term": customer_id, **place_values(account=account, shop_id=shop_id)},
        )
    except NotConfigured:
        return None
    customers, problems = validate("customer_lookup", result.data)
    if customers is None:
        raise BadAnswer(f"The integrator's customer lookup is not an array: {problems[:1]}", field="answer")
    for customer in customers:
        if customer["identifier"] == customer_id:
            return normalise_balance(customer)
    # The customer's own element may be the invalid one: refuse rather than decide without its limit.
    if problems:
        raise BadAnswer("The integrator's customer lookup does not match the spec", field=problems[0]["field"])
    raise NotFound(
        f"The customer lookup does not know customer '{customer_id[:64]}'", field="customer_id", code="unknown_customer"
    )


def enforce_credit_rule(
    *,
    account: Account,
    customer_id: str,
    purchase_amount: Decimal,
    currency_code: str,
    shop_id: str = "",
) -> None:
    """Spec: Customer, rule 1 (and ``block_sales``): refuse a customer-account payment the customer may not make.
    Every payment from a customer account is one on credit, so the rule holds whatever payment type the POS names
    (an ``invoice``, ``customer_account``, ``customer_account.integration`` or a name of its own). The customer
    comes from the customer lookup; a balance it lacks is read from the customer account integration when one is
    configured."""
    customer = _customer(account=account, customer_id=customer_id, shop_id=shop_id)
    if customer is None:
        return
    if customer.get("block_sales"):
        raise Conflict("Sales to this customer are blocked", field="customer_id", code="sales_blocked")
    if customer.get("credit_limit") is not None and customer.get("balance") is None:
        # Without a customer account integration credit_refusal counts the missing balance as 0.
        with contextlib.suppress(NotConfigured):
            customer["balance"] = read_customer_account(
                account=account, customer_id=customer_id, currency_code=currency_code, shop_id=shop_id
            )
    reason = credit_refusal(customer=customer, purchase_amount=purchase_amount)
    if reason:
        raise ServiceError(reason, field="payment_type", code="credit_limit_exceeded")


@dataclass(frozen=True)
class AccountPayment:
    payment: CustomerAccountPayment
    replayed: bool


def _replay_account_payment(
    payment: CustomerAccountPayment, *, customer_id: str, amount: Decimal, currency_code: str
) -> AccountPayment:
    if (
        payment.customer_id != customer_id
        or payment.requested_amount != amount
        or payment.currency_code != currency_code
    ):
        raise Conflict(
            f"Identifier '{payment.identifier[:64]}' was used for another payment", field="identifier", code="reused"
        )
    if payment.ok is None:
        raise Conflict(
            "The payment with this identifier is in progress or its outcome is unknown: read the customer "
            "account's balance before paying with a new identifier",
            field="identifier",
            code="payment_pending",
        )
    return AccountPayment(payment=payment, replayed=True)


def _account_pay_values(
    *,
    account: Account,
    customer_id: str,
    amount: Decimal,
    currency_code: str,
    payment_type: str,
    purchase_amount: Decimal | None,
    shop_id: str,
) -> dict[str, Any]:
    """Check a customer account payment before anything is reserved (amount's places, the shop, the credit
    rule, in that order) and return the values the integrator is called with. The purchase defaults to the
    amount paid."""
    check_places(amount, currency_code)
    purchase = amount if purchase_amount is None else purchase_amount
    places = place_values(account=account, shop_id=shop_id)
    enforce_credit_rule(
        account=account,
        customer_id=customer_id,
        purchase_amount=purchase,
        currency_code=currency_code,
        shop_id=shop_id,
    )
    return {
        "customer_id": customer_id,
        "amount": amount,
        "currency_code": currency_code,
        "purchase_amount": purchase,
        "payment_type": payment_type,
        "shop_id": places["shop_id"],
    }


def _ask_account_pay(*, account: Account, values: Mapping[str, Any]) -> tuple[dict[str, Any], Decimal]:
    """Call the customer account pay integration; return its checked answer and the amount it used. Only a 200
    with a positive amount is a payment (spec: Errors 3)."""
    result = runtime.call(account=account, kind="customer_account_pay", values=values)
    if result.status_code != 200:
        raise IntegrationFailed(
            f"The integrator answered {result.status_code}, not 200: the payment failed",
            upstream_status=result.status_code,  # not in ACCOUNT_PAID: a certain failure (spec: Errors 3)
        )
    try:
        answer: dict[str, Any] = require_valid("customer_account_pay", result.data)
    except BadAnswer as exc:
        exc.upstream_status = result.status_code
        raise
    used = Decimal(answer["amount"])
    if used < 0:
        raise BadAnswer("The integrator used a negative amount", field="amount", upstream_status=200)
    if used == 0:
        raise IntegrationFailed("The integrator used nothing: the payment failed", field="amount")
    return answer, used


def _record_account_payment(
    payment: CustomerAccountPayment, *, answer: dict[str, Any], used: Decimal, amount: Decimal
) -> None:
    """Record a confirmed payment with the amount the integrator used, which may differ from ``amount`` (asked
    for): the difference is logged, the used amount is the one recorded and answered."""
    if used != amount:
        logger.warning(
            "customer account pay %s: asked %s %s, the integrator used %s",
            payment.pk,
            amount,
            payment.currency_code,
            used,
        )
    with _recording(f"customer account payment of {used} {payment.currency_code} for {payment.customer_id}", answer):
        payment.ok = True
        payment.used_amount = used
        payment.answer = answer
        payment.completed_at = timezone.now()
        payment.save(update_fields=["ok", "used_amount", "answer", "completed_at"])


def pay_customer_account(
    *,
    account: Account,
    customer_id: str,
    amount: Decimal,
    currency_code: str,
    payment_type: str,
    purchase_amount: Decimal | None = None,
    identifier: str = "",
    shop_id: str = "",
) -> AccountPayment:
    """Spec: Endpoints B, customer account pay; Customer rule 1; Errors 3. The credit rule is enforced first;
    then the integrator pays: any non-200 is a failed payment (nothing recorded as paid), and the amount it
    used is recorded and answered as it is, even when it differs from the one asked for."""
    if identifier:
        previous = selectors.customer_account_payment_by_identifier(account=account, identifier=identifier)
        if previous is not None:
            return _replay_account_payment(
                previous, customer_id=customer_id, amount=amount, currency_code=currency_code
            )
    values = _account_pay_values(
        account=account,
        customer_id=customer_id,
        amount=amount,
        currency_code=currency_code,
        payment_type=payment_type,
        purchase_amount=purchase_amount,
        shop_id=shop_id,
    )
    payment, earlier = _reserve(
        CustomerAccountPayment,
        lambda: selectors.customer_account_payment_by_identifier(account=account, identifier=identifier),
        {
            "account": account,
            "customer_id": customer_id,
            "identifier": identifier,
            "payment_type": payment_type,
            "currency_code": currency_code,
            "requested_amount": amount,
            "purchase_amount": purchase_amount,
            "shop_id": shop_id,
        },
    )
    if earlier:
        return _replay_account_payment(payment, customer_id=customer_id, amount=amount, currency_code=currency_code)
    try:
        answer, used = _ask_account_pay(account=account, values=values)
    except (IntegrationFailed, NotConfigured) as exc:
        _fail(payment, exc, paid_statuses=ACCOUNT_PAID)
        raise
    _record_account_payment(payment, answer=answer, used=used, amount=amount)
    return AccountPayment(payment=payment, replayed=False)
