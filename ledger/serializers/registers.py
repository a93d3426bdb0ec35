"""Bodies of the register POS endpoints (declared bodies) and the statement read API's serializers."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.declare import Body, BodyMeta, Field, optional
from core.nodes import Arr, Currency, Int, Num, Str
from core.serializers import JSONField, read_only_meta
from ledger.definitions import Cashier
from ledger.models import RegisterCloseStatement, RegisterPeriod
from ledger.statements import EVENT_COUNT_KEYS

# --- POS bodies (declared once: they validate and are the request schemas) ----------------------------------

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


# --- Output -------------------------------------------------------------------------------------------


class RegisterPeriodOutputSerializer(serializers.ModelSerializer):
    register_id = by_identifier(source="register", help_text="The register's identifier.")

    Meta = read_only_meta(
        RegisterPeriod,
        ["register_id", "sequence_number", "opened_at", "cash_total_at_open", "closed_at"],
        extra_kwargs={
            "sequence_number": {"help_text": "The period's number: 1 for the register's first."},
            "opened_at": {"help_text": "When the register was opened."},
            "cash_total_at_open": {"help_text": "Cash in the drawer at the opening, in the base currency."},
            "closed_at": {"help_text": "When it was closed; null while open."},
        },
    )


@extend_schema_field(OpenApiTypes.OBJECT)
class StatementDocumentField(JSONField):
    """The statement exactly as exported (spec: Register close statement)."""


class RegisterCloseStatementOutputSerializer(serializers.ModelSerializer):
    register = by_identifier(help_text="The register's identifier.")
    stock_location = serializers.SerializerMethodField(help_text="Identifier of the shop it was made in.")
    document = StatementDocumentField(
        read_only=True, help_text="The statement as exported: `ExportRegisterCloseStatementsElement`."
    )

    Meta = read_only_meta(
        RegisterCloseStatement,
        [
            "id",
            "register",
            "stock_location",
            "sequence_number",
            "reconciliation_time",
            "created_at",
            "document",
        ],
        extra_kwargs={
            "id": {"help_text": "The statement's id in /api/v1/register-close-statements/."},
            "sequence_number": {"help_text": "The number of the period closed."},
            "reconciliation_time": {"help_text": "When the register was closed."},
            "created_at": {"help_text": "When the service stored it."},
        },
    )

    def get_stock_location(self, statement: RegisterCloseStatement) -> str:
        return str(statement.document.get("source", {}).get("shop_id", ""))


class RegisterCloseStatementFilterSerializer(serializers.Serializer):
    register = serializers.CharField(max_length=64, required=False, allow_blank=True)
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)
