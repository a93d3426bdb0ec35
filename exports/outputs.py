"""What a queue's transform sends, described from its configuration (``GET /api/v1/export-queues/{id}/output-schema``,
the queue's page in the back-office): the identity wrapper's and a simple JSON queue's JSON Schema, a CSV queue's
layout, a template's media type.

The schemas are JSON Schema draft 2020-12, self-contained (``$defs``), made from the same declarations as the
OpenAPI document's ``Export<Entity>`` components (``exports.openapi``): the OpenAPI 3.0 forms are written as
JSON Schema (``nullable`` as a null alternative, a boolean ``exclusiveMinimum`` as the bound).
"""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from typing import Any

from core.errors import ServiceError
from exports.entities import REGISTRY as ENTITIES
from exports.openapi import element_keys, element_name, export_components, wrapper_name
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import ConfigError
from exports.transforms.described import NULL, ElementSchema, Schema

DIALECT = "https://json-schema.org/draft/2020-12/schema"
_COMPONENTS = "#/components/schemas/"
_DEFS = "#/$defs/"


def json_schema(node: Any) -> Any:
    """An OpenAPI 3.0 schema object as JSON Schema 2020-12, its component references made ``$defs`` ones."""
    if isinstance(node, list):
        return [json_schema(item) for item in node]
    if isinstance(node, Decimal):
        return int(node) if node == node.to_integral_value() else float(node)
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("nullable", "discriminator", "example"):
            continue
        if key == "$ref" and isinstance(value, str) and value.startswith(_COMPONENTS):
            out[key] = _DEFS + value[len(_COMPONENTS) :]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and isinstance(value, bool):
            bound = "minimum" if key == "exclusiveMinimum" else "maximum"
            if value and bound in node:
                out[key] = json_schema(node[bound])
        else:
            out[key] = json_schema(value)
    for key, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if node.get(key) is True:
            out.pop(bound, None)
    if node.get("nullable") is True:
        described = {"description": out.pop("description")} if "description" in out else {}
        return {"anyOf": [out, NULL], **described}
    return out


@functools.cache
def export_defs() -> dict[str, Schema]:
    """Every export component (``exports.openapi``) as JSON Schema, by name."""
    components = export_components(element_keys())
    return {name: json_schema(schema) for name, schema in components.schemas.items()}


def element_schema(entity_type: str) -> ElementSchema:
    return ElementSchema(
        entity_type=entity_type,
        wrapper={"$ref": _DEFS + wrapper_name(entity_type)},
        element={"$ref": _DEFS + element_name(entity_type)},
        defs=export_defs(),
    )


def _references(node: Any, found: set[str]) -> None:
    if isinstance(node, list):
        for item in node:
            _references(item, found)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str) and value.startswith(_DEFS):
                found.add(value[len(_DEFS) :])
            else:
                _references(value, found)


def self_contained(schema: Schema, title: str) -> Schema:
    """``schema`` as a document of its own: the dialect, a title and the ``$defs`` it refers to (transitively)."""
    defs = export_defs()
    used: set[str] = set()
    pending = [schema]
    while pending:
        found: set[str] = set()
        _references(pending.pop(), found)
        for name in sorted(found - used):
            used.add(name)
            pending.append(defs[name])
    document: Schema = {"$schema": DIALECT, "title": title, **schema}
    if used:
        document["$defs"] = {name: defs[name] for name in sorted(used)}
    return document


def describe(*, entity_type: str, transform: dict[str, Any]) -> dict[str, Any]:
    """What a queue of ``entity_type`` with ``transform`` sends: ``content_type`` and ``extension``, ``json_schema``
    (identity, simple JSON: the whole export's schema) or ``csv`` (the layout), or neither (a template: what it
    writes). ServiceError naming the field for a configuration that cannot work."""
    code = transform.get("type", "identity")
    if entity_type not in ENTITIES or code not in TRANSFORMS:
        raise ServiceError(f"unknown entity type {entity_type!r} or transform {code!r}", field="transform")
    try:
        described = TRANSFORMS[code].describe(transform, element_schema(entity_type))
    except ConfigError as error:
        raise ServiceError(str(error), field=f"transform.{error.field}") from None
    schema = described.json_schema
    return {
        "entity_type": entity_type,
        "transform": code,
        "content_type": described.content_type,
        "extension": described.extension,
        "json_schema": None if schema is None else self_contained(schema, f"{code} export of {entity_type}"),
        "csv": described.csv,
    }


def schema_key(transform: dict[str, Any]) -> str:
    """A transform configuration as a stable text (the key of a compiled schema)."""
    return json.dumps(transform, sort_keys=True, default=str)
