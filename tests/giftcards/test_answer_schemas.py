"""The gift card and customer account answers are what the OpenAPI document publishes: each real answer, against
the reference integrator, validates against its operation's schema in the document (a client generated from it
reads them typed), and so does each operation's example; the schemas refuse what the answers never are."""

from __future__ import annotations

import json
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import jsonschema_rs
import pytest

from tests.support.api import PosApi
from tests.support.reference_server import ReferenceIntegrator

pytestmark = pytest.mark.django_db

# Each operation, and the status of its success answer.
OPERATIONS = {
    ("post", "/api/v1/pos/giftcards/"): "201",
    ("post", "/api/v1/pos/giftcards/{code}/activate/"): "200",
    ("get", "/api/v1/pos/giftcards/{code}/"): "200",
    ("post", "/api/v1/pos/giftcards/{code}/pay/"): "200",
    ("get", "/api/v1/pos/customer-accounts/{customer_id}/"): "200",
    ("post", "/api/v1/pos/customer-accounts/{customer_id}/pay/"): "200",
}
CARD_KINDS = ("giftcard_create", "giftcard_activate", "giftcard_read", "giftcard_pay")


@pytest.fixture(scope="module")
def document(openapi_document: dict) -> dict[str, Any]:
    """The document as served: through JSON, as a client reads it (Decimal bounds become numbers)."""
    served: dict[str, Any] = json.loads(json.dumps(openapi_document, default=float))
    return served


def success(document: dict[str, Any], method: str, path: str) -> dict[str, Any]:
    """The JSON content (schema and examples) of the operation's success answer."""
    content: dict[str, Any] = document["paths"][path][method]["responses"][OPERATIONS[method, path]]["content"]
    return content["application/json"]


def errors(document: dict[str, Any], method: str, path: str, answer: Any) -> list[str]:
    """What in ``answer`` the operation's published success schema refuses (empty: it validates)."""
    schema = {**success(document, method, path)["schema"], "components": document["components"]}
    validator = jsonschema_rs.validator_for(schema, validate_formats=True)
    return [f"{'/'.join(map(str, e.instance_path))}: {e.message}" for e in validator.iter_errors(answer)]


@pytest.fixture
def valid(document: dict[str, Any]) -> Callable[..., dict[str, Any]]:
    """Asserts that ``response`` is the operation's success answer, valid against its schema; returns its body."""

    def check(response: Any, method: str, path: str) -> dict[str, Any]:
        assert str(response.status_code) == OPERATIONS[method, path], response.json()
        body: dict[str, Any] = response.json()
        assert errors(document, method, path, body) == [], body
        return body

    return check


@pytest.mark.parametrize(("method", "path"), list(OPERATIONS))
def test_each_success_example_validates_against_its_schema(document: dict[str, Any], method: str, path: str) -> None:
    examples = success(document, method, path)["examples"]
    assert examples
    for name, example in examples.items():
        assert errors(document, method, path, example["value"]) == [], name


def test_the_card_answers_are_the_integrators_gift_card_entity(document: dict[str, Any]) -> None:
    """One component for the one model: create, activate and read refer to it; a payment adds to it."""
    gift_card = {"$ref": "#/components/schemas/IntegratorGiftCard"}
    for method, path in list(OPERATIONS)[:3]:
        assert success(document, method, path)["schema"] == gift_card
    payment = success(document, "post", "/api/v1/pos/giftcards/{code}/pay/")["schema"]
    assert document["components"]["schemas"][payment["$ref"].rsplit("/", 1)[-1]]["allOf"] == [gift_card]


def test_a_card_answers_what_is_published_through_its_life(
    pos: PosApi,
    configure: Callable[..., Any],
    reference: ReferenceIntegrator,
    sell_giftcard: Callable[..., str],
    valid: Callable[..., dict[str, Any]],
) -> None:
    for kind in CARD_KINDS:
        configure(kind)
    created = valid(
        pos.post("giftcards", {"amount": 500, "currency_code": "DKK", "shop_id": "shop-1"}),
        "post",
        "/api/v1/pos/giftcards/",
    )
    code = created["code"]
    assert created["status"] == 1
    activated = valid(
        pos.post(f"giftcards/{code}/activate", {"sale_id": sell_giftcard(code)}),
        "post",
        "/api/v1/pos/giftcards/{code}/activate/",
    )
    assert activated["status"] == 2
    assert valid(pos.get(f"giftcards/{code}"), "get", "/api/v1/pos/giftcards/{code}/")["amount"] == 500

    pay = "/api/v1/pos/giftcards/{code}/pay/"
    first = valid(pos.post(f"giftcards/{code}/pay", {"amount": 120.5, "currency_code": "DKK"}), "post", pay)
    assert (first["identifier"], first["replayed"]) == (None, False)
    body = {"amount": 379.5, "currency_code": "DKK", "identifier": "pay-1", "sale_id": "s-1"}
    last = valid(pos.post(f"giftcards/{code}/pay", body), "post", pay)
    assert (last["amount"], last["status"], last["identifier"]) == (0, 3, "pay-1")
    again = valid(pos.post(f"giftcards/{code}/pay", body), "post", pay)
    assert again["replayed"] is True and again["amount_used"] == 379.5


def test_a_card_with_the_integrators_private_data_answers_what_is_published(
    pos: PosApi, configure: Callable[..., Any], reference: ReferenceIntegrator, valid: Callable[..., dict[str, Any]]
) -> None:
    configure("giftcard_read")
    reference.add_card("WEB-1", amount=250)
    reference.cards["WEB-1"]["external_giftcard"] = {"batch": "2025-01", "owner": None}
    body = valid(pos.get("giftcards/WEB-1"), "get", "/api/v1/pos/giftcards/{code}/")
    assert body["external_giftcard"] == {"batch": "2025-01", "owner": None}


def test_a_customer_account_answers_what_is_published(
    pos: PosApi, configure: Callable[..., Any], reference: ReferenceIntegrator, valid: Callable[..., dict[str, Any]]
) -> None:
    configure("customer_account_read")
    configure("customer_account_pay")
    reference.balances["c-9"] = Decimal("-123.45")
    read = "/api/v1/pos/customer-accounts/{customer_id}/"
    balance = valid(pos.get("customer-accounts/c-9", currency_code="DKK"), "get", read)
    assert balance == {"customer_id": "c-9", "currency_code": "DKK", "amount": -123.45}

    pay = "/api/v1/pos/customer-accounts/{customer_id}/pay/"
    body = {"amount": 250, "currency_code": "DKK", "payment_type": "customer_account"}
    paid = valid(pos.post("customer-accounts/c-9/pay", body), "post", pay)
    assert (paid["amount"], paid["differs"], paid["identifier"]) == (250, False, None)
    reference.pay_partial = Decimal("80.5")
    partly = valid(pos.post("customer-accounts/c-9/pay", {**body, "amount": 100, "identifier": "pay-2"}), "post", pay)
    assert (partly["amount"], partly["partial"], partly["identifier"]) == (80.5, True, "pay-2")
    again = valid(pos.post("customer-accounts/c-9/pay", {**body, "amount": 100, "identifier": "pay-2"}), "post", pay)
    assert again["replayed"] is True


def test_the_schemas_refuse_what_the_answers_never_are(document: dict[str, Any]) -> None:
    card = success(document, "post", "/api/v1/pos/giftcards/")["examples"]["Created"]["value"]
    assert errors(document, "post", "/api/v1/pos/giftcards/", {**card, "status": 4})
    paid = success(document, "post", "/api/v1/pos/giftcards/{code}/pay/")["examples"]["Paid"]["value"]
    without = {key: value for key, value in paid.items() if key != "amount_used"}
    assert errors(document, "post", "/api/v1/pos/giftcards/{code}/pay/", without)
    no_card = {key: value for key, value in paid.items() if key != "code"}
    assert errors(document, "post", "/api/v1/pos/giftcards/{code}/pay/", no_card)
    read = "/api/v1/pos/customer-accounts/{customer_id}/"
    assert errors(document, "get", read, {"customer_id": "c-1", "currency_code": "kroner", "amount": 1})
    assert errors(document, "get", read, {"customer_id": "c-1", "currency_code": "DKK"})
