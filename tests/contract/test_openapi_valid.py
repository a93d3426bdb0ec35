"""The published documents are OpenAPI 3.1: ``/api/schema/`` and ``/api/schema/integrator/`` pass
openapi-spec-validator's 3.1 validator, and no schema in them keeps an OpenAPI 3.0 form a 3.1 reader misreads."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from drf_spectacular.renderers import OpenApiJsonRenderer
from openapi_spec_validator import OpenAPIV31SpecValidator

from integrations.callbacks import integrator_document
from tests.support.openapi import problems, schema_validator

pytestmark = pytest.mark.django_db


@pytest.fixture(scope="module")
def served(openapi_document: dict) -> dict[str, Any]:
    """The document as ``/api/schema/?format=json`` renders it (Decimal bounds as JSON numbers)."""
    document: dict[str, Any] = json.loads(OpenApiJsonRenderer().render(openapi_document))
    return document


def errors(document: dict[str, Any]) -> list[str]:
    return [
        f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in OpenAPIV31SpecValidator(document).iter_errors()
    ]


def three_o_forms(node: Any, at: str = "#") -> Iterator[str]:
    """Where ``node`` says ``nullable`` or a boolean ``exclusiveMinimum``/``exclusiveMaximum`` (OpenAPI 3.0's
    forms: 3.1 ignores the first and refuses the second)."""
    if isinstance(node, dict):
        if "nullable" in node:
            yield f"{at}: nullable"
        for key in ("exclusiveMinimum", "exclusiveMaximum"):
            if isinstance(node.get(key), bool):
                yield f"{at}: boolean {key}"
        for key, value in node.items():
            yield from three_o_forms(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from three_o_forms(value, f"{at}/{i}")


def test_the_document_is_openapi_3_1_and_valid(served: dict[str, Any]) -> None:
    assert served["openapi"] == "3.1.0"
    assert errors(served) == []


def test_the_integrators_document_is_openapi_3_1_and_valid(served: dict[str, Any]) -> None:
    document = integrator_document(served)
    assert document["openapi"] == "3.1.0"
    assert errors(document) == []


def test_no_schema_keeps_an_openapi_3_0_form(served: dict[str, Any]) -> None:
    assert list(three_o_forms(served)) == []


def test_a_field_of_any_value_that_may_be_null_takes_null(served: dict[str, Any]) -> None:
    validator = schema_validator(served, {"$ref": "#/components/schemas/TestOutput"})
    assert problems(validator, {"ok": False, "status_code": None, "duration_ms": 3, "data": None, "problems": []}) == []
    assert served["components"]["schemas"]["ImportLogEntry"]["properties"]["payload"].get("oneOf") is None


def test_the_check_finds_the_3_0_forms() -> None:
    schema = {"properties": {"a": {"type": "string", "nullable": True}, "b": {"minimum": 0, "exclusiveMinimum": True}}}
    assert list(three_o_forms(schema)) == ["#/properties/a: nullable", "#/properties/b: boolean exclusiveMinimum"]
    assert list(three_o_forms({"exclusiveMinimum": 0, "type": ["string", "null"]})) == []


def test_the_validator_refuses_a_3_0_form(served: dict[str, Any]) -> None:
    broken = json.loads(json.dumps(served))
    broken["components"]["schemas"]["Broken"] = {"type": "number", "minimum": 0, "exclusiveMinimum": True}
    assert errors(broken) != []
