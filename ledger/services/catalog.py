"""Writes of the catalog: products (with their product edit events), expenses and newsletter signups.

Spec sections: Product, Shared types (L10nString, MarketPrice), Expense, Events (product edit events,
newsletter signup events). The ``data`` these services take is a body already checked by the schema nodes
of ``ledger.bodies.catalog``; what needs the account (markets, registers, shops, duplicates) is
checked here. Every product change writes its ``ProductEditEvent`` and enqueues it for exports in the
same transaction, so a rolled-back change exports nothing and a committed one is never lost.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts import audit
from accounts.models import Account, Market, Register, StockLocation
from accounts.services import delete_owned, unique_in_account
from core import outbox
from core.errors import InvalidInput, NotFound, ServiceError
from core.jsonenc import epoch
from ledger.models import Expense, NewsletterSignup, Product, ProductEditEvent
from ledger.outbox import product_event_key, signup_key
from ledger.selectors.catalog import PRODUCT_OPTIONAL_FIELDS, product_by_id, product_document, search_text_of

# Model column of each optional spec field and its "absent" value: blank for text columns, null for JSON.
_ABSENT: dict[str, Any] = {
    "description": None,
    "barcode": "",
    "image_url": "",
    "product_group": "",
    "retail_price": None,
    "cost_price": None,
    "taxes": None,
}
# Signups are queued by offline POS apps and sent later, but never from the future (beyond clock skew).
SIGNUP_CLOCK_SKEW = timedelta(hours=24)
SIGNUP_OLDEST = Decimal(946_684_800)  # 2000-01-01: an earlier time is an unset device clock


def _unknown_markets(*, account: Account, markets: list[str], field: str) -> None:
    """A MarketPrice or per-market taxes object may only name markets of the account (400 per market)."""
    known = set(Market.objects.filter(account=account, identifier__in=markets).values_list("identifier", flat=True))
    errors = [
        {
            "field": f"{field}.{market[:100]}",
            "message": f"'{market[:100]}' is not a market of the account",
            "code": "unknown",
        }
        for market in markets
        if market not in known
    ]
    if errors:
        raise InvalidInput(errors)


def check_product_references(*, account: Account, data: Mapping[str, Any]) -> None:
    """Spec: Product ``retail_price``: an object names only markets of the account. Raises InvalidInput."""
    price = data.get("retail_price")
    if isinstance(price, dict):
        _unknown_markets(account=account, markets=list(price), field="retail_price")


def check_expense_references(*, account: Account, data: Mapping[str, Any]) -> None:
    """Spec: Expense ``taxes`` keyed by market: only markets of the account. Raises InvalidInput."""
    taxes = data.get("taxes")
    if isinstance(taxes, dict):
        _unknown_markets(account=account, markets=list(taxes), field="taxes")


def _record(
    *,
    account: Account,
    action: str,
    target_type: str,
    target_id: str,
    before: Mapping[str, Any] | None = None,
    after: Mapping[str, Any] | None = None,
) -> None:
    """A product or expense change in the audit trail (``accounts.audit``), shown by its spec id."""
    audit.record(
        account=account,
        action=action,
        target_type=target_type,
        target_id=target_id,
        target=target_id,
        before=before,
        after=after,
    )


# --- Products ------------------------------------------------------------------------------------------


def _apply_product(product: Product, data: Mapping[str, Any], *, replace: bool) -> None:
    """Set the spec fields on the row. ``replace`` (create, PUT): an omitted optional field becomes absent;
    otherwise (PATCH) only the given fields change, ``None`` making one absent."""
    if "name" in data:
        product.name = data["name"]
        product.search_text = search_text_of(data["name"])
    for name in PRODUCT_OPTIONAL_FIELDS:
        if name not in data and not replace:
            continue
        value = data.get(name)
        if value is None:
            value = _ABSENT[name]
        elif name == "cost_price":
            value = Decimal(value)
        setattr(product, name, value)


def _emit_product_event(
    *,
    account: Account,
    event: str,
    document: dict[str, Any],
    changed: list[str] | None = None,
) -> ProductEditEvent:
    """Spec: Events, product edit events: the row and its export entries, in the caller's transaction."""
    payload: dict[str, Any] = {
        "event": event,
        "product": document,
        "account": account.identifier,
        "timestamp": epoch(timezone.now()),
    }
    if changed is not None:
        payload["changed"] = changed
    row = ProductEditEvent.objects.create(account=account, event=event, product_id=document["id"], document=payload)
    # Products belong to the account, not a shop: no stock location, so queues filtered by shop skip them.
    outbox.offer(
        account=account,
        entity_type=outbox.EntityType.PRODUCT_EDIT_EVENTS,
        entries=[outbox.Entry(object_id=row.pk, element_key=product_event_key(row))],
    )
    return row


def create_product(*, account: Account, data: Mapping[str, Any]) -> Product:
    """Spec: Product, created; emits a ``create`` product edit event with the whole product."""
    check_product_references(account=account, data=data)
    product = Product(account=account, product_id=data["id"])
    _apply_product(product, data, replace=True)
    message = f"A product with the id '{product.product_id}' already exists."
    with transaction.atomic():
        # A concurrent create of the same id is a 400 too, not a 500.
        with unique_in_account(
            account=account, instance=product, field="product_id", message=message, error_field="id"
        ):
            product.save()
        document = product_document(product)
        _emit_product_event(account=account, event=ProductEditEvent.Event.CREATE, document=document)
        _record(account=account, action="created", target_type="product", target_id=product.product_id, after=document)
    return product


def _locked(*, account: Account, product: Product) -> Product:
    # Locked so that two concurrent changes each diff against the state the other left, not a stale one.
    row = Product.objects.select_for_update().filter(pk=product.pk, account=account).first()
    if row is None:
        raise NotFound(f"The product '{product.product_id}' no longer exists.")
    return row


def update_product(*, account: Account, product: Product, data: Mapping[str, Any], partial: bool = False) -> Product:
    """Spec: Product, changed (PUT replaces: omitted optional fields become absent; PATCH changes the given
    ones). Emits an ``update`` event with the whole new product and the names of the changed fields, or
    nothing at all when nothing changed. The id cannot change: a product with another id is another product."""
    if "id" in data and data["id"] != product.product_id:
        raise ServiceError(
            "The id of a product cannot change; create a product with the new id and delete this one.",
            field="id",
            code="immutable",
        )
    check_product_references(account=account, data=data)
    with transaction.atomic():
        row = _locked(account=account, product=product)
        before = product_document(row)
        _apply_product(row, data, replace=not partial)
        after = product_document(row)
        changed = [key for key in ("name", *PRODUCT_OPTIONAL_FIELDS) if before.get(key) != after.get(key)]
        if not changed:
            return row  # nothing to mirror: no event, and updated_at keeps telling when it last changed
        row.save(update_fields=["name", "search_text", *PRODUCT_OPTIONAL_FIELDS, "updated_at"])
        _emit_product_event(account=account, event=ProductEditEvent.Event.UPDATE, document=after, changed=changed)
        _record(
            account=account,
            action="changed",
            target_type="product",
            target_id=row.product_id,
            before=before,
            after=after,
        )
    return row


def delete_product(*, account: Account, product: Product) -> None:
    """Spec: Product, deleted; emits a ``delete`` event carrying the product's last state."""
    with transaction.atomic():
        row = _locked(account=account, product=product)
        document = product_document(row)
        row.delete()
        _emit_product_event(account=account, event=ProductEditEvent.Event.DELETE, document=document)
        _record(account=account, action="deleted", target_type="product", target_id=document["id"])


# --- Expenses ------------------------------------------------------------------------------------------


def create_expense(*, account: Account, data: Mapping[str, Any]) -> Expense:
    """Spec: Expense, created (registers book sale lines against it by ``behavior.expense.identifier``)."""
    check_expense_references(account=account, data=data)
    expense = Expense(account=account, expense_id=data["id"], name=data["name"], taxes=data.get("taxes"))
    message = f"An expense with the id '{expense.expense_id}' already exists."
    with unique_in_account(account=account, instance=expense, field="expense_id", message=message, error_field="id"):
        expense.save()
        _record(
            account=account,
            action="created",
            target_type="expense",
            target_id=expense.expense_id,
            after=_expense_fields(expense),
        )
    return expense


def update_expense(*, account: Account, expense: Expense, data: Mapping[str, Any], partial: bool = False) -> Expense:
    """Spec: Expense, changed (PUT replaces, PATCH changes the given fields; ``taxes: null`` clears)."""
    if expense.account_id != account.pk:
        raise ValueError("the expense belongs to another account")
    if "id" in data and data["id"] != expense.expense_id:
        raise ServiceError("The id of an expense cannot change; sales refer to it by id.", field="id", code="immutable")
    check_expense_references(account=account, data=data)
    before = _expense_fields(expense)
    if "name" in data:
        expense.name = data["name"]
    if "taxes" in data or not partial:
        expense.taxes = data.get("taxes")
    with transaction.atomic():
        expense.save(update_fields=["name", "taxes"])
        _record(
            account=account,
            action="changed",
            target_type="expense",
            target_id=expense.expense_id,
            before=before,
            after=_expense_fields(expense),
        )
    return expense


def _expense_fields(expense: Expense) -> dict[str, Any]:
    """Spec: Expense, as the audit trail compares it."""
    return {"id": expense.expense_id, "name": expense.name, "taxes": expense.taxes}


def delete_expense(*, account: Account, expense: Expense) -> None:
    """Spec: Expense, deleted. Sales already booked keep their copy of the expense in their documents."""
    delete_owned(account=account, instance=expense, target_id=expense.expense_id)


@dataclass(frozen=True)
class CatalogWrites:
    """The services that write one kind of catalog row, for the API and the admin alike (both write only
    through them, so every write is validated and emits what it must). ``keyword`` is the row's argument name."""

    keyword: str
    create: Callable[..., Any]
    update: Callable[..., Any]
    delete: Callable[..., None]

    def updated(self, row: Any, *, account: Account, data: Mapping[str, Any], partial: bool = False) -> Any:
        return self.update(account=account, data=data, partial=partial, **{self.keyword: row})

    def deleted(self, row: Any, *, account: Account) -> None:
        self.delete(account=account, **{self.keyword: row})


PRODUCT_WRITES = CatalogWrites("product", create_product, update_product, delete_product)
EXPENSE_WRITES = CatalogWrites("expense", create_expense, update_expense, delete_expense)


# --- Newsletter signups --------------------------------------------------------------------------------


def _signup_place(
    *, account: Account, register_id: str | None, shop_id: str | None
) -> tuple[Register | None, StockLocation | None]:
    register = None
    shop = None
    if register_id is not None:
        register = (
            Register.objects.select_related("stock_location__market")
            .filter(account=account, identifier=register_id)
            .first()
        )
        if register is None:
            raise ServiceError(f"Unknown register '{register_id}'.", field="register_id", code="unknown")
        shop = register.stock_location
    if shop_id is not None:
        if shop is not None and shop.identifier != shop_id:
            raise ServiceError(
                f"The register '{register_id}' belongs to the shop '{shop.identifier}', not '{shop_id}'.",
                field="shop_id",
                code="mismatch",
            )
        shop = StockLocation.objects.select_related("market").filter(account=account, identifier=shop_id).first()
        if shop is None:
            raise ServiceError(f"Unknown shop '{shop_id}'.", field="shop_id", code="unknown")
    return register, shop


def _signup_source(register: Register | None, shop: StockLocation | None) -> dict[str, str]:
    if shop is None:
        return {}
    source = {"market_id": shop.market.identifier, "shop_id": shop.identifier, "shop_name": shop.name}
    if register is not None:
        source |= {"register_id": register.identifier, "register_name": register.name}
    return {key: value for key, value in source.items() if value}


def record_newsletter_signup(*, account: Account, data: Mapping[str, Any]) -> tuple[NewsletterSignup, bool]:
    """Spec: Events, newsletter signup events: one signup from the POS or second-screen app. Returns the signup
    and whether it is new.

    Every call is an event of its own, the same address twice included: the receiving newsletter system
    decides what a repeat means (a re-subscription after an unsubscribe must get through). A call with the
    ``identifier`` of a stored signup is a replay (the app lost the answer): it records nothing."""
    identifier = data.get("identifier", "")
    if identifier:
        stored = NewsletterSignup.objects.filter(account=account, identifier=identifier).first()
        if stored is not None:
            return stored, False
    register, shop = _signup_place(account=account, register_id=data.get("register_id"), shop_id=data.get("shop_id"))
    now = timezone.now()
    timestamp = data.get("timestamp")
    if timestamp is None:
        timestamp = epoch(now)
    elif not SIGNUP_OLDEST <= timestamp <= Decimal(now.timestamp()) + int(SIGNUP_CLOCK_SKEW.total_seconds()):
        raise ServiceError(
            "must be Unix seconds between 2000-01-01 and now (a day of clock skew allowed)",
            field="timestamp",
            code="out_of_range",
        )
    document: dict[str, Any] = {"email": data["email"]}
    for name in ("first_name", "last_name", "name"):
        if data.get(name):
            document[name] = data[name]
    source = _signup_source(register, shop)
    if source:
        document["source"] = source
    document["timestamp"] = timestamp
    with transaction.atomic():
        try:
            with transaction.atomic():
                signup = NewsletterSignup.objects.create(
                    account=account,
                    identifier=identifier,
                    stock_location=shop,
                    register=register,
                    email=data["email"],
                    document=document,
                )
        except IntegrityError:  # the same identifier, recorded by a concurrent request
            return NewsletterSignup.objects.get(account=account, identifier=identifier), False
        entry = outbox.Entry(signup.pk, signup_key(signup), stock_location_id=shop.pk if shop else None)
        outbox.offer(account=account, entity_type=outbox.EntityType.NEWSLETTER_SIGNUPS, entries=[entry])
    return signup, True


@dataclass(frozen=True)
class ImportedProduct:
    product: Product
    outcome: str  # "created", "updated" or "unchanged"


def import_product(*, account: Account, data: Mapping[str, Any]) -> ImportedProduct:
    """Spec: External product lookup: the Product an integrator answered for a scanned code, stored in the
    account: created, or replaced by its ``id`` (a product edit event either way, none when nothing changed).
    ``data`` is checked already (``check_product_references`` included)."""
    existing = product_by_id(account=account, product_id=data["id"])
    if existing is None:
        try:
            return ImportedProduct(create_product(account=account, data=data), "created")
        except ServiceError as exc:
            if exc.code != "duplicate":
                raise
            # Two tills scanned the same new product at once: the other one created it; update it instead.
            existing = product_by_id(account=account, product_id=data["id"])
            if existing is None:
                raise
    before = existing.updated_at
    product = update_product(account=account, product=existing, data=data)
    return ImportedProduct(product, "updated" if product.updated_at != before else "unchanged")
