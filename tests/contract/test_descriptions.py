"""Every property of every declared body, and of every answer, is described in the published OpenAPI document: its
meaning, its unit and its limits (``core.declare``: ``Field(node, description=...)``; a serializer field's
``help_text``). The answers are those of every operation, of every callback (what the integrator answers, and what
it is sent) and of every webhook (the identity exports)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core.declare import Body, BodyMeta, Payload
from exports.bodies import ELEMENTS
from exports.openapi import element_name, wrapper_name
from integrations.callbacks import closure, references

pytestmark = pytest.mark.django_db


def declared(cls: type) -> Iterator[type]:
    """The service's declared bodies (not those a test module declares for itself)."""
    for sub in cls.__subclasses__():
        if not sub.__module__.startswith("tests."):
            yield sub
        yield from declared(sub)


def declared_names() -> set[str]:
    """The component names of every declared body and payload as requests (drf-spectacular's ``Request``
    suffix: an output serializer may have the plain name)."""
    return {cls.schema_name + "Request" for cls in [*declared(Body), *declared(Payload)]}


def undescribed(schema: Any, at: str) -> Iterator[str]:
    """The properties without a description in ``schema`` and in the inline schemas within it (a component it
    refers to is checked on its own)."""
    if isinstance(schema, list):
        for i, item in enumerate(schema):
            yield from undescribed(item, f"{at}[{i}]")
        return
    if not isinstance(schema, dict):
        return
    for key, prop in schema.get("properties", {}).items():
        if not prop.get("description"):
            yield f"{at}.{key}"
        yield from undescribed(prop, f"{at}.{key}")
    for keyword in ("items", "additionalProperties", "oneOf", "anyOf", "allOf"):
        if keyword in schema:
            yield from undescribed(schema[keyword], at)


@pytest.fixture
def document(openapi_document: dict) -> dict:
    return openapi_document


def test_every_property_of_every_declared_body_is_described(document: dict) -> None:
    components = document["components"]["schemas"]
    bodies = sorted(declared_names() & set(components))
    missing = [path for name in bodies for path in undescribed(components[name], name)]

    assert len(bodies) >= 60
    assert missing == [], f"{len(missing)} undescribed properties:\n" + "\n".join(missing)


REF = "#/components/schemas/"


def operations(document: dict) -> Iterator[tuple[str, dict]]:
    """Every operation by its name (``GET /path``): the paths', their callbacks' and the webhooks'."""
    for route, item in document["paths"].items():
        for method, operation in item.items():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            yield f"{method.upper()} {route}", operation
            for kind, callback in operation.get("callbacks", {}).items():
                for expression, callback_item in callback.items():
                    for callback_method, called in callback_item.items():
                        if isinstance(called, dict) and "responses" in called:
                            yield f"{route} callback {kind} {callback_method.upper()} {expression}", called
    for name, item in document.get("webhooks", {}).items():
        for method, operation in item.items():
            yield f"webhook {name} {method.upper()}", operation


def answers(document: dict) -> tuple[dict[str, Any], set[str]]:
    """The inline schemas of every answer (and of what a callback or webhook is sent), by where they are, and the
    components they refer to, at any depth."""
    inline: dict[str, Any] = {}
    for name, operation in operations(document):
        sent = name.startswith("webhook") or " callback " in name
        parts = {
            **operation["responses"],
            **({"body": operation["requestBody"]} if sent and "requestBody" in operation else {}),
        }
        for status, answer in parts.items():
            if not isinstance(answer, dict):
                continue
            for media, content in answer.get("content", {}).items():
                if "schema" in content:
                    inline[f"{name} {status} {media}"] = content["schema"]
    components = document["components"]["schemas"]
    return inline, closure(references(inline), components)


def test_every_property_of_every_answer_is_described(document: dict) -> None:
    components = document["components"]["schemas"]
    inline, names = answers(document)
    missing = [path for at, schema in inline.items() for path in undescribed(schema, at)]
    missing += [path for name in sorted(names) for path in undescribed(components[name], name)]

    exports = {name for code in ELEMENTS for name in (wrapper_name(code), element_name(code))}
    assert exports <= names  # every export's wrapper and element, through the webhooks
    assert {"Product", "Tax", "PosCheckout", "PosProductLookupResult", "ProductDocument"} <= names
    assert len(names) >= 100
    assert missing == [], f"{len(missing)} undescribed properties:\n" + "\n".join(missing)


def test_the_answers_are_found_through_callbacks_and_webhooks() -> None:
    item = {"Card": {"type": "object", "properties": {"id": {"type": "string"}}}, "Wrapper": {"$ref": REF + "Card"}}
    document = {
        "paths": {
            "/x": {
                "post": {
                    "responses": {"201": {"description": "."}},
                    "callbacks": {
                        "k": {
                            "{$url}": {
                                "post": {"responses": {"200": {"content": {"j": {"schema": {"$ref": REF + "Card"}}}}}}
                            }
                        }
                    },
                }
            }
        },
        "webhooks": {
            "w": {"post": {"requestBody": {"content": {"j": {"schema": {"$ref": REF + "Wrapper"}}}}, "responses": {}}}
        },
        "components": {"schemas": item},
    }
    assert answers(document)[1] == {"Card", "Wrapper"}


def test_every_declared_field_has_a_description() -> None:
    """The same of the declarations themselves, published or not (an integrator's answers are not requests)."""
    missing = [
        f"{cls.__module__}.{cls.__qualname__}.{key}"
        for cls in declared(Body)
        if isinstance(cls, BodyMeta)
        for key, field in cls.fields.items()
        if not field.description
    ]
    assert missing == []


def test_the_check_names_an_undescribed_property_inline_too() -> None:
    schema = {
        "properties": {
            "a": {"type": "string", "description": "A."},
            "b": {"type": "object", "description": "B.", "properties": {"c": {"type": "string"}}},
        }
    }
    assert list(undescribed(schema, "X")) == ["X.b.c"]


def test_every_property_of_every_component_is_described(document: dict) -> None:
    """The whole document: the request bodies of the back-office API too (their serializers' help_text)."""
    components = document["components"]["schemas"]
    missing = [path for name in sorted(components) for path in undescribed(components[name], name)]

    assert len(components) >= 250
    assert missing == [], f"{len(missing)} undescribed properties:\n" + "\n".join(missing)
