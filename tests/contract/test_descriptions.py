"""Every property of every declared body is described in the published OpenAPI document: its meaning, its unit
and the validator's limits (``core.declare``: ``Field(node, description=...)``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from core.declare import Body, BodyMeta, Payload

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
