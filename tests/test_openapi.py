"""The OpenAPI schema at /api/schema/ and the interactive page at /api/docs/."""

from __future__ import annotations

import pytest
import yaml

pytestmark = pytest.mark.django_db

IMPORT_PATHS = [
    "/imports/incoming_orders",
    "/imports/external_orders",
    "/imports/outgoing_order_state_changes",
    "/imports/discount_campaigns",
    "/imports/product_rules",
]


@pytest.fixture
def schema(client):
    response = client.get("/api/schema/")
    assert response.status_code == 200
    return yaml.safe_load(response.content)


def test_every_import_endpoint_is_documented_as_the_spec_spells_it(schema):
    assert set(IMPORT_PATHS) <= set(schema["paths"])
    assert not any(p.startswith("/imports/") and p.endswith("/") for p in schema["paths"])
    assert set(schema["paths"]["/imports/discount_campaigns"]) == {"post", "delete"}


def test_import_endpoints_carry_request_and_response_examples(schema):
    operation = schema["paths"]["/imports/incoming_orders"]["post"]
    request_examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert request_examples
    assert any("examples" in r.get("content", {}).get("application/json", {}) for r in operation["responses"].values())
    names = {p["name"] for p in operation["parameters"]}
    assert {"stock_location", "account", "integration", "apikey"} <= names


def test_the_back_office_api_is_documented(schema):
    assert any(p.startswith("/api/v1/") for p in schema["paths"])


def test_the_docs_page_is_served_without_a_cdn(client):
    response = client.get("/api/docs/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr" not in html and "unpkg.com" not in html


def test_unknown_api_paths_answer_a_json_404(client):
    response = client.get("/imports/no_such_thing")
    assert response.status_code == 404
    assert response.json()["status"] == "ERROR"
