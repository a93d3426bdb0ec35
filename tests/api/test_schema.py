from __future__ import annotations

from typing import Any

import pytest
from django.urls import include, path
from drf_spectacular.drainage import GENERATOR_STATS, reset_generator_stats
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.validation import validate_schema


@pytest.fixture(scope="module")
def v1_schema() -> dict[str, Any]:
    """The OpenAPI schema of the /api/v1/ routes only, with the warnings its generation raised."""
    reset_generator_stats()
    generator = SchemaGenerator(patterns=[path("api/v1/", include("config.api_urls"))])
    schema = generator.get_schema(request=None, public=True)
    schema["x-warnings"] = bool(GENERATOR_STATS)
    reset_generator_stats()
    return schema


def test_the_v1_schema_generates_without_warnings(v1_schema: dict[str, Any]) -> None:
    assert v1_schema.pop("x-warnings") is False
    validate_schema(v1_schema)


def test_every_v1_response_with_a_body_has_an_example(v1_schema: dict[str, Any]) -> None:
    """Every answer but a 400 or 409 refusal: what makes a body invalid or a change refused is each endpoint's
    own, and an example is only declared where it is a real answer (tests/contract/test_error_examples.py); the
    others still publish the error body's schema."""
    missing = []
    for route, operations in v1_schema["paths"].items():
        for method, operation in operations.items():
            for status, response in operation["responses"].items():
                content = response.get("content", {}).get("application/json")
                if content is None or content.get("examples"):
                    continue
                refusal = status in ("400", "409") and content.get("schema", {}).get("$ref", "").startswith(
                    "#/components/schemas/Error"
                )
                if not refusal:
                    missing.append(f"{method.upper()} {route} {status}")

    assert missing == []


def test_every_v1_refusal_publishes_the_error_body(v1_schema: dict[str, Any]) -> None:
    bare = [
        f"{method.upper()} {route} {status}"
        for route, operations in v1_schema["paths"].items()
        for method, operation in operations.items()
        for status, response in operation["responses"].items()
        if status.startswith("4") and "content" not in response
    ]

    assert bare == []


def test_the_order_lists_document_their_filters(v1_schema: dict[str, Any]) -> None:
    parameters = v1_schema["paths"]["/api/v1/incoming-orders/"]["get"]["parameters"]

    assert {"stock_location", "state", "order_identifier", "limit", "offset"} <= {p["name"] for p in parameters}


def test_the_schema_endpoint_serves_the_v1_routes(client: Any) -> None:
    response = client.get("/api/schema/", HTTP_ACCEPT="application/json")

    assert response.status_code == 200
    assert b"/api/v1/markets/" in response.content
