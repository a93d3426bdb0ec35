"""The runtime integrations as published callbacks (``integrations.callbacks``): each kind's answer in the OpenAPI
document is the declaration the service validates with, and the two request conventions are what is sent."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from django import urls
from drf_spectacular.generators import SchemaGenerator
from rest_framework.test import APIClient

from core.nodes import Components
from giftcards import pos_api as giftcards_pos_api
from integrations import callbacks, services
from integrations.bodies import answers
from integrations.kinds import KINDS
from integrations.models import RuntimeIntegration
from tests.support import reference_server
from tests.support.openapi import schema_validator
from tests.support.tenants import Tenant

DOCS = Path(__file__).resolve().parents[2] / "docs" / "callbacks.md"

# Per kind: an answer the service accepts, and one it refuses.
_CARD = {
    "amount": 100,
    "code": "GC000001",
    "create_date": 1736931900.25,
    "currency_code": "DKK",
    "expiry_date": 1768467900.25,
    "id": "card-1",
    "status": 2,
}
_DISCOUNT = reference_server.customer_discount("c-1")
SAMPLES: dict[str, tuple[Any, Any]] = {
    "product_search": (reference_server.PRODUCTS, [{"id": "web-1", "name": "Sweater"}]),
    "product_lookup": (
        {"id": "ext-1", "name": {"da": "Vare"}, "barcode": "5701234567890", "retail_price": 149.95},
        {"id": "ext-1", "retail_price": 149.95},
    ),
    "customer_lookup": (reference_server.CUSTOMERS, [{"name": "No identifier"}]),
    "customer_discounts": ([_DISCOUNT], [{**_DISCOUNT, "new_price_per_item": {"dk": 79}}]),
    "shipping_options": (reference_server.SHIPPING_OPTIONS, [{"id": "gls", "price": 39, "title": "GLS"}]),
    "giftcard_create": ({**_CARD, "status": 1, "external_giftcard": {"batch": "7"}}, {**_CARD, "status": 4}),
    "giftcard_activate": (_CARD, {**_CARD, "currency_code": "XYZ"}),
    "giftcard_read": ({**_CARD, "external_giftcard": None}, {**_CARD, "code": ""}),
    "giftcard_pay": ({**_CARD, "status": 3, "amount": 0}, {key: v for key, v in _CARD.items() if key != "id"}),
    "customer_account_read": ({"amount": -250.5}, {"amount": "250"}),
    "customer_account_pay": ({"amount": 100}, {"used": 100}),
}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    generated: dict[str, Any] = SchemaGenerator().get_schema(request=None, public=True)
    # As served: through JSON, as a client reads it (Decimal bounds become numbers).
    return json.loads(json.dumps(generated, default=float))


def published(document: dict[str, Any], kind: str, method: str = "post") -> dict[str, Any]:
    path, operation = callbacks.OPERATION
    item: dict[str, Any] = document["paths"][path][operation]["callbacks"][kind][callbacks.EXPRESSION]
    return item[method]


def answer_schema(document: dict[str, Any], kind: str, method: str = "post") -> dict[str, Any]:
    schema: dict[str, Any] = published(document, kind, method)["responses"]["200"]["content"]["application/json"]
    return schema["schema"]


def test_every_kind_is_published_once() -> None:
    assert list(callbacks.CALLBACKS) == list(KINDS)
    assert not set(answers.ARRAY_KINDS) & set(answers.OBJECT_KINDS)
    assert set(answers.ARRAY_KINDS) | set(answers.OBJECT_KINDS) == set(KINDS)


def test_the_callbacks_hang_on_registering_an_integration(document: dict[str, Any]) -> None:
    path, method = callbacks.OPERATION
    operation = document["paths"][path][method]
    assert operation["operationId"] == "api_v1_runtime_integrations_create"
    assert list(operation["callbacks"]) == list(KINDS)
    assert all(list(item) == [callbacks.EXPRESSION] for item in operation["callbacks"].values())


@pytest.mark.parametrize("kind", list(KINDS))
def test_the_published_answer_is_the_declaration_the_service_validates_with(
    document: dict[str, Any], kind: str
) -> None:
    components = Components()
    declared = answers.declaration(kind).json_schema(components)
    assert answer_schema(document, kind, "post") == declared
    assert answer_schema(document, kind, "get") == declared
    for name, schema in components.schemas.items():
        assert document["components"]["schemas"][name] == json.loads(json.dumps(schema, default=float))


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_valid_answer_passes_both_and_an_invalid_one_is_refused_by_both(document: dict[str, Any], kind: str) -> None:
    valid, invalid = SAMPLES[kind]
    check = schema_validator(document, answer_schema(document, kind))
    plain = json.loads(json.dumps(valid, default=float))
    assert list(check.iter_errors(plain)) == []
    assert answers.validate(kind, valid)[1] == []
    assert list(check.iter_errors(invalid)) != []
    assert answers.validate(kind, invalid)[1] != []
    with pytest.raises(answers.BadAnswer):
        answers.require_valid(kind, invalid)


@pytest.mark.parametrize("kind", list(KINDS))
def test_each_callback_says_its_time_and_every_failure(document: dict[str, Any], kind: str) -> None:
    for method in ("get", "post"):
        operation = published(document, kind, method)
        assert operation["x-timeout"] == {
            "setting": "timeout",
            "default": 5.0,
            "minimum": 0.1,
            "maximum": 30.0,
            "budget_setting": "POS_INTEGRATION_BUDGET_SECONDS",
        }
        seen = [row["pos"] for row in operation["x-failures"]]
        assert {"504 `integration_timeout`", "502 `integration_failed`", "504 `integration_not_called`"} <= set(seen)
        assert operation["operationId"] == f"{kind}_{method}"
    assert [p["name"] for p in published(document, kind, "get")["parameters"]] == list(KINDS[kind])
    body = published(document, kind)["requestBody"]["content"]["application/json"]["schema"]
    assert list(body["properties"]) == list(KINDS[kind])


@pytest.fixture
def reference_with_card(reference: reference_server.ReferenceIntegrator) -> reference_server.ReferenceIntegrator:
    """The reference integrator holding gift card ``TEST-CARD``."""
    reference.add_card("TEST-CARD", amount=100, status=2)
    return reference


def convention(kind: str, method: str, base: str) -> dict[str, Any]:
    """The configuration each callback describes: the placeholders as query parameters (GET) or body keys (POST)."""
    path = reference_server.DEFAULTS[kind][1]
    names = KINDS[kind]
    return {
        "kind": kind,
        "enabled": True,
        "method": method,
        "url": base + path,
        "query": {name: "{" + name + "}" for name in names} if method == "GET" else {},
        "headers": {},
        "body": {name: "{" + name + "}" for name in names} if method == "POST" else None,
        "secret_fields": [],
        "timeout": Decimal(5),
        "transform": "",
    }


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_test_this_integration_on_the_published_convention_sends_and_accepts_what_is_published(
    document: dict[str, Any],
    tenant: Tenant,
    reference_with_card: reference_server.ReferenceIntegrator,
    settings: Any,
    kind: str,
    method: str,
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    config = convention(kind, method, reference_with_card.url)
    assert services.configuration_errors(config) == []
    integration = RuntimeIntegration.objects.create(account=tenant.account, **config)
    if (kind, method) == ("giftcard_create", "GET"):  # the reference server creates cards on a POST only
        reference_with_card.always["/giftcards"] = (200, {**_CARD, "status": 1})
    result = services.test_runtime_integration(account=tenant.account, integration=integration)
    assert result["problems"] == []
    assert result["ok"] is True
    [sent] = reference_with_card.requests
    operation = published(document, kind, method.lower())
    if method == "GET":
        assert sorted(sent.query) == sorted(p["name"] for p in operation["parameters"])
    else:
        body = json.loads(sent.raw)
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        assert list(schema_validator(document, schema).iter_errors(body)) == []
        assert sorted(body) == sorted(schema["properties"])
    answered = json.loads(json.dumps(result["data"], default=float))
    assert list(schema_validator(document, answer_schema(document, kind)).iter_errors(answered)) == []


def test_the_integrators_document_has_a_path_per_kind_and_only_the_components_it_needs(
    document: dict[str, Any],
) -> None:
    own = callbacks.integrator_document(document)
    assert list(own["paths"]) == [f"/{kind}" for kind in KINDS]
    refs: set[str] = set()

    def collect(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):
                refs.add(node["$ref"])
            for value in node.values():
                collect(value)
        elif isinstance(node, list):
            for value in node:
                collect(value)

    collect(own["paths"])
    assert refs
    collect(own["components"])
    names = {ref.removeprefix("#/components/schemas/") for ref in refs}
    assert names == set(own["components"]["schemas"])  # each resolves, and nothing else is carried
    assert {"IntegratorGiftCard", "IntegratorEcommerceProduct", "CurrencyCode"} <= names
    operations = list(schemathesis.openapi.from_dict(own).get_all_operations())
    assert len(operations) == 2 * len(KINDS)
    assert all(operation.ok() for operation in operations)


def test_the_docs_page_lists_every_kind_with_its_placeholders_and_failures() -> None:
    text = DOCS.read_text()
    shared = text.split("## What a wrong answer becomes")[1].split("## The kinds")[0]
    for answer, seen in callbacks.SHARED:
        assert f"| {answer} | {seen}" in shared
    assert callbacks.TIME.split(" bounds")[0].replace("The integration's", "") in text.replace("\n", " ")
    sections = text.split("\n### ")
    for kind, callback in callbacks.CALLBACKS.items():
        [section] = [s for s in sections if s.startswith(f"`{kind}`")]
        assert callback.pos in section
        for name in KINDS[kind]:
            assert f"`{name}`" in section
        for answer, seen in callback.failures:
            assert seen in section, (kind, answer)


def test_the_integrators_document_is_served(document: dict[str, Any]) -> None:
    response = APIClient().get("/api/schema/integrator/?format=json")
    assert response.status_code == 200
    assert json.loads(response.content) == callbacks.integrator_document(document)


def test_a_document_of_the_gift_card_routes_alone_carries_the_gift_card_entity(document: dict[str, Any]) -> None:
    """The POS gift card answers refer to the integrators' Gift card entity (``answers.published``), which the
    callbacks' hook adds: without the operation the callbacks hang on, it adds what the operations refer to."""
    patterns = [urls.path("api/v1/", urls.include(giftcards_pos_api.pos_urls))]
    generated = SchemaGenerator(patterns=patterns).get_schema(request=None, public=True)
    partial = json.loads(json.dumps(generated, default=float))
    schemas = partial["components"]["schemas"]
    assert callbacks.OPERATION[0] not in partial["paths"]
    assert callbacks.references(partial) <= set(schemas)  # each reference resolves
    for name in ("IntegratorGiftCard", "CurrencyCode"):
        assert schemas[name] == document["components"]["schemas"][name]
    assert not set(schemas) & {"IntegratorEcommerceProduct", "IntegratorCustomerAccount"}


def test_only_an_answers_model_is_referred_to_as_published() -> None:
    assert answers.published(answers.GiftCard) == {"$ref": "#/components/schemas/IntegratorGiftCard"}
    with pytest.raises(ValueError, match="not the model"):
        answers.published(answers.DeprecatedBalance)
