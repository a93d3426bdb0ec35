"""The bodies of the gift card and customer account POS API (``giftcards.pos_api``), declared once
(``core.declare``): each validates a body (or the reads' query parameters) and is its OpenAPI request schema
(spec: Gift card entity, Customer account payment entity).

The answers are declared here too, as their OpenAPI schemas: the customer account's balance and payment, and a
gift card payment. Create, activate and read answer the Gift card entity itself, the integrators' answer model
(``integrations.bodies.answers.GiftCard``, one component for both).
"""

from __future__ import annotations

from core.declare import Body, BodyMeta, Field, optional
from core.nodes import Bool, Components, Currency, Num, Schema, Str
from integrations.bodies.answers import GiftCard, published

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


# --- answers ---------------------------------------------------------------------------------------------

REPLAYED = Field(
    Bool(),
    description="True: the answer of the earlier pay with this `identifier`, nothing paid again; false: paid now.",
)
ANSWERED_IDENTIFIER = optional(IDENTIFIER, description="The app's id of the payment, as sent; null without one.")


class PaidWithGiftCard(Body, schema_name="PosGiftCardPayment"):
    """The answer of a payment with a gift card: the card as it stood right after the payment (the Gift card
    entity, status 3 once its amount is 0) and the payment."""

    amount_used = Field(Num(positive=True), description="The amount paid with the card, in its currency's major unit.")
    identifier = ANSWERED_IDENTIFIER
    replayed = REPLAYED

    @classmethod
    def object_schema(cls, components: Components) -> Schema:
        """The payment's fields and the Gift card entity's (``allOf``: the entity's one component)."""
        schema: Schema = BodyMeta.object_schema(cls, components)
        return {"allOf": [published(GiftCard)], **schema}


class CustomerAccountBalance(Body, schema_name="PosCustomerAccountBalance"):
    """The answer of a customer account read: the balance the integrator answered (its `amount`)."""

    customer_id = Field(IDENTIFIER, description="The customer, as in the path.")
    currency_code = Field(Currency(), description="ISO 4217 code of the amount, as asked.")
    amount = Field(Num(), description="The balance, in `currency_code`'s major unit; below 0 the customer owes.")


class PaidFromCustomerAccount(Body, schema_name="PosCustomerAccountPayment"):
    """The answer of a payment from a customer account: what was asked and what the integrator used."""

    customer_id = Field(IDENTIFIER, description="The customer, as in the path.")
    currency_code = CURRENCY
    requested_amount = Field(Num(positive=True), description="The `amount` asked for, in `currency_code`.")
    amount = Field(
        Num(positive=True),
        description="The amount the integrator actually used, in `currency_code`: the one recorded as paid.",
    )
    differs = Field(Bool(), description="True: `amount` is not `requested_amount`.")
    partial = Field(Bool(), description="True: `amount` is less than `requested_amount`.")
    payment_type = Field(Str(max_length=64), description="The payment type, as sent.")
    identifier = ANSWERED_IDENTIFIER
    replayed = REPLAYED
