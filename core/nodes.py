"""The validator nodes every input body is checked with (import items, POS bodies, integrator answers).

Why not DRF serializers: an import request validates up to ``IMPORT_MAX_ITEMS`` nested items, and
the error must name the exact path (``basket.line_items[0].price``). These nodes do both in one
pass and tens of times faster than nested serializers (measured in ``bench/validation.py``).

A node that only holds its options (``Str``, ``Int``, ``Num``, ``Arr``) declares them as dataclass fields.
Each node's ``check(value, path, report)`` returns the cleaned value (unknown keys dropped) or
``INVALID`` after adding errors to ``report``. Unknown keys are ignored and reported as warnings.
Each node's ``json_schema(components)`` describes what it accepts as an OpenAPI 3.1 schema object (JSON Schema
2020-12), so a body declared with nodes (``core.declare``) is also its own request schema.

The input is what ``core.jsonparse`` made of the bytes: fractions are ``Decimal``, whole numbers ``int``, never
``float``; a node keeps a number as it came.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from decimal import Decimal
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import iso4217

INVALID: Any = object()

# Amounts beyond this are refused: no retail amount is that large, and it keeps every accepted number
# exactly representable in storage.
MAX_AMOUNT = Decimal("1e12")
MAX_STRING = 10_000
# The digits an Int without a minimum takes below zero when written as a Decimal (-3.0): the parser's own
# bound on any number (``core.jsonparse.MAX_EXPONENT``).
MAX_INT_DIGITS = 30


@dataclass
class Report:
    """Errors and warnings of one item, each ``{"field", "message", "code"}``."""

    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    # Context for MarketPrice checks: the markets an import targets.
    markets: tuple[str, ...] = ()

    def error(self, path: str, message: str, code: str = "invalid") -> Any:
        self.errors.append({"field": path, "message": message, "code": code})
        return INVALID

    def warn(self, path: str, message: str, code: str = "unknown_field") -> None:
        if len(self.warnings) < 20:
            self.warnings.append({"field": path, "message": message, "code": code})


def join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


@cache
def _currency_codes() -> frozenset[str]:
    # The same ISO 4217 table as ``accounts.money`` (core knows no app).
    return frozenset(c.code for c in iso4217.Currency)


def is_currency_code(code: object) -> bool:
    return isinstance(code, str) and code in _currency_codes()


Schema = dict[str, Any]


class Components:
    """The named schemas of one OpenAPI document that node schemas refer to (``#/components/schemas/<name>``).

    A name belongs to one owner (a body class, a node class): a second owner of the same name is a programming
    error, found when the schema is built rather than shipped as a silently merged component."""

    def __init__(self, *, suffix: str = "") -> None:
        self.suffix = suffix
        self.schemas: dict[str, Schema] = {}
        self.owners: dict[str, object] = {}

    def ref(self, name: str, owner: object, build: Callable[[], Schema]) -> Schema:
        full = name + self.suffix
        known = self.owners.get(full)
        if known is None:
            self.owners[full] = owner
            self.schemas[full] = {}  # taken before it is built: a body that contains itself refers to itself
            self.schemas[full] = build()
        elif known is not owner:
            raise ValueError(f"two schemas are named {full!r}: {known!r} and {owner!r}")
        return {"$ref": f"#/components/schemas/{full}"}


def schema_number(value: Decimal | int) -> Decimal | int:
    """A bound as the schema prints it: whole numbers as int (1e12 would print as 1E+12)."""
    if isinstance(value, Decimal) and value == value.to_integral_value():
        return int(value)
    return value


def with_description(schema: Schema, description: str) -> Schema:
    """``schema`` with a description; a ``$ref`` is wrapped in an ``allOf``, as tools written for OpenAPI 3.0
    (code generators, Swagger UI) ignore the siblings of a ``$ref``."""
    if not description:
        return schema
    if "$ref" in schema:
        return {"allOf": [schema], "description": description}
    return {**schema, "description": description}


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | Decimal | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


class Node:
    def check(self, value: Any, path: str, report: Report) -> Any:
        raise NotImplementedError

    def json_schema(self, components: Components) -> Schema:
        """What the node accepts, as an OpenAPI 3.1 schema object; ``{}`` (any value) unless a node says more."""
        return {}

    def wrong_type(self, expected: str, value: Any, path: str, report: Report) -> Any:
        return report.error(path, f"must be {expected}, not {_type_name(value)}", "invalid_type")


@dataclass(eq=False, kw_only=True)
class Str(Node):
    max_length: int = 255
    allow_blank: bool = False
    forbidden: str = ""

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, str):
            return self.wrong_type("a string", value, path, report)
        if not self.allow_blank and not value.strip():
            return report.error(path, "must not be blank", "blank")
        if len(value) > self.max_length:
            return report.error(path, f"must be at most {self.max_length} characters", "too_long")
        if "\x00" in value:
            return report.error(path, "must not contain NUL characters", "invalid")
        if self.forbidden:
            bad = sorted({c for c in value if c in self.forbidden})
            if bad:
                chars = " ".join(bad)
                return report.error(path, f"must not contain any of . / # $ * [ ] (found {chars})", "invalid")
        return value

    def json_schema(self, components: Components) -> Schema:
        schema: Schema = {"type": "string", "maxLength": self.max_length}
        patterns = []
        if not self.allow_blank:
            schema["minLength"] = 1
            patterns.append(r"\S")  # not only white space
        if self.forbidden:
            patterns.append("^[^" + "".join("\\" + c for c in self.forbidden) + "]*$")
        if len(patterns) == 1:
            schema["pattern"] = patterns[0]
        elif patterns:
            schema["allOf"] = [{"pattern": p} for p in patterns]
        return schema


class Url(Str):
    def __init__(self, *, https_only: bool = False) -> None:
        super().__init__(max_length=2048)
        self.https_only = https_only

    def check(self, value: Any, path: str, report: Report) -> Any:
        value = super().check(value, path, report)
        if value is INVALID:
            return value
        try:
            parts = urlsplit(value)
        except ValueError:  # an unclosed "[", a bracketed host that is no IP address, an NFKC-changing netloc
            return report.error(path, "is not a valid URL", "invalid_url")
        schemes = ("https",) if self.https_only else ("http", "https")
        if parts.scheme not in schemes or not parts.netloc:
            return report.error(path, f"must be an absolute {' or '.join(schemes)} URL", "invalid_url")
        return value

    def json_schema(self, components: Components) -> Schema:
        scheme = "https" if self.https_only else "https?"
        return {"type": "string", "format": "uri", "maxLength": self.max_length, "pattern": f"^{scheme}://[^/?#]"}


class Currency(Node):
    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, str):
            return self.wrong_type("an ISO 4217 currency code", value, path, report)
        if not is_currency_code(value):
            return report.error(path, f"'{value[:10]}' is not an ISO 4217 currency code", "invalid_currency")
        return value

    def json_schema(self, components: Components) -> Schema:
        return components.ref(
            "CurrencyCode",
            Currency,
            lambda: {"type": "string", "enum": sorted(_currency_codes()), "description": "An ISO 4217 currency code."},
        )


class Bool(Node):
    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, bool):
            return self.wrong_type("a boolean", value, path, report)
        return value

    def json_schema(self, components: Components) -> Schema:
        return {"type": "boolean"}


class AnyValue(Node):
    """A value whose content the spec does not show, kept as it came: any JSON value (``fiscal_rules_data``);
    its subclasses take one JSON type only."""

    python_type: type = object
    expected = "any value"
    schema: Schema = {}

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, self.python_type):
            return self.wrong_type(self.expected, value, path, report)
        return value

    def json_schema(self, components: Components) -> Schema:
        return dict(self.schema)


class AnyObject(AnyValue):
    """A free-form object (payment metadata, an integrator's private ``external_giftcard``)."""

    python_type = dict
    expected = "an object"
    schema = {"type": "object"}


class AnyArray(AnyValue):
    """A free-form array (payment ``receipts``)."""

    python_type = list
    expected = "an array"
    schema = {"type": "array", "items": {}}


@dataclass(eq=False, kw_only=True)
class Int(Node):
    """A whole JSON number: ``3`` and also ``3.0`` or ``3e0`` (parsed as Decimal), which JSON Schema's
    ``"type": "integer"`` accepts, as any number with a zero fractional part; taken as the Python int."""

    minimum: int | None = None
    maximum: int = 1_000_000

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral_value():
            if value.adjusted() >= self._digits():
                # More digits than either bound: refused before int(), whose cost grows with the digits
                # (``1e400000``).
                return report.error(path, self._range_problem(value > 0), "out_of_range")
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            return self.wrong_type("an integer", value, path, report)
        if (self.minimum is not None and value < self.minimum) or value > self.maximum:
            return report.error(path, self._range_problem(value > self.maximum), "out_of_range")
        return value

    def _digits(self) -> int:
        """The digits of the larger bound (``MAX_INT_DIGITS`` below zero without a minimum)."""
        lowest = len(str(abs(self.minimum))) if self.minimum is not None else MAX_INT_DIGITS
        return max(len(str(abs(self.maximum))), lowest)

    def _range_problem(self, above: bool) -> str:
        if above:
            return f"must be at most {self.maximum}"
        if self.minimum is None:
            return f"must have at most {MAX_INT_DIGITS} digits"
        return "must be positive" if self.minimum == 1 else f"must be at least {self.minimum}"

    def json_schema(self, components: Components) -> Schema:
        schema: Schema = {"type": "integer", "maximum": self.maximum}
        if self.minimum is not None:
            schema["minimum"] = self.minimum
        return schema


@dataclass(eq=False, kw_only=True)
class Num(Node):
    """A JSON number (parsed as int or Decimal), finite and within ``MAX_AMOUNT``."""

    minimum: Decimal | int | None = None
    maximum: Decimal | int | None = None
    positive: bool = False

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, bool) or not isinstance(value, int | Decimal):
            return self.wrong_type("a number", value, path, report)
        if isinstance(value, Decimal) and not value.is_finite():
            return report.error(path, "must be a finite number", "invalid_number")
        if abs(Decimal(value)) >= MAX_AMOUNT:
            return report.error(path, f"must be less than {MAX_AMOUNT:f} in size", "out_of_range")
        if self.positive and value <= 0:
            return report.error(path, "must be positive", "out_of_range")
        if self.minimum is not None and value < self.minimum:
            return report.error(path, f"must be at least {self.minimum}", "out_of_range")
        if self.maximum is not None and value > self.maximum:
            return report.error(path, f"must be at most {self.maximum}", "out_of_range")
        return value

    def json_schema(self, components: Components) -> Schema:
        # The tighter of the node's bound and MAX_AMOUNT, on each side (MAX_AMOUNT itself is excluded: an
        # exclusive bound is a number of its own in OpenAPI 3.1, not a flag on ``minimum``).
        schema: Schema = {"type": "number"}
        if self.positive:
            schema["exclusiveMinimum"] = 0
        elif self.minimum is not None and self.minimum > -MAX_AMOUNT:
            schema["minimum"] = schema_number(self.minimum)
        else:
            schema["exclusiveMinimum"] = -schema_number(MAX_AMOUNT)
        if self.maximum is not None and self.maximum < MAX_AMOUNT:
            schema["maximum"] = schema_number(self.maximum)
        else:
            schema["exclusiveMaximum"] = schema_number(MAX_AMOUNT)
        return schema


class Enum(Node):
    def __init__(self, values: Iterable[str], *, hints: dict[str, str] | None = None) -> None:
        self.values = tuple(values)
        self.allowed = frozenset(self.values)
        self.hints = hints or {}

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, str):
            return self.wrong_type("a string", value, path, report)
        if value not in self.allowed:
            if value in self.hints:
                return report.error(path, self.hints[value], "not_allowed")
            shown = value if len(value) <= 60 else value[:60] + "…"
            return report.error(path, f"'{shown}' is not one of: {', '.join(self.values)}", "invalid_choice")
        return value

    def json_schema(self, components: Components) -> Schema:
        return {"type": "string", "enum": list(self.values)}


class L10nString(Node):
    """Spec shared type: a plain string, or an object mapping a language code to a string."""

    def __init__(self, *, max_length: int = 1000) -> None:
        self.text = Str(max_length=max_length)

    def check(self, value: Any, path: str, report: Report) -> Any:
        if isinstance(value, str):
            return self.text.check(value, path, report)
        if not isinstance(value, dict):
            return self.wrong_type("a string or an object of language code to string", value, path, report)
        if not value:
            return report.error(path, "must name at least one language", "blank")
        ok = True
        for lang, text in value.items():
            if not (2 <= len(lang) <= 16) or not lang.replace("-", "").replace("_", "").isalnum():
                report.error(join(path, lang[:20]), "is not a language code", "invalid")
                ok = False
            elif self.text.check(text, join(path, lang), report) is INVALID:
                ok = False
        return value if ok else INVALID

    def json_schema(self, components: Components) -> Schema:
        text = self.text.json_schema(components)
        return {
            "oneOf": [
                text,
                {"type": "object", "additionalProperties": text, "minProperties": 1},
            ],
            "description": "A text, or an object of language code (`da`, `en-GB`) to text.",
        }


class MarketPrice(Node):
    """Spec shared type: one number for all markets, or an object of market identifier to number.

    When it is an object it must price every market the import targets (``Report.markets``).
    """

    def __init__(self, *, positive: bool = False) -> None:
        self.number = Num(positive=positive, minimum=None if positive else 0)

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            if isinstance(value, bool) or not isinstance(value, int | Decimal):
                return self.wrong_type("a number or an object of market to number", value, path, report)
            return self.number.check(value, path, report)
        ok = True
        for market, price in value.items():
            if self.number.check(price, join(path, market), report) is INVALID:
                ok = False
        for market in report.markets:
            if market not in value:
                report.error(join(path, market), f"no price for market '{market}'", "missing_market")
                ok = False
        return value if ok else INVALID

    def json_schema(self, components: Components) -> Schema:
        number = self.number.json_schema(components)
        return {
            "oneOf": [number, {"type": "object", "additionalProperties": number}],
            "description": "One number for every market, or an object of market identifier to number "
            "(then every market of the import is priced).",
        }


@dataclass(eq=False)
class Arr(Node):
    item: Node
    _: KW_ONLY
    min_items: int = 0
    max_items: int = 1000

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, list):
            return self.wrong_type("an array", value, path, report)
        if len(value) < self.min_items:
            what = "must not be empty" if self.min_items == 1 else f"must have at least {self.min_items} items"
            return report.error(path, what, "empty" if self.min_items == 1 else "too_short")
        if len(value) > self.max_items:
            return report.error(path, f"must have at most {self.max_items} items", "too_long")
        out = []
        ok = True
        for i, element in enumerate(value):
            cleaned = self.item.check(element, f"{path}[{i}]", report)
            ok = ok and cleaned is not INVALID
            out.append(cleaned)
        return out if ok else INVALID

    def json_schema(self, components: Components) -> Schema:
        schema: Schema = {"type": "array", "items": self.item.json_schema(components), "maxItems": self.max_items}
        if self.min_items:
            schema["minItems"] = self.min_items
        return schema


Rule = Callable[[dict[str, Any], str, Report], None]


class Obj(Node):
    """An object with known fields; ``rules`` add cross-field checks on the cleaned object."""

    def __init__(
        self,
        fields: dict[str, Node],
        *,
        required: Iterable[str] = (),
        rules: Iterable[Rule] = (),
    ) -> None:
        self.fields = fields
        self.required = tuple(required)
        self.rules = tuple(rules)

    def extend(self, fields: dict[str, Node], *, required: Iterable[str] = (), rules: Iterable[Rule] = ()) -> Obj:
        return Obj(
            {**self.fields, **fields},
            required=(*self.required, *required),
            rules=(*self.rules, *rules),
        )

    def check(self, value: Any, path: str, report: Report) -> Any:
        if not isinstance(value, dict):
            return self.wrong_type("an object", value, path, report)
        before = len(report.errors)
        for name in self.required:
            if value.get(name) is None:
                report.error(join(path, name), "is required", "required")
        out: dict[str, Any] = {}
        for key, element in value.items():
            node = self.fields.get(key)
            if node is None:
                report.warn(join(path, str(key)[:100]), "unknown field, ignored")
                continue
            if element is None:
                continue  # an explicit null: "absent" for an optional field; a required one is reported above
            cleaned = node.check(element, join(path, key), report)
            if cleaned is not INVALID:
                out[key] = cleaned
        if len(report.errors) > before:
            return INVALID
        for rule in self.rules:
            rule(out, path, report)
        return out if len(report.errors) == before else INVALID

    def json_schema(self, components: Components) -> Schema:
        """The fields; an optional one may be null (it then counts as absent); the rules as the description.

        Unknown fields are ignored (with a warning), so ``additionalProperties`` stays open."""
        properties = {}
        for name, node in self.fields.items():
            schema = node.json_schema(components)
            if name not in self.required:
                schema = nullable(schema)
            properties[name] = schema
        out: Schema = {"type": "object", "properties": properties}
        if self.required:
            out["required"] = list(self.required)
        described = [rule.__doc__.strip() for rule in self.rules if rule.__doc__]
        if described:
            out["description"] = "\n".join(f"- {text}" for text in described)
        return out


class OneOfBy(Node):
    """An object whose ``key`` names the node that checks it (a campaign's ``type`` picks its type's body).

    An object naming no known choice is checked against ``common`` (the fields every choice has), and its key
    against the known names, so that it gets every error it would get anyway. The schema is a ``oneOf`` of the
    choices (each a body, so a ``$ref`` to its component, whose ``key`` then lists the names that choose it) with a
    ``discriminator`` on ``key``."""

    def __init__(self, key: str, choices: Mapping[str, Node], *, common: Node) -> None:
        self.key = key
        self.choices = choices
        self.common = common
        self.names = Enum(choices)

    def check(self, value: Any, path: str, report: Report) -> Any:
        name = value.get(self.key) if isinstance(value, dict) else None
        chosen = self.choices.get(name) if isinstance(name, str) else None
        if chosen is not None:
            return chosen.check(value, path, report)
        self.common.check(value, path, report)
        if isinstance(name, str):
            self.names.check(name, join(path, self.key), report)
        return INVALID

    def json_schema(self, components: Components) -> Schema:
        refs = {name: node.json_schema(components) for name, node in self.choices.items()}
        names_of: dict[str, list[str]] = {}
        for name, ref in refs.items():
            names_of.setdefault(ref["$ref"], []).append(name)
        for target, names in names_of.items():
            # Each choice's key takes only its own names, so that exactly one branch of the oneOf matches for a
            # validator that does not read the discriminator too (the fields of the choices overlap). Under an
            # allOf: drf-spectacular would make a named enum component of a bare ``enum``, one per choice.
            properties = components.schemas[target.rsplit("/", 1)[-1]]["properties"]
            key = properties[self.key]
            if {"enum": names} not in key.get("allOf", ()):  # built once per document, however often referred to
                properties[self.key] = {**key, "allOf": [*key.get("allOf", ()), {"enum": names}]}
        return {
            "oneOf": list({ref["$ref"]: ref for ref in refs.values()}.values()),
            "discriminator": {"propertyName": self.key, "mapping": {name: ref["$ref"] for name, ref in refs.items()}},
        }


def nullable(schema: Schema) -> Schema:
    """``schema`` that also accepts null, as OpenAPI 3.1 says it (JSON Schema: no ``nullable``): ``null`` added to
    a ``type`` (and to an ``enum``), a null alternative added to a ``oneOf``, a reference or a schema of no type
    made one branch of a ``oneOf`` with null. ``{}`` takes null already."""
    if not schema:
        return schema
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        out = {**schema, "type": [*types, "null"] if "null" not in types else types}
        if "enum" in schema and None not in schema["enum"]:
            out["enum"] = [*schema["enum"], None]
        return out
    if "oneOf" in schema:
        return {**schema, "oneOf": [*schema["oneOf"], {"type": "null"}]}
    rest = {key: value for key, value in schema.items() if key == "description"}
    core = {key: value for key, value in schema.items() if key != "description"}
    return {"oneOf": [core, {"type": "null"}], **rest}


def exactly_one_of(*names: str) -> Rule:
    def rule(obj: dict[str, Any], path: str, report: Report) -> None:
        present = [n for n in names if n in obj]
        if len(present) != 1:
            report.error(
                join(path, names[0]),
                f"exactly one of {' or '.join(names)} is required"
                + (f" (both {' and '.join(present)} given)" if present else ""),
                "exactly_one",
            )

    rule.__doc__ = f"Exactly one of {' or '.join(f'`{n}`' for n in names)}."
    return rule
