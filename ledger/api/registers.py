"""REST API of register periods and close statements (spec: Register close statement).

POS: ``POST /api/v1/pos/registers/{register_id}/open`` and ``.../close``. Back-office: the statements,
read-only, at ``/api/v1/register-close-statements/``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django.urls import path
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.routers import SimpleRouter

from accounts.scoping import PosView, ReadOnlyViewSet
from core import api as toolkit
from ledger.api.checkouts import SOURCE_EXAMPLE
from ledger.bodies.registers import CloseRegister, OpenRegister
from ledger.selectors import registers as selectors
from ledger.serializers.registers import (
    RegisterCloseStatementFilterSerializer,
    RegisterCloseStatementOutputSerializer,
    RegisterPeriodOutputSerializer,
)
from ledger.services import registers as services

REGISTER_ID = OpenApiParameter("register_id", str, OpenApiParameter.PATH, description="Register identifier.")

_SUMMARY_EXAMPLE = {
    "base_price": 250.0,
    "margin": 80.0,
    "margin_total": 200.0,
    "sub_total": 250.0,
    "total": 250.0,
    "total_discounts": 0.0,
    "total_tax_amount": 50.0,
    "count": 2,
    "item_count": 3.0,
    "vat_amount": 50.0,
    "sales_tax_amount": 0.0,
    "payments": [
        {
            "type": "cash",
            "totals": {
                "base_currency_total": 250.0,
                "base_currency_total_credit": 300.0,
                "base_currency_total_debit": -50.0,
                "base_currency_transaction_count": 2,
                "base_currency_transaction_count_credit": 1,
                "base_currency_transaction_count_debit": 1,
                "total": 250.0,
                "total_credit": 300.0,
                "total_debit": -50.0,
                "transaction_count": 2,
                "transaction_count_credit": 1,
                "transaction_count_debit": 1,
                "foreign_currencies": {},
                "foreign_currencies_credit": {},
                "foreign_currencies_debit": {},
                "foreign_currencies_transaction_count": {},
                "foreign_currencies_transaction_count_credit": {},
                "foreign_currencies_transaction_count_debit": {},
            },
        }
    ],
    "tax_summaries": [{"amount": 50.0, "rate": 0.25, "name": "VAT", "type": "vat"}],
}
STATEMENT_EXAMPLE = {
    "id": 31,
    "register": "reg-1",
    "stock_location": "shop-1",
    "sequence_number": 12,
    "reconciliation_time": "2025-01-15T17:00:00Z",
    "created_at": "2025-01-15T17:00:00Z",
    "document": {
        "base_currency_code": "DKK",
        "comment": "10 kr short",
        "reconciliation_time": 1736960400.0,
        "sequence_number": 12,
        "shop_info": {"vat_number": "DK12345678", "shop_address": {"city": "København V", "name": "Copenhagen"}},
        "source": {key: value for key, value in SOURCE_EXAMPLE.items() if not key.startswith("cashier_")},
        "register_summary": {
            "id": "reg-1-12",
            "opened_at": 1736928000.0,
            "cash_total_at_open": 1000.0,
            "all": _SUMMARY_EXAMPLE,
            "sales": _SUMMARY_EXAMPLE,
            "returns": "…",
            "expenses": "…",
            "all_by_product_group": {"__none__": "…"},
            "sales_by_product_group": {"__none__": "…"},
            "returns_by_product_group": {},
            "cash_drawer_open_count": 3,
            "number_of_aborted_sales": 0,
            "number_of_initiated_sales": 2,
            "voided_count": 0,
            "event_counts": {"cash_drawer_opened": 3, "sale_initiated": 2},
        },
        "reconciliations": [
            {
                "payment_type_identifier": "cash",
                "currency_code": "DKK",
                "should_be_reconciled": True,
                "depositing": "manual",
                "total": 1250.0,
                "counted": 1240.0,
                "deposited_amount": 1000.0,
                "credit": 300.0,
                "debit": -50.0,
                "transaction_count": 2,
                "transaction_count_credit": 1,
                "transaction_count_debit": 1,
            }
        ],
        "timing": {
            "timestamp": 1736960400000,
            "timestamp_string": "2025-01-15T17:00:00.000Z",
            "timezone": "Europe/Copenhagen",
            "timestamp_date_string": "2025-01-15-18-00",
            "timestamp_week_string": "2025-03",
        },
    },
}
CLOSE_EXAMPLE = {
    "counted": [{"payment_type_identifier": "cash", "currency_code": "DKK", "counted": 1240, "deposited_amount": 1000}],
    "comment": "10 kr short",
    "event_counts": {"cash_drawer_opened": 3, "sale_initiated": 2},
    "cashier": {"identifier": "cashier-7", "display_name": "AB"},
}
PERIOD_EXAMPLE = {
    "register_id": "reg-1",
    "sequence_number": 13,
    "opened_at": "2025-01-16T08:00:00Z",
    "cash_total_at_open": "240.000000",
    "closed_at": None,
}


# What the POS register operations share: their tag and the register in the path.
_REGISTER_OPERATION: dict[str, Any] = {
    "tags": ["pos: registers"],
    "parameters": [*toolkit.AUTH_PARAMETERS, REGISTER_ID],
}


# The answers to opening an open register and closing a closed one (``ledger.services.registers``).
ALREADY_OPEN = toolkit.conflict(
    "Already open", "The register 'reg-1' is already open.", field="register_id", code="already_open"
)
NOT_OPEN = toolkit.conflict("Not open", "The register 'reg-1' is not open.", field="register_id", code="not_open")
_NO_REGISTER = "No register 'reg-9'."
UNKNOWN_REGISTER: toolkit.Example = (
    "Unknown register",
    {
        "status": "ERROR",
        "message": _NO_REGISTER,
        "errors": [{"field": "register_id", "message": _NO_REGISTER, "code": "not_found"}],
    },
)


class OpenRegisterView(PosView):
    @extend_schema(
        **_REGISTER_OPERATION,
        summary="Open a register",
        request={"application/json": OpenRegister},
        responses={
            201: RegisterPeriodOutputSerializer,
            **toolkit.error_responses(400, 404, 409, scope="pos", examples={404: UNKNOWN_REGISTER, 409: ALREADY_OPEN}),
        },
        examples=[
            toolkit.request_example("Open with 1000 in the drawer", {"cash_total_at_open": 1000}),
            toolkit.response_example("Period", PERIOD_EXAMPLE, status_code=201),
        ],
    )
    def post(self, request: Request, register_id: str) -> Response:
        """Starts a register period. Without `cash_total_at_open`, the drawer holds what the last close left in it
        (counted cash minus the deposit). 409 when the register is open already. A sale posted to a closed
        register opens it implicitly the same way."""
        data = OpenRegister.validated(self.body())
        cash = data.get("cash_total_at_open")
        period = services.open_register(
            account=self.account,
            register_identifier=register_id,
            cash_total_at_open=None if cash is None else Decimal(cash),  # a whole number is parsed as int
        )
        return Response(RegisterPeriodOutputSerializer(period).data, status=status.HTTP_201_CREATED)


class CloseRegisterView(PosView):
    @extend_schema(
        **_REGISTER_OPERATION,
        summary="Close a register",
        request={"application/json": CloseRegister},
        responses={
            201: RegisterCloseStatementOutputSerializer,
            200: OpenApiResponse(
                RegisterCloseStatementOutputSerializer, description="A replay of a stored close (same `identifier`)."
            ),
            **toolkit.error_responses(400, 404, 409, scope="pos", examples={404: UNKNOWN_REGISTER, 409: NOT_OPEN}),
        },
        examples=[
            toolkit.request_example("Close", CLOSE_EXAMPLE),
            toolkit.response_example("Statement", STATEMENT_EXAMPLE, status_code=201),
            toolkit.response_example("Replayed", STATEMENT_EXAMPLE),
        ],
    )
    def post(self, request: Request, register_id: str) -> Response:
        """Computes the register close statement of the open period from the sales stored for it, closes the
        period and exports the statement. `counted` is required for every reconciled payment type (cash in the
        base currency and each foreign currency taken in cash, and the register's types configured with
        `should_be_reconciled`). 409 when the register is not open. A close posted again with the same
        `identifier` answers 200 with the stored statement."""
        data = CloseRegister.validated(self.body())
        identifier = data.get("identifier", "")
        if identifier:
            replayed = selectors.statement_of_close(
                account=self.account, register_identifier=register_id, identifier=identifier
            )
            if replayed is not None:  # the app lost the answer to this close: the same statement again
                return Response(RegisterCloseStatementOutputSerializer(replayed).data, status=status.HTTP_200_OK)
        statement = services.close_register(
            account=self.account,
            register_identifier=register_id,
            counted=data.get("counted", []),
            comment=data.get("comment"),
            event_counts=data.get("event_counts"),
            cashier=data.get("cashier"),
            identifier=identifier,
        )
        return Response(RegisterCloseStatementOutputSerializer(statement).data, status=status.HTTP_201_CREATED)


STATEMENTS = toolkit.Area(
    "register close statements",
    filters={
        "register": "Only statements of this register (identifier).",
        "stock_location": "Only statements made in this shop (identifier).",
    },
)


@STATEMENTS.reads(
    selectors.register_close_statements,
    RegisterCloseStatementOutputSerializer,
    RegisterCloseStatementFilterSerializer,
    STATEMENT_EXAMPLE,
)
class RegisterCloseStatementViewSet(ReadOnlyViewSet):
    """Register close statements, by id, newest first; never changed. `document` is the statement as exported
    (spec: Register close statement)."""


pos_urls: list[Any] = [
    path("pos/registers/<str:register_id>/open", OpenRegisterView.as_view(), name="pos-register-open"),
    path("pos/registers/<str:register_id>/close", CloseRegisterView.as_view(), name="pos-register-close"),
]


def register(router: SimpleRouter) -> None:
    """Routes of this area under /api/v1/."""
    router.register("register-close-statements", RegisterCloseStatementViewSet, basename="register-close-statement")
