"""The OpenAPI schema at /api/schema/ and the interactive page at /api/docs/."""

from __future__ import annotations

import pytest

from campaigns.pricing.registry import CAMPAIGN_TYPES, PRODUCT_RULE_TYPES
from tests.support.openapi import problems, schema_validator

pytestmark = pytest.mark.django_db

IMPORT_PATHS = [
    "/imports/incoming_orders",
    "/imports/external_orders",
    "/imports/outgoing_order_state_changes",
    "/imports/discount_campaigns",
    "/imports/product_rules",
]


@pytest.fixture
def schema(openapi_document):
    """The document ``/api/schema/`` serves (``tests/api/test_schema.py`` reads it over HTTP), once a session."""
    return openapi_document


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


# --- Every import and POS body is declared field by field ---------------------------------------------------

PRIMITIVES = {"string", "number", "integer", "boolean"}


def resolved(schema: dict, schemas: dict) -> dict:
    while True:
        if "$ref" in schema:
            schema = schemas[schema["$ref"].rsplit("/", 1)[-1]]
        elif len(schema.get("allOf", [])) == 1:
            schema = schema["allOf"][0]
        else:
            return schema


def described(schema: dict, schemas: dict) -> bool:
    """An object with properties, an array of such (or of typed values, as ids), or a oneOf of such: not a bare
    ``object``, not ``{}``."""
    schema = resolved(schema, schemas)
    if schema.get("oneOf"):
        return all(described(branch, schemas) for branch in schema["oneOf"])
    if schema.get("type") == "array":
        items = resolved(schema.get("items", {}), schemas)
        return items.get("type") in PRIMITIVES or described(items, schemas)
    return schema.get("type", "object") == "object" and bool(schema.get("properties"))


def body_operations(schema: dict) -> dict[tuple[str, str], dict]:
    """Every POST, PUT and PATCH under /imports/ and /api/v1/pos/, and every DELETE under /imports/."""
    found = {}
    for route, operations in schema["paths"].items():
        methods = {"post", "put", "patch"} | ({"delete"} if route.startswith("/imports/") else set())
        if route.startswith(("/imports/", "/api/v1/pos/")):
            found.update({(m.upper(), route): op for m, op in operations.items() if m in methods})
    return found


def undeclared(schema: dict) -> set[tuple[str, str]]:
    schemas = schema["components"]["schemas"]
    missing = set()
    for key, operation in body_operations(schema).items():
        body = operation.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
        if body is None or not described(body, schemas):
            missing.add(key)
    return missing


def test_the_check_refuses_a_bare_object_and_accepts_declared_shapes():
    schemas = {"Item": {"type": "object", "properties": {"id": {"type": "string"}}}, "Bare": {"type": "object"}}
    item, bare = {"$ref": "#/components/schemas/Item"}, {"$ref": "#/components/schemas/Bare"}

    assert described(item, schemas) and described({"type": "array", "items": item}, schemas)
    assert described({"oneOf": [{"type": "array", "items": {"type": "string"}}, item]}, schemas)
    assert not described(bare, schemas)
    assert not described({}, schemas)
    assert not described({"type": "array", "items": bare}, schemas)
    assert not described({"oneOf": [item, bare]}, schemas)


def test_every_import_and_pos_operation_has_a_request_body_declared_field_by_field(schema):
    missing = undeclared(schema)

    assert set(body_operations(schema)) >= {
        ("POST", "/imports/incoming_orders"),
        ("DELETE", "/imports/discount_campaigns"),
        ("POST", "/imports/stock_events"),
        ("POST", "/api/v1/pos/checkouts/"),
        ("POST", "/api/v1/pos/baskets/price/"),
        ("POST", "/api/v1/pos/registers/{register_id}/close"),
    }
    assert sorted(missing) == [], "undeclared request bodies"


def items_of(schema: dict, route: str, key: str) -> dict:
    schemas = schema["components"]["schemas"]
    body = schema["paths"][route]["post"]["requestBody"]["content"]["application/json"]["schema"]
    return resolved(resolved(body, schemas)["properties"][key], schemas)["items"]


def test_a_campaign_is_one_of_the_registered_types_by_its_type(schema):
    schemas = schema["components"]["schemas"]
    for route, key, registered in (
        ("/imports/discount_campaigns", "campaigns", CAMPAIGN_TYPES),
        ("/imports/product_rules", "product_rules", PRODUCT_RULE_TYPES),
    ):
        item = items_of(schema, route, key)
        assert item["discriminator"]["propertyName"] == "type"
        assert set(item["discriminator"]["mapping"]) == set(registered)
        assert set(item["discriminator"]["mapping"].values()) == {branch["$ref"] for branch in item["oneOf"]}
        for branch in item["oneOf"]:
            body_of_type = resolved(branch, schemas)
            assert {"id", "type", "name", "display_name"} <= set(body_of_type["properties"])
            assert "type" in body_of_type["required"]
            codes = [code for code, ref in item["discriminator"]["mapping"].items() if ref == branch["$ref"]]
            assert [part["enum"] for part in body_of_type["properties"]["type"]["allOf"] if "enum" in part] == [codes]


def test_every_request_example_matches_its_declared_schema(schema):
    checked = 0
    for (method, route), operation in body_operations(schema).items():
        content = operation["requestBody"]["content"]["application/json"]
        assert content.get("examples"), f"{method} {route}: no request example"
        validator = schema_validator(schema, content["schema"])
        for name, example in content["examples"].items():
            assert problems(validator, example["value"]) == [], f"{method} {route} example {name!r}"
            checked += 1
    assert checked >= 20


def test_a_campaign_matches_the_branch_of_its_type_only(schema):
    """The types' fields overlap (this one has every field a new-price campaign requires): the branches' `type`
    enums keep the oneOf exact for a validator that does not read the discriminator."""
    item = items_of(schema, "/imports/discount_campaigns", "campaigns")
    validator = schema_validator(schema, item)
    campaign = {"id": "c", "name": "n", "display_name": "d", "priority": 1, "product_id": "p", "count": 2}
    campaign["percentage"] = 0.1

    assert list(validator.iter_errors({**campaign, "type": "percentage_discount-count_or_more-single_product"})) == []
    assert list(validator.iter_errors({**campaign, "type": "no_such_type"}))
