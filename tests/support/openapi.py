"""The OpenAPI 3.1 document's schemas as JSON Schema 2020-12 validators (OpenAPI 3.1's schema dialect, which the
document's ``nullable``-free schemas are written in): what the exports, callbacks and examples are checked with."""

from __future__ import annotations

from typing import Any

from django.urls import path
from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.utils import extend_schema
from jsonschema import Draft202012Validator
from rest_framework.views import APIView


def published(request: Any, route: str = "orders") -> dict[str, Any]:
    """The OpenAPI document drf-spectacular builds for one view at ``route`` whose body is ``request``."""

    class View(APIView):
        authentication_classes: list[type] = []
        permission_classes: list[type] = []

        @extend_schema(request=request, responses={200: None})
        def post(self, request: Any) -> None:
            raise NotImplementedError

    return SchemaGenerator(patterns=[path(route, View.as_view())]).get_schema(request=None, public=True)


def schema_validator(document: dict[str, Any], schema: dict[str, Any]) -> Draft202012Validator:
    """A validator of ``schema`` whose ``$ref``s (``#/components/schemas/...``) resolve in ``document``. OpenAPI's
    own keywords (``discriminator``) are annotations to it: a ``oneOf`` is decided by the branches alone."""
    root = {"allOf": [schema], "components": document["components"]}
    Draft202012Validator.check_schema(root)
    return Draft202012Validator(root)


def component_validator(document: dict[str, Any], name: str) -> Draft202012Validator:
    """A validator of the component ``name`` of ``document``."""
    return schema_validator(document, {"$ref": f"#/components/schemas/{name}"})


def problems(validator: Draft202012Validator, value: Any) -> list[str]:
    """Each error of ``value`` as ``path: message`` (empty when it is valid)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(value)]
