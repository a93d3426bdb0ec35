"""The register POS endpoints' bodies, declared once (they validate and are the request schemas): a period's
opening and close, and the cashier as the register shows them (spec: Register close statement, Cashier)."""

from __future__ import annotations

from core.declare import Body, BodyMeta, Field, optional
from core.nodes import Arr, Currency, Int, Num, Str, Url
from ledger.statements import EVENT_COUNT_KEYS


class Cashier(Body, schema_name="RegisterCashier"):
    """The cashier, as the register shows them."""

    display_name = Field(Str(max_length=64), description="Usually initials (1-64 characters).")
    full_name = optional(Str(max_length=1000), description="The full name (at most 1000 characters).")
    identifier = Field(Str(), description="The cashier's id (1-255 characters).")
    image_url = optional(Url(https_only=True), description="An image of the store associate (an https URL).")


EVENT_COUNT = Int(minimum=0, maximum=1_000_000_000)


class CountedAmount(Body):
    """What was counted for one payment type (and currency) at the close."""

    payment_type_identifier = Field(Str(), description="e.g. cash, card.external.")
    currency_code = optional(Currency(), description="ISO 4217; the base currency when absent.")
    counted = Field(Num(), description="Checked against the currency's minor unit.")
    deposited_amount = optional(Num(minimum=0), description="Cash in the base currency only; default 0.")


# Spec: Events counted: an optional count per event the spec names (``ledger.statements.EVENT_COUNT_KEYS``).
EventCounts = BodyMeta(
    "EventCounts",
    (Body,),
    {
        "__doc__": "Spec: Events counted, each a count of the period.",
        "__module__": __name__,
        **{
            key: optional(
                EVENT_COUNT,
                description=f"How many `{key}` events the register counted in the period (0 to 10^9).",
            )
            for key in EVENT_COUNT_KEYS
        },
    },
)


class CloseRegister(Body):
    """The close of a register period."""

    counted = optional(
        Arr(CountedAmount, max_items=200),
        description="What was counted, per payment type and currency (at most 200); not counted: the expected.",
    )
    comment = optional(Str(max_length=10_000, allow_blank=True), description="Reason for a reconciliation difference.")
    event_counts = optional(EventCounts, description="The register's own counts of the period's events.")
    cashier = optional(Cashier, description="Who closed the register.")
    identifier = optional(
        Str(max_length=255),
        description="The app's own id of this close: closing again with it answers the same statement (200).",
    )


class OpenRegister(Body):
    """The opening of a register period."""

    cash_total_at_open = optional(
        Num(minimum=0), description="Cash in the drawer at opening; default: what the last close left in it."
    )
