"""Declared bodies: a request or integrator-answer body declared once, as a class of validator nodes.

    class LineItem(Body, schema_name="OrderLineItem"):
        # The class docstring is the component's description.

        product_identifier = Str()
        variant_identifier = optional(Str())
        quantity = Int(minimum=1)
        price = Field(Num(positive=True), description="The unit price, VAT included.")
        discounts = optional(Arr(LineItemDiscount, max_items=100))

        @rule
        def price_covers_discounts(line: dict[str, Any], path: str, report: Report) -> None:
            ...  # its docstring is the rule's line in the component's description

A field is a node (``core.nodes``), a nested body class, or a ``Field`` (``optional(...)`` for one that may be left
out or null). A bare node is required. A ``@rule`` is a check across the fields of the cleaned object, run only
when every field is valid; it reports with ``report.error(join(path, "field"), message, code)``. A subclass adds
fields and rules to its base's (a campaign type to the common campaign fields).

The class is the body's one declaration:

* it validates: the class is a node itself (``LineItem.check(value, path, report)`` is the bound ``check`` of the
  ``Obj`` built from the fields, ``LineItem.node``), so the declared tree is the hand-written one: the same
  cleaned value, errors and warnings, at the same speed. ``LineItem.validated(value)`` raises ``InvalidInput``
  with every error.
* it is the request schema: ``LineItem.json_schema(components)`` refers to the component it adds; the view says
  ``extend_schema(request=LineItem)`` and drf-spectacular publishes it (``BodySchemaExtension``), with a
  component per nested body, the class docstring and the rules' docstrings as descriptions.

A request whose root is not an object (a bare array of items, an array or an object) is a ``Payload``:
``payload("StateChanges", Arr(StateChange), "...")`` names a node so that it is published the same way.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent, list_hash
from drf_spectacular.settings import spectacular_settings

from core.errors import InvalidInput
from core.nodes import INVALID, Components, Enum, Node, Obj, Report, Schema, with_description

RuleFunction = Callable[[dict[str, Any], str, Report], None]


@dataclass(frozen=True)
class Field:
    """A field of a body: its node, whether it is required, its description in the schema, and its JSON key
    when that is not a Python name (``Field(Str(), name="from")``)."""

    node: Node
    required: bool = True
    description: str = ""
    name: str | None = None


def optional(node: Node, *, description: str = "", name: str | None = None) -> Field:
    """A field that may be left out; an explicit null counts as left out."""
    return Field(node, required=False, description=description, name=name)


class DeclaredRule:
    """A rule across the fields of a body (``@rule``): called with the cleaned object, its path and the report."""

    def __init__(self, function: RuleFunction) -> None:
        self.function = function
        self.__doc__ = function.__doc__
        self.__name__ = getattr(function, "__name__", "rule")

    def __call__(self, obj: dict[str, Any], path: str, report: Report) -> None:
        self.function(obj, path, report)


def rule(function: RuleFunction) -> DeclaredRule:
    """Declares a cross-field rule of the body it is written in; its docstring documents it in the schema."""
    return DeclaredRule(function)


def _as_field(value: Any) -> Field | None:
    if isinstance(value, Field):
        return value
    if isinstance(value, Node):  # a node, or a body class (a body class is a node)
        return Field(value)
    return None


class BodyMeta(type, Node):
    """Builds a body's ``Obj`` from its class: the fields in the order written (a base's first), then the rules."""

    fields: dict[str, Field]
    rules: tuple[DeclaredRule, ...]
    node: Obj
    schema_name: str

    def __new__(
        mcs,
        name: str,
        bases: tuple[type, ...],
        namespace: dict[str, Any],
        *,
        schema_name: str | None = None,
        **kwargs: Any,
    ) -> BodyMeta:
        fields: dict[str, Field] = {}
        rules: list[DeclaredRule] = []
        for base in bases:
            if isinstance(base, BodyMeta):
                fields.update(base.fields)
                rules.extend(r for r in base.rules if r not in rules)
        for attribute, value in list(namespace.items()):
            declared = _as_field(value)
            if declared is not None:
                # Taken out of the class: a field named ``check`` or ``node`` shadows nothing.
                del namespace[attribute]
                fields[declared.name or attribute] = declared
            elif isinstance(value, DeclaredRule):
                del namespace[attribute]
                rules.append(value)
        node = Obj(
            {key: f.node for key, f in fields.items()},
            required=[key for key, f in fields.items() if f.required],
            # The plain functions (with their docstrings), not the wrappers: no call of its own per rule.
            rules=[r.function for r in rules],
        )
        # The class's own ``check`` is the Obj's bound method (found before the metaclass's): a body nested in
        # another costs no call of its own, so the declared tree checks as fast as the hand-written one.
        namespace["check"] = node.check
        cls = super().__new__(mcs, name, bases, namespace, **kwargs)
        cls.fields = fields
        cls.rules = tuple(rules)
        cls.schema_name = schema_name or name
        cls.node = node
        return cls

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(f"{cls.__name__} is a body declaration: use {cls.__name__}.check() or .validated()")

    def check(cls, value: Any, path: str, report: Report) -> Any:
        return cls.node.check(value, path, report)

    def validated(cls, value: Any, *, report: Report | None = None) -> Any:
        """The cleaned body, or ``InvalidInput`` (400) naming every error with its path."""
        report = report if report is not None else Report()
        cleaned = cls.node.check(value, "", report)
        if report.errors:
            raise InvalidInput(report.errors)
        return cleaned

    def json_schema(cls, components: Components) -> Schema:
        return components.ref(cls.schema_name, cls, lambda: cls.object_schema(components))

    def object_schema(cls, components: Components) -> Schema:
        """The body's own schema (the component's content): fields, required names, descriptions."""
        schema = cls.node.json_schema(components)
        properties = schema["properties"]
        for key, declared in cls.fields.items():
            properties[key] = with_description(properties[key], declared.description)
        parts = [inspect.cleandoc(cls.__doc__)] if cls.__doc__ else []
        if "description" in schema:  # the rules
            parts.append("Rules:\n" + schema["description"])
        if parts:
            schema["description"] = "\n\n".join(parts)
        return schema


class Body(metaclass=BodyMeta):
    """The base of a declared body (see the module docstring)."""

    fields: ClassVar[dict[str, Field]]
    rules: ClassVar[tuple[DeclaredRule, ...]]
    node: ClassVar[Obj]
    schema_name: ClassVar[str]


def components_of(bodies: Iterable[BodyMeta], *, suffix: str = "") -> dict[str, Schema]:
    """The OpenAPI components of ``bodies`` and of everything they refer to, by name."""
    components = Components(suffix=suffix)
    for body in bodies:
        body.json_schema(components)
    return components.schemas


def published(object_schema: Callable[[Components], Schema], auto_schema: Any, direction: str) -> Schema:
    """drf-spectacular: the schema of a request (or answer) body, the components it refers to registered."""
    split = direction == "request" and spectacular_settings.COMPONENT_SPLIT_REQUEST
    components = Components(suffix="Request" if split else "")
    schema = object_schema(components)
    for name, sub in components.schemas.items():
        auto_schema.registry.register_on_missing(
            ResolvedComponent(name=name, type=ResolvedComponent.SCHEMA, object=components.owners[name], schema=sub)
        )
    return schema


class BodySchemaExtension(OpenApiSerializerExtension):
    """drf-spectacular: a body class given as ``extend_schema(request=...)`` is a component like a serializer's,
    named ``<schema_name>Request`` (``COMPONENT_SPLIT_REQUEST``); nested bodies become components of their own."""

    target_class: type = Body
    match_subclasses = True

    def get_name(self, auto_schema: Any, direction: str) -> str:
        return str(self.target.schema_name)

    def map_serializer(self, auto_schema: Any, direction: str) -> Schema:
        return published(self.target.object_schema, auto_schema, direction)


class OneOrMany(Node):
    """A request body that is one object of a declared body or an array of 1 to ``max_items`` of them (the POS
    stock events). It checks each object at its own path (``""`` for one, ``[3]`` in an array) and cleans to the
    list; the view answers an envelope that is neither, or too long, before (its own status codes). Published as
    a component of its own, the ``oneOf`` of the two forms (``OneOrManySchemaExtension``)."""

    def __init__(self, body: BodyMeta, *, max_items: int, schema_name: str) -> None:
        self.body = body
        self.max_items = max_items
        self.schema_name = schema_name

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, dict):
            cleaned = self.body.check(value, path, report)
            return INVALID if cleaned is INVALID else [cleaned]
        if not isinstance(value, list):
            return self.wrong_type("an object or an array", value, path, report)
        out = [self.body.check(item, f"{path}[{i}]", report) for i, item in enumerate(value)]
        return INVALID if any(item is INVALID for item in out) else out

    def validated(self, value: Any) -> list[Any]:
        """The cleaned objects, or ``InvalidInput`` (400) naming every error with its path."""
        report = Report()
        cleaned = self.check(value, "", report)
        if report.errors:
            raise InvalidInput(report.errors)
        result: list[Any] = cleaned
        return result

    def object_schema(self, components: Components) -> Schema:
        one = self.body.json_schema(components)
        return {
            "oneOf": [one, {"type": "array", "items": one, "minItems": 1, "maxItems": self.max_items}],
            "description": f"One object, or an array of 1 to {self.max_items}.",
        }

    def json_schema(self, components: Components) -> Schema:
        return components.ref(self.schema_name, self, lambda: self.object_schema(components))


class OneOrManySchemaExtension(BodySchemaExtension):
    """drf-spectacular: a ``OneOrMany`` given as ``extend_schema(request=...)``, as ``BodySchemaExtension``."""

    target_class = OneOrMany


# --- For the import bodies: model choices, and requests whose root is not an object ------------------------


class Choices(Enum):
    """An ``Enum`` of a model field's choices (``OrderState.choices``). Its schema carries the enum id
    drf-spectacular gives those choices, so a body and the model's serializers share one enum component instead
    of two of one name (a warning, and a name made of a hash)."""

    def __init__(self, choices: Iterable[tuple[str, str]], *, hints: dict[str, str] | None = None) -> None:
        self.choices = [(value, label) for value, label in choices if value not in ("", None)]
        super().__init__([value for value, _ in self.choices], hints=hints)

    def json_schema(self, components: Components) -> Schema:
        return {**super().json_schema(components), "x-spec-enum-id": list_hash(self.choices)}


class Payload:
    """A request body whose root is a node other than an object (made by ``payload``): published like a body."""

    node: ClassVar[Node]
    schema_name: ClassVar[str]

    @classmethod
    def object_schema(cls, components: Components) -> Schema:
        """The node's schema, with the payload's description."""
        return with_description(cls.node.json_schema(components), inspect.cleandoc(cls.__doc__ or ""))


def payload(schema_name: str, node: Node, description: str) -> type[Payload]:
    """A named request body of any node (``extend_schema(request=payload("StateChanges", Arr(...), "..."))``);
    the description says why its root is what it is."""
    return type(schema_name, (Payload,), {"node": node, "schema_name": schema_name, "__doc__": description})


class PayloadSchemaExtension(BodySchemaExtension):
    """drf-spectacular: a ``Payload`` given as ``extend_schema(request=...)``, as ``BodySchemaExtension``."""

    target_class = Payload  # a Payload is published as a Body is
