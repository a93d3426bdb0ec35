"""Reads of the catalog: products, expenses, newsletter signups and product edit events.

Every selector takes the account first. ``product_document`` is a product's spec JSON (spec: Product), the
form both the REST API answers with and product edit events carry.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.db.models import Q, QuerySet

from accounts.models import Account
from ledger.models import Expense, NewsletterSignup, Product, ProductEditEvent

# Spec: Product, in the spec's order; optional fields are left out when absent (None or a blank string).
PRODUCT_OPTIONAL_FIELDS = (
    "description",
    "barcode",
    "image_url",
    "product_group",
    "retail_price",
    "cost_price",
    "taxes",
)


def product_document(product: Product) -> dict[str, Any]:
    """Spec: Product. ``{"id", "name", ...}`` without the optional fields the product does not have.

    ``taxes: []`` is kept: an empty list (no tax at all) is not the same as absent (the market's default).
    """
    document: dict[str, Any] = {"id": product.product_id, "name": product.name}
    for name in PRODUCT_OPTIONAL_FIELDS:
        value = getattr(product, name)
        if value is None or value == "":
            continue
        if name == "cost_price":
            # 12.500000 from the column reads 12.5 again, and 100.000000 reads 100, not 1E+2.
            value = Decimal(value)
            value = value.quantize(Decimal(1)) if value == value.to_integral_value() else value.normalize()
        document[name] = value
    return document


def search_text_of(name: Any) -> str:
    """Every language's name, lower case, one per line: what ``?search=`` matches a substring of."""
    names = name.values() if isinstance(name, dict) else [name]
    return "\n".join(str(n).lower() for n in names)


def products(
    *,
    account: Account,
    search: str | None = None,
    barcode: str | None = None,
    product_group: str | None = None,
) -> QuerySet[Product]:
    """Products of the account by id. ``search`` matches the id or the barcode exactly, or a substring of
    any language's name, case-insensitively."""
    queryset = Product.objects.filter(account=account)
    if search:
        queryset = queryset.filter(
            Q(product_id=search) | Q(barcode=search) | Q(search_text__contains=search.strip().lower())
        )
    if barcode:
        queryset = queryset.filter(barcode=barcode)
    if product_group:
        queryset = queryset.filter(product_group=product_group)
    return queryset.order_by("product_id")


def product_by_id(*, account: Account, product_id: str) -> Product | None:
    return Product.objects.filter(account=account, product_id=product_id).first()


def product_edit_events(*, account: Account, product_id: str | None = None) -> QuerySet[ProductEditEvent]:
    """Product edit events of the account, newest first."""
    queryset = ProductEditEvent.objects.filter(account=account)
    if product_id:
        queryset = queryset.filter(product_id=product_id)
    return queryset.order_by("-id")


def expenses(*, account: Account) -> QuerySet[Expense]:
    return Expense.objects.filter(account=account).order_by("expense_id")


def expense_by_id(*, account: Account, expense_id: str) -> Expense | None:
    """The expense a sale line's ``behavior.expense.identifier`` names, or None."""
    return Expense.objects.filter(account=account, expense_id=expense_id).first()


def newsletter_signups(
    *, account: Account, email: str | None = None, stock_location: str | None = None
) -> QuerySet[NewsletterSignup]:
    """Newsletter signups of the account, newest first; ``email`` matches case-insensitively."""
    queryset = NewsletterSignup.objects.filter(account=account).select_related(
        "stock_location", "register", "register__stock_location"
    )
    if email:
        queryset = queryset.filter(email__iexact=email.strip())
    if stock_location:
        queryset = queryset.filter(stock_location__identifier=stock_location)
    return queryset.order_by("-id")
