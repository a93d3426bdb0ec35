"""The placeholder templates of a runtime integration's url, query, headers and body (spec: Endpoints B).

``{name}`` is replaced by the call's value of ``name``; only the kind's placeholders (``kinds.KINDS``) may be
used, checked when the configuration is saved. ``{{`` and ``}}`` stand for literal braces.

* URL: values placed in the path are percent-encoded (``/`` too, so a value cannot change the path); values in
  the URL's own query string are form-encoded. The URL's scheme and host must be literal (no placeholder
  before the path), so a value can never choose where the request goes.
* Query values and header values: the text with values substituted (requests encodes the query).
* Body (JSON): every string is a template; a string that is exactly one placeholder (``"{amount}"``) takes the
  value with its JSON type (a number stays a number, a Decimal goes out as a JSON number); any other string gets
  the values substituted as text (an object or an array as compact JSON). Keys are not templates.
* A value not given renders as the empty string (``null`` for a whole-placeholder body string): the POS sends
  what it has and the integrator sees an empty parameter rather than a call refused by the service.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any
from urllib.parse import quote, quote_plus

from core import destinations
from core.jsonenc import DecimalJSONEncoder

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_WHOLE = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


class TemplateError(ValueError):
    """A template that cannot be used; the message says why."""


def placeholders(template: str) -> Iterator[str]:
    """The placeholder names used in ``template``; a stray ``{`` or ``}`` raises TemplateError."""
    end = 0
    for match in _PLACEHOLDER.finditer(template):
        if "{" in template[end : match.start()] or "}" in template[end : match.start()]:
            break
        end = match.end()
        if match.group(1) is not None:
            yield match.group(1)
    rest = template[end:]
    if "{" in rest or "}" in rest:
        raise TemplateError("has an unmatched brace (write {{ or }} for a literal one)")


def unknown_placeholders(template: str, allowed: tuple[str, ...]) -> list[str]:
    return [name for name in placeholders(template) if name not in allowed]


def text(value: Any) -> str:
    """A value as template text: numbers without exponent, booleans as JSON, None as empty, an object or an array
    as compact JSON in ASCII (``{external_giftcard}`` in a header, where only Latin-1 may go, or a query)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, (dict, list)):
        return json.dumps(value, cls=DecimalJSONEncoder, separators=(",", ":"))
    return str(value)


def render(template: str, values: Mapping[str, Any], encode: Any = None) -> str:
    def replace(match: re.Match[str]) -> str:
        if match.group(1) is None:
            return match.group(0)[0]  # "{{" -> "{", "}}" -> "}"
        rendered = text(values.get(match.group(1)))
        return encode(rendered) if encode else rendered

    return _PLACEHOLDER.sub(replace, template)


def render_url(template: str, values: Mapping[str, Any]) -> str:
    """The URL: path values percent-encoded (``/`` included), query-string values form-encoded."""
    path, sep, query = template.partition("?")
    url = render(path, values, lambda v: quote(v, safe=""))
    if sep:
        url += "?" + render(query, values, lambda v: quote_plus(v, safe=""))
    return url


def render_body(template: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(template, str):
        whole = _WHOLE.fullmatch(template)
        if whole:
            return values.get(whole.group(1))
        return render(template, values)
    if isinstance(template, dict):
        return {key: render_body(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [render_body(value, values) for value in template]
    return template


def body_strings(template: Any) -> Iterator[str]:
    if isinstance(template, str):
        yield template
    elif isinstance(template, dict):
        for value in template.values():
            yield from body_strings(value)
    elif isinstance(template, list):
        for value in template:
            yield from body_strings(value)


def check_url(template: str, allowed: tuple[str, ...]) -> str | None:
    """Why the URL template cannot be used, or None."""
    try:
        unknown = unknown_placeholders(template, allowed)
    except TemplateError as exc:
        return str(exc)
    if unknown:
        return _unknown_message(unknown, allowed)
    literal = _PLACEHOLDER.sub("x", template)
    try:
        parts = destinations.split_url(literal, max_length=len(literal))  # the template's length is checked apart
    except destinations.BadUrl as exc:
        return str(exc)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "must be an http:// or https:// URL with a host"
    if parts.username or parts.password:
        return "must not carry credentials: put them in a header"
    head = template.split("://", 1)[-1].split("/", 1)[0].split("?", 1)[0]
    if "{" in head:
        return "the host and port must be literal: placeholders may only appear in the path and the query"
    return None


def check_text(template: str, allowed: tuple[str, ...]) -> str | None:
    try:
        unknown = unknown_placeholders(template, allowed)
    except TemplateError as exc:
        return str(exc)
    return _unknown_message(unknown, allowed) if unknown else None


def _unknown_message(unknown: list[str], allowed: tuple[str, ...]) -> str:
    names = ", ".join("{" + name + "}" for name in dict.fromkeys(unknown))
    return f"unknown placeholder {names}; this kind allows: " + ", ".join("{" + name + "}" for name in allowed)
