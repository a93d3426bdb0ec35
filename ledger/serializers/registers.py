"""The register statement read API's serializers (the register POS bodies: ``ledger.bodies.registers``)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from core.api import by_identifier
from core.serializers import JSONField, read_only_meta
from ledger.models import RegisterCloseStatement, RegisterPeriod

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
