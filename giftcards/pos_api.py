"""POS API of gift cards and customer accounts (``/api/v1/pos/...``, ``pos`` scope), each call answered from
the account's runtime integration (spec: Endpoints B, Gift card entity, Customer account payment entity).

``POST pos/giftcards``, ``POST pos/giftcards/{code}/activate``, ``GET pos/giftcards/{code}``,
``POST pos/giftcards/{code}/pay``, ``GET pos/customer-accounts/{customer_id}?currency_code=`` and
``POST pos/customer-accounts/{customer_id}/pay``. A kind with no integration configured answers 404; the
integrator failing answers 502, timing out 504.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.request import Request
from rest_framework.response import Response

from accounts.scoping import PosView
from core.api import (
    AUTH_PARAMETERS,
    Example,
    error_responses,
    invalid,
    optional_slash_paths,
    request_example,
    response_example,
)
from core.declare import Body
from core.errors import InvalidInput
from core.nodes import INVALID, Report
from giftcards import services
from giftcards.bodies import (
    IDENTIFIER,
    ActivateGiftCard,
    CreateGiftCard,
    CustomerAccountBalance,
    PaidFromCustomerAccount,
    PaidWithGiftCard,
    PayFromCustomerAccount,
    PayWithGiftCard,
    Query,
)
from giftcards.models import CustomerAccountPayment
from integrations.bodies.answers import GiftCard, published
from integrations.docs import not_configured_example


def path_value(value: str, name: str) -> str:
    report = Report()
    if IDENTIFIER.check(value, name, report) is INVALID:
        raise InvalidInput(report.errors)
    return value


def query_values(request: Request, *names: str) -> dict[str, Any]:
    """The named query parameters, checked (the credentials share the query string)."""
    result: dict[str, Any] = Query.validated(
        {name: request.query_params[name] for name in names if name in request.query_params}
    )
    return result


def payment_values(body: dict[str, Any]) -> dict[str, Any]:
    """What every payment body says (a gift card's or a customer account's): the amount, exact, in its currency,
    the app's id of the payment and the shop."""
    return {
        "amount": Decimal(body["amount"]),
        "currency_code": body["currency_code"],
        "identifier": body.get("identifier", ""),
        "shop_id": body.get("shop_id", ""),
    }


class IntegrationPosView(PosView):
    """A POS view whose error may carry the integrator's answer (``NotRecorded``): the POS must be able to
    show what the integrator did even when the service could not record it."""

    def handle_exception(self, exc: Exception) -> Response:
        response = super().handle_exception(exc)
        if isinstance(exc, services.NotRecorded) and isinstance(response.data, dict):
            response.data["integrator_answer"] = exc.answer
        return response


GIFTCARD_EXAMPLE = {
    "amount": 500,
    "code": "GC000001",
    "create_date": 1736931900.25,
    "currency_code": "DKK",
    "expiry_date": 1768467900.25,
    "id": "card-81723",
    "status": 1,
    "external_giftcard": {"batch": "2025-01"},
}
UPSTREAM = {
    502: OpenApiResponse(description="The integrator failed or answered something that is not the spec's model."),
    504: OpenApiResponse(description="The integrator did not answer within the integration's timeout."),
}
# The Gift card entity: what create, activate and read answer (the integrators' answer model, one component).
GIFT_CARD = published(GiftCard)
SHOP_PARAMETER = OpenApiParameter("shop_id", OpenApiTypes.STR, OpenApiParameter.QUERY, description="Shop (optional).")


def _unknown_card(message: str) -> Example:
    """The 404 of a card the service has no record of (``giftcards.services``)."""
    error = {"field": "code", "message": message, "code": "unknown_giftcard"}
    return "Unknown gift card", {"status": "ERROR", "message": message, "errors": [error]}


def _calls_integrator(
    summary: str,
    description: str,
    answer: OpenApiResponse,
    codes: tuple[int, ...],
    *,
    body: type[Body] | None = None,
    parameters: list[OpenApiParameter] = AUTH_PARAMETERS,
    status_code: int = 200,
    examples: list[Any],
    kind: str,
    not_found: Example | None = None,
    refused: Example | None = None,
) -> Any:
    """``extend_schema`` of a view that calls the integrator of ``kind``: its answer (schema and description), its
    own errors (``codes``; a 404's example ``not_found``, by default the account's having no such integration; a
    400's ``refused``) and the integrator's (``UPSTREAM``), which every such view shares."""
    request: dict[str, Any] = {} if body is None else {"request": {"application/json": body}}
    return extend_schema(
        tags=["pos"],
        summary=summary,
        description=description,
        parameters=parameters,
        responses={
            status_code: answer,
            **error_responses(
                *codes,
                scope="pos",
                examples={404: not_found or not_configured_example(kind), **({400: refused} if refused else {})},
            ),
            **UPSTREAM,
        },
        examples=examples,
        **request,
    )


class GiftCardCreateView(IntegrationPosView):
    """``POST /api/v1/pos/giftcards``: a gift card added to the basket is created (status 1)."""

    @_calls_integrator(
        "Create a gift card",
        "Calls the `giftcard_create` integration and records the created, inactive card (status 1).",
        OpenApiResponse(GIFT_CARD, description="The Gift card entity."),
        (400, 404),
        body=CreateGiftCard,
        status_code=201,
        kind="giftcard_create",
        examples=[
            request_example("create", {"amount": 500, "currency_code": "DKK", "shop_id": "shop-1"}),
            response_example("created", GIFTCARD_EXAMPLE, status_code=201),
        ],
    )
    def post(self, request: Request) -> Response:
        body = CreateGiftCard.validated(self.body())
        card = services.create_giftcard(
            account=self.account,
            amount=Decimal(body["amount"]),
            currency_code=body["currency_code"],
            shop_id=body.get("shop_id", ""),
        )
        return Response(services.entity(card), status=status.HTTP_201_CREATED)


class GiftCardActivateView(IntegrationPosView):
    """``POST /api/v1/pos/giftcards/{code}/activate``: once the sale selling the card is paid (status 2)."""

    @_calls_integrator(
        "Activate a gift card",
        (
            "Only when the stored, not voided sale `sale_id` has a line item with `behavior.giftcard.code` equal "
            "to `code`. Calls `giftcard_activate` with the inactive card's details; the same call again for the "
            "same sale answers the active card."
        ),
        OpenApiResponse(GIFT_CARD, description="The Gift card entity."),
        (400, 404, 409),
        body=ActivateGiftCard,
        kind="giftcard_activate",
        not_found=_unknown_card("No gift card 'GC000001' was created here"),
        examples=[
            request_example("activate", {"sale_id": "sale-20250115-0001"}),
            response_example("activated", {**GIFTCARD_EXAMPLE, "status": 2}),
        ],
    )
    def post(self, request: Request, code: str) -> Response:
        code = path_value(code, "code")
        body = ActivateGiftCard.validated(self.body())
        result = services.activate_giftcard(
            account=self.account, code=code, sale_id=body["sale_id"], shop_id=body.get("shop_id", "")
        )
        return Response(services.entity(result.card))


class GiftCardReadView(IntegrationPosView):
    """``GET /api/v1/pos/giftcards/{code}``: the card's balance, from the integrator."""

    @_calls_integrator(
        "Read a gift card",
        "Calls `giftcard_read` and updates the service's record of the card.",
        OpenApiResponse(GIFT_CARD, description="The Gift card entity."),
        (400, 404),
        parameters=[*AUTH_PARAMETERS, SHOP_PARAMETER],
        kind="giftcard_read",
        examples=[response_example("read", {**GIFTCARD_EXAMPLE, "status": 2})],
    )
    def get(self, request: Request, code: str) -> Response:
        code = path_value(code, "code")
        query = query_values(request, "shop_id")
        card = services.read_giftcard(account=self.account, code=code, shop_id=query.get("shop_id", ""))
        return Response(services.entity(card))


class GiftCardPayView(IntegrationPosView):
    """``POST /api/v1/pos/giftcards/{code}/pay``: the card used as payment."""

    @_calls_integrator(
        "Pay with a gift card",
        (
            "Refused before asking the integrator when the card is unknown here (read it first), inactive, used, "
            "expired, in another currency, or the amount exceeds its known balance. Answers the Gift card entity "
            "after the payment with `amount_used`; status 3 once the balance is 0. The same `identifier` again "
            "answers the first result (`replayed: true`) without paying twice."
        ),
        OpenApiResponse(PaidWithGiftCard, description="The card after the payment, and the payment."),
        (400, 404, 409),
        body=PayWithGiftCard,
        kind="giftcard_pay",
        not_found=_unknown_card("Gift card 'GC000001' is not known here: read it first"),
        examples=[
            request_example("pay", {"amount": 200, "currency_code": "DKK", "identifier": "pay-7", "sale_id": "s-9"}),
            response_example(
                "paid", {**GIFTCARD_EXAMPLE, "amount": 300, "status": 2, "amount_used": 200, "replayed": False}
            ),
        ],
    )
    def post(self, request: Request, code: str) -> Response:
        code = path_value(code, "code")
        body = PayWithGiftCard.validated(self.body())
        result = services.pay_giftcard(
            account=self.account, code=code, sale_id=body.get("sale_id", ""), **payment_values(body)
        )
        answer = {
            **result.entity(),
            "amount_used": services.plain(result.move.requested_amount or Decimal(0), result.card.currency_code),
            "identifier": result.move.identifier or None,
            "replayed": result.replayed,
        }
        return Response(answer)


def account_payment_body(payment: CustomerAccountPayment, *, replayed: bool) -> dict[str, Any]:
    used = payment.used_amount
    return {
        "customer_id": payment.customer_id,
        "currency_code": payment.currency_code,
        "requested_amount": services.plain(payment.requested_amount, payment.currency_code),
        "amount": services.plain(used, payment.currency_code) if used is not None else None,
        "differs": payment.differs,
        "partial": used is not None and used < payment.requested_amount,
        "payment_type": payment.payment_type,
        "identifier": payment.identifier or None,
        "replayed": replayed,
    }


class CustomerAccountReadView(IntegrationPosView):
    """``GET /api/v1/pos/customer-accounts/{customer_id}?currency_code=``: the balance."""

    @_calls_integrator(
        "Read a customer account",
        "Calls `customer_account_read`; any non-200 answer is an error.",
        OpenApiResponse(CustomerAccountBalance, description="The customer account's balance."),
        (400, 404),
        parameters=[
            *AUTH_PARAMETERS,
            OpenApiParameter("currency_code", OpenApiTypes.STR, OpenApiParameter.QUERY, required=True),
            SHOP_PARAMETER,
        ],
        kind="customer_account_read",
        refused=invalid("Without currency_code", ("currency_code", "is required", "required")),
        examples=[response_example("balance", {"customer_id": "c-1", "currency_code": "DKK", "amount": 1000})],
    )
    def get(self, request: Request, customer_id: str) -> Response:
        customer_id = path_value(customer_id, "customer_id")
        query = query_values(request, "currency_code", "shop_id")
        if "currency_code" not in query:
            raise InvalidInput([{"field": "currency_code", "message": "is required", "code": "required"}])
        balance = services.read_customer_account(
            account=self.account,
            customer_id=customer_id,
            currency_code=query["currency_code"],
            shop_id=query.get("shop_id", ""),
        )
        return Response(
            {
                "customer_id": customer_id,
                "currency_code": query["currency_code"],
                "amount": services.plain(balance, query["currency_code"]),
            }
        )


class CustomerAccountPayView(IntegrationPosView):
    """``POST /api/v1/pos/customer-accounts/{customer_id}/pay``: pay from the customer's account."""

    @_calls_integrator(
        "Pay from a customer account",
        (
            "The credit rule is enforced first, whatever `payment_type` says: every payment from a customer "
            "account is on credit (customer from the customer lookup; `block_sales` is a 409). Then "
            "`customer_account_pay`: any non-200 is a failed payment. `amount` is what the integrator actually "
            "used; `differs` / `partial` flag an amount other than `requested_amount`. The same `identifier` "
            "again answers the first result without paying twice."
        ),
        OpenApiResponse(PaidFromCustomerAccount, description="The payment."),
        (400, 404, 409),
        body=PayFromCustomerAccount,
        kind="customer_account_pay",
        examples=[
            request_example(
                "pay",
                {
                    "amount": 250,
                    "currency_code": "DKK",
                    "purchase_amount": 250,
                    "payment_type": "customer_account",
                    "identifier": "pay-8",
                },
            ),
            response_example(
                "paid",
                {
                    "customer_id": "c-1",
                    "currency_code": "DKK",
                    "requested_amount": 250,
                    "amount": 250,
                    "differs": False,
                    "partial": False,
                    "payment_type": "customer_account",
                    "identifier": "pay-8",
                    "replayed": False,
                },
            ),
        ],
    )
    def post(self, request: Request, customer_id: str) -> Response:
        customer_id = path_value(customer_id, "customer_id")
        body = PayFromCustomerAccount.validated(self.body())
        result = services.pay_customer_account(
            account=self.account,
            customer_id=customer_id,
            payment_type=body["payment_type"],
            purchase_amount=None if "purchase_amount" not in body else Decimal(body["purchase_amount"]),
            **payment_values(body),
        )
        return Response(account_payment_body(result.payment, replayed=result.replayed))


pos_urls = optional_slash_paths(
    ("pos/giftcards", GiftCardCreateView, "pos-giftcards"),
    (r"pos/giftcards/(?P<code>[^/]+)/activate", GiftCardActivateView, "pos-giftcard-activate"),
    (r"pos/giftcards/(?P<code>[^/]+)/pay", GiftCardPayView, "pos-giftcard-pay"),
    (r"pos/giftcards/(?P<code>[^/]+)", GiftCardReadView, "pos-giftcard"),
    (r"pos/customer-accounts/(?P<customer_id>[^/]+)/pay", CustomerAccountPayView, "pos-customer-account-pay"),
    (r"pos/customer-accounts/(?P<customer_id>[^/]+)", CustomerAccountReadView, "pos-customer-account"),
)
