"""Reads of the gift card record and customer-account payments. Every function takes the account first."""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet

from accounts.models import Account, StockLocation
from giftcards.models import CustomerAccountPayment, GiftCard, GiftCardMove
from ledger.models import Sale, SaleKind
from ledger.selectors import checkouts as ledger_selectors


def giftcard_by_code(*, account: Account, code: str) -> GiftCard | None:
    return GiftCard.objects.filter(account=account, code=code).first()


def giftcards(*, account: Account) -> QuerySet[GiftCard]:
    return GiftCard.objects.filter(account=account)


def moves_of(*, account: Account, code: str) -> QuerySet[GiftCardMove]:
    return GiftCardMove.objects.filter(account=account, code=code).order_by("id")


def pay_move_by_identifier(*, account: Account, identifier: str) -> GiftCardMove | None:
    """The pay holding ``identifier``: pending or done (a failed pay frees its identifier)."""
    return (
        GiftCardMove.objects.filter(account=account, action=GiftCardMove.Action.PAY, identifier=identifier)
        .filter(Q(ok__isnull=True) | Q(ok=True))
        .select_related("gift_card")
        .first()
    )


def customer_account_payment_by_identifier(*, account: Account, identifier: str) -> CustomerAccountPayment | None:
    return (
        CustomerAccountPayment.objects.filter(account=account, identifier=identifier)
        .filter(Q(ok__isnull=True) | Q(ok=True))
        .first()
    )


def shop(*, account: Account, shop_id: str) -> StockLocation | None:
    return StockLocation.objects.filter(account=account, identifier=shop_id).select_related("market").first()


def paid_sale(*, account: Account, sale_id: str) -> Sale | None:
    """The stored, not voided sale ``sale_id`` of a not voided checkout. A checkout is stored only once paid
    (spec: Checkout), so such a sale is fully paid; a voided one never was."""
    sale = (
        ledger_selectors.sales(account=account, identifier=sale_id, voided=False, kind=SaleKind.SALE)
        .filter(checkout__voided=False)
        .first()
    )
    return sale


def sale_sells_giftcard(sale: Sale, code: str) -> bool:
    """Whether a line item of the sale carries ``behavior.giftcard.code == code`` (spec: Sale, behavior)."""
    summary: Any = (sale.document or {}).get("summary") or {}
    for line in summary.get("line_items") or ():
        behavior = line.get("behavior") if isinstance(line, dict) else None
        giftcard = behavior.get("giftcard") if isinstance(behavior, dict) else None
        if isinstance(giftcard, dict) and giftcard.get("code") == code:
            return True
    return False
