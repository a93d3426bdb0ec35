"""The kinds of runtime integration (spec: Runtime integrations) and the placeholders each may use.

Its own module, importing nothing, because the models (the ``kind`` field's choices), the template checks and the
call path all read it.
"""

from __future__ import annotations

# The kinds of runtime integration (the field ``kind``, admin and REST alike), with the placeholders each one's
# templates may use (documented in the README and the admin help text).
KINDS: dict[str, tuple[str, ...]] = {
    "product_search": ("search_term", "market", "currency_code", "shop_id", "limit"),
    "product_lookup": ("barcode", "market", "currency_code", "shop_id"),
    "customer_lookup": ("search_term", "market", "shop_id"),
    "customer_discounts": ("customer_id", "market", "currency_code"),
    "shipping_options": (
        "shop_id",
        "currency_code",
        "market",
        "name",
        "street",
        "city",
        "postal_code",
        "country",
        "country_code",
        "email",
        "phone",
    ),
    "giftcard_create": ("amount", "currency_code", "shop_id", "market"),
    # The details of the inactive card too (spec: Gift card status, "the activate call carries the details of the
    # inactive card"), its integrator-private data among them.
    "giftcard_activate": (
        "code",
        "id",
        "amount",
        "currency_code",
        "shop_id",
        "sale_id",
        "create_date",
        "expiry_date",
        "status",
        "external_giftcard",
    ),
    "giftcard_read": ("code", "currency_code", "shop_id"),
    "giftcard_pay": ("code", "id", "amount", "currency_code", "shop_id", "sale_id"),
    "customer_account_read": ("customer_id", "currency_code", "shop_id"),
    "customer_account_pay": ("customer_id", "amount", "currency_code", "purchase_amount", "payment_type", "shop_id"),
}

# The kinds whose call may move money on the integrator's side (a card activated with an amount, a card or a
# customer account paid from): a test of one runs only once a person confirms it.
MOVES_MONEY: frozenset[str] = frozenset({"giftcard_activate", "giftcard_pay", "customer_account_pay"})
