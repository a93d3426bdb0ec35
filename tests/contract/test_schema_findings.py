"""Answers schemathesis checks against the schema, pinned one behaviour per test: each holds without a fuzzing run."""

from __future__ import annotations

import jsonschema_rs
import pytest
from rest_framework.test import APIClient

from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


@pytest.fixture
def schema(openapi_document: dict) -> dict:
    """The document ``/api/schema/`` serves, generated once a session."""
    return openapi_document


def component(schema: dict, name: str) -> dict:
    """A component schema with its $refs resolvable (OpenAPI 3.1's schemas are JSON Schema 2020-12)."""
    return {**schema["components"]["schemas"][name], "components": schema["components"]}


def test_a_pos_post_without_body_or_content_type_is_a_documented_400(client: APIClient, tenant: Tenant) -> None:
    response = client.post(f"/api/v1/pos/newsletter-signups/?{tenant.query(tenant.pos_key)}")
    assert response.status_code == 400
    assert response.json()["errors"][0]["code"] == "empty"


def test_a_pos_body_without_content_type_is_still_a_415(client: APIClient, tenant: Tenant) -> None:
    url = f"/api/v1/pos/newsletter-signups/?{tenant.query(tenant.pos_key)}"
    response = client.generic("POST", url, b'{"email": "a@example.com"}', content_type="")
    assert response.status_code == 415


def test_a_cashier_without_image_matches_its_schema(client: APIClient, tenant: Tenant, schema: dict) -> None:
    response = client.post(
        f"/api/v1/cashiers/?{tenant.query(tenant.admin_key)}", {"identifier": "ab", "display_name": "AB"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["image_url"] == ""
    jsonschema_rs.validate(component(schema, "Cashier"), response.json(), validate_formats=True)


def test_an_expense_with_the_market_default_taxes_matches_its_schema(
    client: APIClient, tenant: Tenant, schema: dict
) -> None:
    response = client.post(
        f"/api/v1/expenses/?{tenant.query(tenant.admin_key)}", {"id": "fee", "name": "Fee"}, format="json"
    )
    assert response.status_code == 201
    assert response.json()["taxes"] is None
    jsonschema_rs.validate(component(schema, "Expense"), response.json(), validate_formats=True)


def test_every_operation_documents_the_answers_of_a_refused_key(schema: dict) -> None:
    """Every operation authenticates a key, so each can answer 401 (no or a wrong key), 403 (a key without the
    scope) and 429 (too many failures from one address): a client generated from the document handles all three."""
    missing = [
        f"{method.upper()} {path}: {code}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "responses" in operation
        for code in ("401", "403", "429")
        if code not in operation["responses"]
    ]
    assert missing == []


def test_every_success_answer_with_a_body_publishes_its_schema(schema: dict) -> None:
    """A client generated from the document reads every answer typed, and schemathesis checks each: every 2xx but
    a 204 (which has no body) publishes a JSON schema."""
    bare = [
        f"{method.upper()} {path}: {code}"
        for path, operations in schema["paths"].items()
        for method, operation in operations.items()
        if isinstance(operation, dict) and "responses" in operation
        for code, response in operation["responses"].items()
        if code.startswith("2") and code != "204"
        if not response.get("content", {}).get("application/json", {}).get("schema")
    ]
    assert bare == []


def test_every_example_of_an_answer_matches_the_answers_schema(schema: dict) -> None:
    """An example is what a client developer copies into a test or a mock: each one of every answer (any status)
    validates against the schema published beside it."""
    wrong = []
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            if not isinstance(operation, dict):
                continue
            for code, answer in operation.get("responses", {}).items():
                for media in answer.get("content", {}).values():
                    published = {**media.get("schema", {}), "components": schema["components"]}
                    for name, example in media.get("examples", {}).items():
                        errors = [
                            str(error)
                            for error in jsonschema_rs.validator_for(published, validate_formats=True).iter_errors(
                                example["value"]
                            )
                        ]
                        if errors:
                            wrong.append(f"{method.upper()} {path} {code} {name!r}: {errors[0][:200]}")
    assert wrong == []
