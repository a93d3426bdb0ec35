"""POS customer accounts through customer_account_read / customer_account_pay against the reference
integrator (spec: Customer account payment entity, Customer rule 1, Errors 3): the balance, payments, the
credit rule enforced first, any non-200 a failed payment, a differing amount flagged, never a payment that
did not happen."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.admin.sites import site
from django.test import RequestFactory

from giftcards import selectors as giftcard_selectors
from giftcards.models import CustomerAccountPayment
from tests.support.api import PosApi, error_fields
from tests.support.integrations import pays_sent
from tests.support.races import missing_once
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant


@pytest.fixture
def accounts(configure: Callable[..., Any]) -> None:
    configure("customer_account_read")
    configure("customer_account_pay")


def pay(pos: PosApi, customer_id: str, amount: Any, payment_type: str = "customer_account", **extra: Any) -> Any:
    body = {"amount": amount, "currency_code": "DKK", "payment_type": payment_type, **extra}
    return pos.post(f"customer-accounts/{customer_id}/pay", body)


# --- read ------------------------------------------------------------------------------------------------


def test_the_balance_is_read_from_the_integrator(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    reference.balances["c-9"] = Decimal("123.45")
    response = pos.get("customer-accounts/c-9", currency_code="DKK")
    assert response.status_code == 200
    assert response.json() == {"customer_id": "c-9", "currency_code": "DKK", "amount": 123.45}
    assert reference.last("/customer-accounts/c-9").query["currency_code"] == "DKK"


def test_reading_needs_a_currency_code(pos: PosApi, accounts: None) -> None:
    response = pos.get("customer-accounts/c-9")
    assert response.status_code == 400 and error_fields(response) == {"currency_code"}


def test_reading_refuses_a_wrong_currency_code(pos: PosApi, accounts: None) -> None:
    response = pos.get("customer-accounts/c-9", currency_code="kroner")
    assert response.status_code == 400 and error_fields(response) == {"currency_code"}


def test_a_non_200_read_is_an_error(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    reference.script["/customer-accounts/{customer_id}"] = [(404, {"error": "no such customer"})]
    assert pos.get("customer-accounts/c-9", currency_code="DKK").status_code == 502


def test_a_2xx_read_other_than_200_is_an_error(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    reference.script["/customer-accounts/{customer_id}"] = [(202, {"amount": 5})]
    assert pos.get("customer-accounts/c-9", currency_code="DKK").status_code == 502


def test_a_read_without_an_amount_is_a_502(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    reference.script["/customer-accounts/{customer_id}"] = [(200, {"balance": 5})]
    response = pos.get("customer-accounts/c-9", currency_code="DKK")
    assert response.status_code == 502 and response.json()["errors"][0]["code"] == "bad_answer"


def test_reading_without_a_configuration_is_a_404(pos: PosApi, configure: Callable[..., Any]) -> None:
    configure("customer_account_pay")
    assert pos.get("customer-accounts/c-9", currency_code="DKK").status_code == 404


# --- pay -------------------------------------------------------------------------------------------------


def test_a_payment_is_made_and_recorded(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    response = pay(pos, "c-9", 250, purchase_amount=250, identifier="pay-1")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert (body["amount"], body["requested_amount"], body["differs"], body["partial"]) == (250, 250, False, False)
    assert reference.balances["c-9"] == Decimal(750)
    sent = reference.last("/customer-accounts/c-9/pay").body
    assert (sent["amount"], sent["currency_code"], sent["payment_type"]) == (250, "DKK", "customer_account")
    payment = CustomerAccountPayment.objects.get()
    assert (payment.ok, payment.used_amount, payment.requested_amount) == (True, Decimal(250), Decimal(250))


def test_a_differing_amount_is_answered_as_it_is_and_flagged(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator
) -> None:
    reference.pay_partial = Decimal("80.5")
    response = pay(pos, "c-9", 100)
    assert response.status_code == 200
    body = response.json()
    assert (body["amount"], body["requested_amount"], body["differs"], body["partial"]) == (80.5, 100, True, True)
    assert CustomerAccountPayment.objects.get().used_amount == Decimal("80.5")


@pytest.mark.parametrize(
    "entry",
    [
        (402, {"error": "insufficient funds"}),
        (500, "boom"),
        (201, {"amount": 100}),
        (204, ""),
        ("close", None),
    ],
)
def test_any_non_200_is_a_failed_payment(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator, entry: Any
) -> None:
    reference.script["/customer-accounts/{customer_id}/pay"] = [entry]
    response = pay(pos, "c-9", 100)
    assert response.status_code == 502
    payment = CustomerAccountPayment.objects.get()
    assert payment.ok is False and payment.used_amount is None


@pytest.mark.parametrize(
    "entry",
    [
        ("html", "<html>Login</html>"),
        ("garbage", b"[[["),
        (200, {"used": 100}),
        (200, {"amount": "a lot"}),
        (200, {"amount": -5}),
    ],
)
def test_a_200_of_the_wrong_shape_is_a_502_and_nothing_is_recorded_as_paid(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator, entry: Any
) -> None:
    reference.script["/customer-accounts/{customer_id}/pay"] = [entry]
    response = pay(pos, "c-9", 100)
    assert response.status_code == 502
    assert not CustomerAccountPayment.objects.filter(ok=True).exists()


def test_a_zero_amount_used_is_a_failed_payment(pos: PosApi, accounts: None, reference: ReferenceIntegrator) -> None:
    reference.script["/customer-accounts/{customer_id}/pay"] = [(200, {"amount": 0})]
    response = pay(pos, "c-9", 100)
    assert response.status_code == 502
    assert CustomerAccountPayment.objects.get().ok is False


def test_a_slow_integrator_is_a_504(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator, configure: Callable[..., Any]
) -> None:
    configure("customer_account_pay", timeout="0.3")
    reference.script["/customer-accounts/{customer_id}/pay"] = [("sleep", 2)]
    response = pay(pos, "c-9", 100, identifier="pay-1")
    assert response.status_code == 504
    assert CustomerAccountPayment.objects.get().ok is None  # the outcome is unknown
    assert pay(pos, "c-9", 100, identifier="pay-1").status_code == 409


def test_a_repeated_identifier_answers_the_first_result_without_paying_twice(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator
) -> None:
    first = pay(pos, "c-9", 100, identifier="pay-1")
    again = pay(pos, "c-9", 100, identifier="pay-1")
    assert again.status_code == 200
    assert again.json()["replayed"] is True and first.json()["replayed"] is False
    assert pays_sent(reference) == 1
    assert reference.balances["c-9"] == Decimal(900)


def test_a_retry_that_passes_the_identifier_check_in_a_race_replays_the_first_payment(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator, monkeypatch: pytest.MonkeyPatch
) -> None:
    pay(pos, "c-9", 100, identifier="pay-1")
    monkeypatch.setattr(
        giftcard_selectors,
        "customer_account_payment_by_identifier",
        missing_once(giftcard_selectors.customer_account_payment_by_identifier),
    )
    again = pay(pos, "c-9", 100, identifier="pay-1")
    assert again.status_code == 200, again.json()
    assert again.json()["replayed"] is True
    assert pays_sent(reference) == 1
    assert CustomerAccountPayment.objects.filter(identifier="pay-1").count() == 1


def test_an_identifier_reused_for_another_customer_is_a_409(pos: PosApi, accounts: None) -> None:
    pay(pos, "c-9", 100, identifier="pay-1")
    assert pay(pos, "c-8", 100, identifier="pay-1").status_code == 409


@pytest.mark.parametrize(
    ("body", "fields"),
    [
        ({"currency_code": "DKK", "payment_type": "invoice"}, {"amount"}),
        ({"amount": 10, "payment_type": "invoice"}, {"currency_code"}),
        ({"amount": 10, "currency_code": "DKK"}, {"payment_type"}),
        ({"amount": -1, "currency_code": "DKK", "payment_type": "invoice"}, {"amount"}),
        ({"amount": 10, "currency_code": "DKK", "payment_type": 7}, {"payment_type"}),
        (
            {"amount": 10, "currency_code": "DKK", "payment_type": "invoice", "purchase_amount": "x"},
            {"purchase_amount"},
        ),
        (["not", "an", "object"], {""}),
    ],
)
def test_a_wrong_pay_body_is_a_400_naming_the_field(
    pos: PosApi, accounts: None, reference: ReferenceIntegrator, body: Any, fields: set[str]
) -> None:
    response = pos.post("customer-accounts/c-9/pay", body)
    assert response.status_code == 400
    assert error_fields(response) == fields
    assert pays_sent(reference) == 0


def test_truncated_json_is_a_400(pos: PosApi, accounts: None) -> None:
    assert pos.post("customer-accounts/c-9/pay", '{"amount": 1').status_code == 400


# --- the credit rule (spec: Customer, rule 1) --------------------------------------------------------------


@pytest.fixture
def lookup(configure: Callable[..., Any], accounts: None) -> None:
    configure("customer_lookup")


def test_the_credit_rule_refuses_before_asking_the_integrator_to_pay(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator
) -> None:
    # c-1: balance 100, credit_limit 500: a purchase of 600.01 less 100 exceeds 500.
    response = pay(pos, "c-1", 600.01, payment_type="invoice")
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "credit_limit_exceeded"
    assert pays_sent(reference) == 0
    assert not CustomerAccountPayment.objects.exists()
    assert reference.last("/customers").query["q"] == "c-1"


def test_the_credit_rule_allows_a_purchase_within_the_limit(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator
) -> None:
    assert pay(pos, "c-1", 600, payment_type="invoice").status_code == 200


def test_the_credit_rule_uses_the_purchase_amount_when_given(pos: PosApi, lookup: None) -> None:
    response = pay(pos, "c-1", 50, payment_type="customer_account", purchase_amount=700)
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "credit_limit_exceeded"


# Every pay on this endpoint is from the customer's account, whatever the POS calls its payment type.
ANY_PAYMENT_TYPE = ["customer_account", "invoice", "customer_account.integration", "Konto", "card.external"]


@pytest.mark.parametrize("payment_type", ANY_PAYMENT_TYPE)
def test_the_credit_limit_holds_whatever_the_payment_type_is_called(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator, payment_type: str
) -> None:
    response = pay(pos, "c-1", 600.01, payment_type=payment_type)
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "credit_limit_exceeded"
    assert pays_sent(reference) == 0
    assert not CustomerAccountPayment.objects.exists()


@pytest.mark.parametrize("payment_type", ["customer_account.integration", "Konto"])
def test_a_purchase_within_the_limit_is_paid_whatever_the_payment_type_is_called(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator, payment_type: str
) -> None:
    response = pay(pos, "c-1", 600, payment_type=payment_type)
    assert response.status_code == 200
    assert response.json()["payment_type"] == payment_type
    assert pays_sent(reference) == 1


@pytest.mark.parametrize("payment_type", ANY_PAYMENT_TYPE)
def test_a_blocked_customer_is_refused_whatever_the_payment_type_is_called(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator, payment_type: str
) -> None:
    response = pay(pos, "c-3", 10, payment_type=payment_type)
    assert response.status_code == 409 and response.json()["errors"][0]["code"] == "sales_blocked"
    assert pays_sent(reference) == 0
    assert not CustomerAccountPayment.objects.exists()


def test_a_customer_the_lookup_does_not_know_is_refused(pos: PosApi, lookup: None) -> None:
    response = pay(pos, "c-404", 10, payment_type="invoice")
    assert response.status_code == 404 and response.json()["errors"][0]["code"] == "unknown_customer"


def test_a_missing_balance_is_read_from_the_customer_account(
    pos: PosApi, lookup: None, reference: ReferenceIntegrator
) -> None:
    reference.script["/customers"] = [(200, [{"identifier": "c-5", "credit_limit": 100}])]
    reference.balances["c-5"] = Decimal(50)
    assert pay(pos, "c-5", 151, payment_type="invoice").json()["errors"][0]["code"] == "credit_limit_exceeded"
    assert reference.last("/customer-accounts/c-5").method == "GET"


def test_a_failing_lookup_refuses_the_payment(pos: PosApi, lookup: None, reference: ReferenceIntegrator) -> None:
    reference.script["/customers"] = [(503, "down")]
    assert pay(pos, "c-1", 10, payment_type="invoice").status_code == 502
    assert pays_sent(reference) == 0


def test_without_a_lookup_the_integrator_decides(pos: PosApi, accounts: None) -> None:
    assert pay(pos, "c-1", 100_000, payment_type="invoice").status_code == 200


# --- scoping and admin -----------------------------------------------------------------------------------


def test_another_account_without_the_integration_gets_a_404(accounts: None, other_tenant: Tenant, client: Any) -> None:
    other = PosApi(client, other_tenant)
    assert pay(other, "c-9", 10).status_code == 404


def test_the_admin_shows_payments_read_only(pos: PosApi, accounts: None, admin_user: Any, admin_client: Any) -> None:
    pay(pos, "c-9", 10)
    request = RequestFactory().get("/admin/")
    request.user = admin_user
    model_admin = site._registry[CustomerAccountPayment]
    payment = CustomerAccountPayment.objects.get()
    assert not model_admin.has_add_permission(request)
    assert not model_admin.has_change_permission(request, payment)
    assert not model_admin.has_delete_permission(request, payment)
    page = admin_client.get(f"/admin/giftcards/customeraccountpayment/{payment.pk}/change/")
    assert page.status_code == 200
