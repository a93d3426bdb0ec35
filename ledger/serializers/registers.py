"""Bodies of the register POS endpoints (schema nodes) and the statement read API's serializers."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.nodes import Arr, Currency, Int, Num, Obj, Str
from core.serializers import JSONField
from ledger.definitions import CASHIER
from ledger.models import RegisterCloseStatement, RegisterPeriod
from ledger.statements import EVENT_COUNT_KEYS

# --- POS bodies (validated with core.nodes nodes: exact error paths, unknown keys ignored) -------------

EVENT_COUNT = Int(minimum=0, maximum=1_000_000_000)

COUNTED_AMOUNT = Obj(
    {
        "payment_type_identifier": Str(),
        "currency_code": Currency(),  # absent: the base currency
        "counted": Num(),  # checked against the currency's minor unit by the service
        "deposited_amount": Num(minimum=0),
    },
    required=("payment_type_identifier", "counted"),
)

CLOSE_REGISTER_BODY = Obj(
    {
        "counted": Arr(COUNTED_AMOUNT, max_items=200),
        "comment": Str(max_length=10_000, allow_blank=True),
        "event_counts": Obj(dict.fromkeys(EVENT_COUNT_KEYS, EVENT_COUNT)),
        "cashier": CASHIER,
        # The app's own id of this close (optional): closing again with it answers the same statement (200).
        "identifier": Str(max_length=255),
    }
)

OPEN_REGISTER_BODY = Obj({"cash_total_at_open": Num(minimum=0)})


class CountedAmountSerializer(serializers.Serializer):
    """OpenAPI description of a ``counted`` entry (validation is ``COUNTED_AMOUNT``)."""

    payment_type_identifier = serializers.CharField(help_text="e.g. cash, card.external.")
    currency_code = serializers.CharField(required=False, help_text="ISO 4217; the base currency when absent.")
    counted = serializers.DecimalField(max_digits=20, decimal_places=6)
    deposited_amount = serializers.DecimalField(
        max_digits=20, decimal_places=6, required=False, help_text="Cash in the base currency only; default 0."
    )


class CloseRegisterInputSerializer(serializers.Serializer):
    """OpenAPI description of the close body (validation is ``CLOSE_REGISTER_BODY``)."""

    counted = CountedAmountSerializer(many=True, required=False)
    comment = serializers.CharField(required=False, help_text="Reason for a reconciliation difference.")
    event_counts = serializers.DictField(
        child=serializers.IntegerField(min_value=0), required=False, help_text="Spec: Events counted."
    )
    cashier = serializers.DictField(required=False, help_text="{identifier, display_name, full_name?}")

    class Meta:
        ref_name = "CloseRegister"


class OpenRegisterInputSerializer(serializers.Serializer):
    cash_total_at_open = serializers.DecimalField(
        max_digits=20,
        decimal_places=6,
        required=False,
        help_text="Cash in the drawer at opening; default: what the last close left in it.",
    )

    class Meta:
        ref_name = "OpenRegister"


# --- Output -------------------------------------------------------------------------------------------


class RegisterPeriodOutputSerializer(serializers.ModelSerializer):
    register_id: serializers.SlugRelatedField = serializers.SlugRelatedField(
        source="register", slug_field="identifier", read_only=True
    )

    class Meta:
        model = RegisterPeriod
        fields = ["register_id", "sequence_number", "opened_at", "cash_total_at_open", "closed_at"]
        read_only_fields = fields
        ref_name = "RegisterPeriod"


@extend_schema_field(OpenApiTypes.OBJECT)
class StatementDocumentField(JSONField):
    """The statement exactly as exported (spec: Register close statement)."""


class RegisterCloseStatementOutputSerializer(serializers.ModelSerializer):
    register: serializers.SlugRelatedField = serializers.SlugRelatedField(slug_field="identifier", read_only=True)
    stock_location = serializers.SerializerMethodField(help_text="Identifier of the shop it was made in.")
    document = StatementDocumentField(read_only=True)

    class Meta:
        model = RegisterCloseStatement
        fields = [
            "id",
            "register",
            "stock_location",
            "sequence_number",
            "reconciliation_time",
            "created_at",
            "document",
        ]
        read_only_fields = fields
        ref_name = "RegisterCloseStatement"

    def get_stock_location(self, statement: RegisterCloseStatement) -> str:
        return str(statement.document.get("source", {}).get("shop_id", ""))


class RegisterCloseStatementFilterSerializer(serializers.Serializer):
    register = serializers.CharField(max_length=64, required=False, allow_blank=True)
    stock_location = serializers.CharField(max_length=64, required=False, allow_blank=True)
