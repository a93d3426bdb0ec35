"""What a transform's configuration says its output is: the media type, and for the transforms whose output the
configuration fixes, a JSON Schema (identity, simple JSON) or the CSV layout (``Transform.describe``).

A transform describes its output from its configuration and the element's schema, which it reads through an
``ElementSchema``: the element type's JSON Schema (draft 2020-12) and the ``$defs`` it refers to, walked along the
same value paths a configuration names (``summary.line_items[0].name``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

Schema = dict[str, Any]
PathStep = str | int

NULL: Schema = {"type": "null"}
_DEFS = "#/$defs/"
_MAX_DEPTH = 50


@dataclass(frozen=True)
class Described:
    """A transform's output as its configuration fixes it. ``json_schema`` (identity, simple JSON) may refer to the
    element's ``$defs``, added by the caller; ``csv`` is the CSV layout; both None: a template writes it."""

    content_type: str
    extension: str
    json_schema: Schema | None = None
    csv: dict[str, Any] | None = None


@dataclass(frozen=True)
class ElementSchema:
    """An entity type's element schema: ``wrapper`` and ``element`` are ``$ref`` to ``defs``, the JSON Schemas of
    its identity wrapper and element and of everything they refer to."""

    entity_type: str
    wrapper: Schema
    element: Schema
    defs: dict[str, Schema]

    def resolve(self, schema: Schema) -> Schema:
        """``schema`` with its ``$ref`` followed (and a wrapper that only adds a description unwrapped)."""
        for _ in range(_MAX_DEPTH):
            ref = schema.get("$ref")
            if isinstance(ref, str) and ref.startswith(_DEFS):
                schema = self.defs.get(ref[len(_DEFS) :], {})
                continue
            parts = schema.get("allOf")
            if isinstance(parts, list) and len(parts) == 1 and not _has_own_shape(schema):
                schema = parts[0]
                continue
            return schema
        return {}

    def at(self, path: Iterable[PathStep], start: Schema | None = None) -> Schema | None:
        """The schema of the value at ``path`` from ``start`` (default: the element), or None when the schema does
        not declare it (the value is then whatever the entity holds there, if anything)."""
        schema: Schema | None = self.element if start is None else start
        for step in path:
            if schema is None:
                return None
            schema = self._step(schema, step, 0)
        return schema

    def _step(self, schema: Schema, step: PathStep, depth: int) -> Schema | None:
        if depth > _MAX_DEPTH:
            return None
        schema = self.resolve(schema)
        found: list[Schema] = []
        for key in ("anyOf", "oneOf", "allOf"):
            for branch in schema.get(key, []) if isinstance(schema.get(key), list) else []:
                inner = self._step(branch, step, depth + 1)
                if inner is not None and inner not in found:
                    found.append(inner)
        if isinstance(step, int):
            items = schema.get("items")
            if isinstance(items, dict):
                found.append(items)
        else:
            properties = schema.get("properties")
            if isinstance(properties, dict) and step in properties:
                found.append(properties[step])
            elif isinstance(schema.get("additionalProperties"), dict):
                found.append(schema["additionalProperties"])
        if not found:
            return None
        return found[0] if len(found) == 1 else {"anyOf": found}

    def types(self, schema: Schema | None) -> set[str]:
        """The JSON types a value of ``schema`` can have besides null; empty: any."""
        if schema is None:
            return set()
        return self._types(schema, 0) - {"null"}

    def _types(self, schema: Schema, depth: int) -> set[str]:
        schema = self.resolve(schema)
        if depth > _MAX_DEPTH:
            return set()
        declared = schema.get("type")
        if isinstance(declared, str):
            return {"number"} if declared == "integer" else {declared}
        if isinstance(declared, list):
            return {"number" if kind == "integer" else kind for kind in declared}
        if "enum" in schema and isinstance(schema["enum"], list):
            return {json_type(value) for value in schema["enum"]}
        branches = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(branches, list):
            kinds: set[str] = set()
            for branch in branches:
                inner = self._types(branch, depth + 1)
                if not inner:
                    return set()
                kinds |= inner
            return kinds
        if "properties" in schema or "additionalProperties" in schema:
            return {"object"}
        if "items" in schema:
            return {"array"}
        return set()

    def description(self, schema: Schema | None) -> str:
        """The description the schema gives the value (its own, or that of what it refers to)."""
        for _ in range(_MAX_DEPTH):
            if schema is None:
                return ""
            text = schema.get("description")
            if isinstance(text, str) and text:
                return " ".join(text.split())
            ref = schema.get("$ref")
            parts = schema.get("allOf")
            if isinstance(ref, str) and ref.startswith(_DEFS):
                schema = self.defs.get(ref[len(_DEFS) :])
            elif isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict):
                schema = parts[0]
            else:
                return ""
        return ""


def _has_own_shape(schema: Schema) -> bool:
    return any(key not in ("allOf", "description", "title") for key in schema)


def json_type(value: Any) -> str:
    """The JSON type of a value (a Decimal is a number)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float | Decimal):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def nullable(schema: Schema) -> Schema:
    """``schema`` or null (its description kept at the top)."""
    shape = {key: value for key, value in schema.items() if key != "description"}
    if not shape or shape.get("type") == "null":
        return schema
    described = {"description": schema["description"]} if "description" in schema else {}
    return {"anyOf": [shape, NULL], **described}


def cell_type(kinds: set[str]) -> str:
    """How a value of these JSON types reads in a text cell: ``text``, ``number``, ``boolean`` (true / false) or
    ``json`` (an object or list written as JSON); any other mix reads as text."""
    if kinds == {"number"}:
        return "number"
    if kinds == {"boolean"}:
        return "boolean"
    if kinds and kinds <= {"object", "array"}:
        return "json"
    return "text"
