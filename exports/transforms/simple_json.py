"""Simple JSON: a flat JSON object per element, described by configuration (spec "Events" -> "Transforms").

Configuration::

    {
        "type": "simple_json",
        "fields": {                          # required, 1..500 output keys, kept in this order
            "total": "{summary.total}",      # exactly one placeholder: the value keeps its JSON type
            "shop": "{source.shop_id}",
            "note": "Sale {identifier}",     # mixed text: always a string
            "day": "{timing.timestamp|date:%Y-%m-%d}",
            "amount": "{summary.total|money}"
        },
        "drop_empty": false,                 # drop keys whose value is null
        "decimal_separator": ".",            # for |money and |number ("." or ",")
        "timezone": "UTC",                   # optional, for |date (default: UTC for timestamps, ISO keeps its offset)
        "skip_voided": false, "skip_if": {"path": "voided", "equals": true}
    }

Placeholders are ``{path}`` or ``{path|format}`` with a value path (see ``common``) and format ``text``,
``number``, ``money`` (quantized to the entity's ``base_currency_code`` minor unit) or ``date:<strftime>``.
``{{`` and ``}}`` are literal braces. A field that is exactly one placeholder without a format keeps the JSON
value as it is (a number stays a number, an object stays an object, a missing path is null); with a format it is
a string (or null when the value is missing or unusable). In mixed text a missing value reads as an empty string.
Whether null keys are dropped is decided for the whole object by ``drop_empty`` (no per-key syntax).

Output, batch or real time alike, follows the spec's exported wrapper: ``{element_key: flat_object, ...}``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from exports.transforms.base import ConfigError, Element, RenderContext, Rendered, TransformError
from exports.transforms.common import (
    BoundedWriter,
    CheckedTransform,
    Path,
    RenderBudget,
    check_date_format,
    check_formats,
    check_timezone,
    format_date,
    format_money,
    format_number,
    parse_path,
    require_bool,
    require_choice,
    resolve,
    split_skipped,
    to_text,
    validate_skip,
    write_json,
)
from exports.transforms.described import Described, ElementSchema, Schema, nullable

MAX_FIELDS = 500
MAX_FIELD_TEMPLATE_LENGTH = 2000
_TOKEN_RE = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]|[^{}]+")


@dataclass(frozen=True)
class _Placeholder:
    path: Path
    format: str | None  # None, "text", "number", "money" or a strftime format prefixed "date:"


_Part = str | _Placeholder


def _compile_placeholder(text: str) -> _Placeholder:
    path_text, _, format_text = text.partition("|")
    try:
        path = parse_path(path_text.strip())
    except ValueError as error:
        raise ValueError(f"placeholder {{{text}}}: {error}") from error
    if not _:
        return _Placeholder(path, None)
    format_text = format_text.strip()
    if format_text in ("text", "number", "money"):
        return _Placeholder(path, format_text)
    if format_text.startswith("date:"):
        try:
            check_date_format(format_text[5:])
        except ValueError as error:
            raise ValueError(f"placeholder {{{text}}}: date format {error}") from error
        return _Placeholder(path, format_text)
    raise ValueError(f"placeholder {{{text}}}: unknown format {format_text!r} (text, number, money, date:<strftime>)")


def compile_field(template: object) -> list[_Part]:
    """Split ``"Sale {identifier}"`` into literal strings and placeholders; ValueError if malformed."""
    if not isinstance(template, str):
        raise ValueError("must be a string such as {summary.total}")
    if len(template) > MAX_FIELD_TEMPLATE_LENGTH:
        raise ValueError(f"must be at most {MAX_FIELD_TEMPLATE_LENGTH} characters")
    parts: list[_Part] = []
    for match in _TOKEN_RE.finditer(template):
        token = match.group(0)
        if token in ("{{", "}}"):
            parts.append(token[0])
        elif match.group(1) is not None:
            parts.append(_compile_placeholder(match.group(1)))
        elif token in ("{", "}"):
            raise ValueError("has an unbalanced brace (write {{ or }} for a literal brace)")
        else:
            parts.append(token)
    return parts


def _number_text(separator: str) -> Schema:
    """A number written as text: digits, an optional sign and fraction, with ``separator`` before the fraction."""
    return {"type": "string", "pattern": "^-?[0-9]+(" + re.escape(separator) + "[0-9]+)?$"}


def _field_schema(template: str, parts: list[_Part], element: ElementSchema, separator: str) -> tuple[Schema, bool]:
    """The JSON Schema of one output key's value, and whether the value can be null (a missing value)."""
    source = f"From `{template}`"
    if not (len(parts) == 1 and isinstance(parts[0], _Placeholder)):
        if all(isinstance(part, str) for part in parts):
            literal = "".join(part for part in parts if isinstance(part, str))
            return {"type": "string", "const": literal, "description": "Always this text."}, False
        return {"type": "string", "description": f"{source}: text, a missing value read as nothing."}, False
    placeholder = parts[0]
    if placeholder.format is None:
        found = element.at(placeholder.path)
        meaning = element.description(found)
        if found is None:
            return {"description": f"{source}: not in the element's schema; as the entity holds it."}, True
        text = f"{source}: {meaning}" if meaning else f"{source}."
        if "$ref" in found:  # a reference's siblings would describe the referred schema too: wrapped
            return {"allOf": [found], "description": text}, True
        return {**found, "description": text}, True
    described: Schema
    if placeholder.format == "money":
        described = {**_number_text(separator), "description": f"{source}: quantized to the currency's minor unit."}
    elif placeholder.format == "number":
        described = {**_number_text(separator), "description": f"{source}: in plain notation."}
    elif placeholder.format == "text":
        described = {"type": "string", "description": f"{source}: as text (an object or list as its JSON)."}
    else:
        date_format = placeholder.format[5:]
        described = {"type": "string", "description": f"{source}: the date formatted with `{date_format}`."}
    return described, True


class SimpleJsonTransform(CheckedTransform):
    code = "simple_json"

    def describe(self, config: dict[str, Any], element: ElementSchema) -> Described:
        """The wrapper of flat objects: each configured key in order, typed as its placeholder makes it (a lone
        placeholder keeps the element's type at its path; a format makes a string; mixed text is a string). A value
        that can be missing is null, or with ``drop_empty`` the key is left out."""
        fields = self.check(config)
        separator = config.get("decimal_separator", ".")
        drop_empty = config.get("drop_empty", False)
        properties: dict[str, Schema] = {}
        required: list[str] = []
        for key, parts in fields.items():
            schema, can_be_null = _field_schema(config["fields"][key], parts, element, separator)
            if can_be_null and not drop_empty:
                schema = nullable(schema)
            if not (can_be_null and drop_empty):
                required.append(key)
            properties[key] = schema
        flat = {
            "type": "object",
            "description": f"One {element.entity_type} element as this queue's fields make it.",
            "properties": properties,
            "required": required,
            "additionalProperties": False,
        }
        wrapper = {
            "type": "object",
            "description": "Element key to flat object: one element in a real-time export, one or more in a cron one.",
            "additionalProperties": flat,
        }
        return Described("application/json", "json", json_schema=wrapper)

    def check(self, config: dict[str, Any]) -> dict[str, list[_Part]]:
        validate_skip(config)
        require_bool(config, "drop_empty", False)
        require_choice(config, "decimal_separator", (".", ","), ".")
        check_formats(config, ("timezone",))
        fields = config.get("fields")
        if not isinstance(fields, dict) or not fields:
            raise ConfigError("fields", 'must be an object such as {"total": "{summary.total}"}')
        if len(fields) > MAX_FIELDS:
            raise ConfigError("fields", f"must have at most {MAX_FIELDS} keys")
        compiled: dict[str, list[_Part]] = {}
        for key, template in fields.items():
            if not isinstance(key, str) or not key or len(key) > 200:
                raise ConfigError("fields", "keys must be strings of 1 to 200 characters")
            try:
                compiled[key] = compile_field(template)
            except ValueError as error:
                raise ConfigError(f"fields.{key}", str(error)) from error
        return compiled

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        fields = self.checked(config)
        budget = RenderBudget()
        kept, skipped = split_skipped(elements, config)
        zone = check_timezone(config["timezone"]) if "timezone" in config else None
        separator = config.get("decimal_separator", ".")
        drop_empty = config.get("drop_empty", False)

        # What the flat objects hold before they are written: every text built from placeholders is charged to
        # ``held`` as it is built, the final JSON to ``budget`` as it is written, so neither can outgrow the limit.
        held = RenderBudget(timeout=budget.timeout, max_bytes=budget.max_bytes)
        held.deadline = budget.deadline

        def text_of(value: Any, writer: BoundedWriter) -> None:
            if isinstance(value, dict | list):
                write_json(value, writer)  # an object in text reads as its JSON, written within the budget
            else:
                writer.write(to_text(value, decimal_separator=separator))

        def value_of(entity: dict[str, Any], placeholder: _Placeholder) -> Any:
            value = resolve(entity, placeholder.path)
            kind = placeholder.format
            if kind is None or value is None:
                return value
            if kind == "money":
                currency = entity.get("base_currency_code")
                return format_money(value, decimal_separator=separator, currency=currency)
            if kind == "number":
                return format_number(value, decimal_separator=separator)
            if kind == "text":
                writer = BoundedWriter(held)
                text_of(value, writer)
                return writer.text()
            return format_date(value, kind[5:], zone)

        output: dict[str, dict[str, Any]] = {}
        for element in kept:
            budget.check_time()
            flat: dict[str, Any] = {}
            for key, parts in fields.items():
                if len(parts) == 1 and isinstance(parts[0], _Placeholder):
                    value = value_of(element.entity, parts[0])
                else:
                    writer = BoundedWriter(held)
                    for part in parts:
                        if isinstance(part, str):
                            writer.write(part)
                        else:
                            text_of(value_of(element.entity, part), writer)
                    value = writer.text()
                if value is None and drop_empty:
                    continue
                flat[key] = value
            output[element.element_key] = flat
        out = BoundedWriter(budget)
        try:
            write_json(output, out, separators=(", ", ": "))
        except (TypeError, ValueError) as error:
            raise TransformError(f"cannot serialise the output: {error}") from error
        text = out.text()
        return Rendered(budget.encode(text), "application/json", "json", skipped)
