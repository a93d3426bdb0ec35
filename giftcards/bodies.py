"""The bodies of the gift card and customer account POS API (``giftcards.pos_api``), declared once
(``core.declare``): each validates a body (or the reads' query parameters) and is its OpenAPI request schema
(spec: Gift card entity, Customer account payment entity).
"""

from __future__ import annotations

from core.declare import Body, Field, optional
from core.nodes import Currency, Num, Str

SHOP_ID = Str(max_length=64)
IDENTIFIER = Str()
AMOUNT = Field(Num(positive=True), description="In `currency_code`'s major unit; above 0.")
CURRENCY = Field(Currency(), description="ISO 4217 code of the amounts.")
SHOP_DESCRIPTION = "The shop (stock location identifier, at most 64 characters)."


class CreateGiftCard(Body, schema_name="PosGiftCardCreate"):
    """A gift card added to the basket."""

    amount = AMOUNT
    currency_code = CURRENCY
    shop_id = optional(SHOP_ID, description=SHOP_DESCRIPTION)


class ActivateGiftCard(Body, schema_name="PosGiftCardActivate"):
    """The paid sale that sold the card."""

    sale_id = Field(Str(), description="A stored sale with a line item whose `behavior.giftcard.code` is the card's.")
    shop_id = optional(SHOP_ID, description=SHOP_DESCRIPTION)


class PayWithGiftCard(Body, schema_name="PosGiftCardPay"):
    """A payment with the card."""

    amount = AMOUNT
    currency_code = CURRENCY
    identifier = optional(IDENTIFIER, description="The app's id of the payment: the same again answers the first.")
    sale_id = optional(Str(), description="The sale the payment is for, passed on to the integration.")
    shop_id = optional(SHOP_ID, description=SHOP_DESCRIPTION)


class PayFromCustomerAccount(Body, schema_name="PosCustomerAccountPay"):
    """A payment from the customer's account."""

    amount = AMOUNT
    currency_code = CURRENCY
    purchase_amount = optional(
        Num(minimum=0),
        description="The whole purchase, in `currency_code`, for the credit limit check; default: `amount`.",
    )
    payment_type = Field(Str(max_length=64), description="The payment type used, e.g. `customer_account`, `invoice`.")
    identifier = optional(IDENTIFIER, description="The app's id of the payment: the same again answers the first.")
    shop_id = optional(SHOP_ID, description=SHOP_DESCRIPTION)


class Query(Body, schema_name="PosGiftCardQuery"):
    """The query parameters of the reads (the credentials share the query string)."""

    currency_code = optional(Currency(), description="ISO 4217 code to read the amount in.")
    shop_id = optional(SHOP_ID, description=SHOP_DESCRIPTION)
