"""The one bounded JSON parser: every body, integrator answer and admin JSON field enters through ``parse``.

Hostile input costs the service at most one pass over the bytes it was sent, whatever the input:

* **Sizes first.** The caller gives the byte limit; the bytes are read up to that limit and no further.
* **Numbers are judged by their literal, before anything is converted.** A number may have at most
  ``MAX_NUMBER_LENGTH`` characters and its decimal exponent must lie within ``±MAX_EXPONENT`` (no amount,
  quantity or timestamp comes near). ``1E+1000000`` would otherwise become a Decimal that overflows later
  (``decimal.Overflow``) or an ``int()`` that runs for minutes. A fraction or exponent is parsed as Decimal,
  never float; a whole number as int.
* **Text is valid Unicode.** The bytes must be UTF-8; ``\\ud800`` (a lone surrogate, which no encoder can
  write back out) and ``\\u0000`` (which PostgreSQL cannot store) are refused in every string and key.
* **Nesting** is at most ``MAX_DEPTH`` levels; deeper bodies are refused before any recursive code sees them.
  One array holds at most ``MAX_ARRAY_ITEMS`` items, one object ``MAX_OBJECT_KEYS`` keys.

A value that breaks a rule is replaced in the parsed tree by a harmless stand-in (the text with ``U+FFFD``,
``None`` for a number or a too-deep subtree, an empty array or object for an oversized one) and reported as a
``Problem`` with its path, so a batch can refuse only the items that hold one and still store what was sent
(``Parsed.problems``). ``loads`` refuses the whole body on the first problems instead.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any

from core.errors import InvalidInput, ServiceError

MAX_DEPTH = 32
# Far above any real body (an import holds at most IMPORT_MAX_ITEMS items, a checkout 1,000 lines): one array
# or object this large is an attack on whatever walks it next.
MAX_ARRAY_ITEMS = 100_000
MAX_OBJECT_KEYS = 10_000
MAX_NUMBER_LENGTH = 40
MAX_EXPONENT = 30
# Problems reported for one body: enough to fix a request, bounded so that a body of a million bad numbers
# does not answer a million errors.
MAX_PROBLEMS = 100

PathPart = str | int

# Bytes that can only come from an escape a hostile string needs: a NUL or a surrogate half. Raw surrogates
# cannot occur (the UTF-8 decoder refuses them) and raw control characters are invalid JSON, so a body
# without these escapes has no bad string and its strings need not be looked at one by one.
_SUSPECT_ESCAPE = re.compile(rb"\\u(?:0000|[dD][89a-fA-F])")
_BAD_CHARS = re.compile("[\x00\ud800-\udfff]")


@dataclass(frozen=True)
class Problem:
    """One refused value: where it is (``("orders", 3, "basket", "currency")``), why, and a stable code."""

    path: tuple[PathPart, ...]
    message: str
    code: str

    def field_name(self, *, start: int = 0, root: str = "body") -> str:
        return format_path(self.path[start:]) or root

    def as_error(self, *, start: int = 0, root: str = "body") -> dict[str, str]:
        return {"field": self.field_name(start=start, root=root), "message": self.message, "code": self.code}


@dataclass
class Parsed:
    value: Any
    problems: list[Problem] = field(default_factory=list)


def format_path(path: Iterable[PathPart]) -> str:
    """``("orders", 3, "basket")`` as ``orders[3].basket``: the path form of every error in the service."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out = f"{out}.{part}" if out else part
    return out


class _RefusedNumber:
    """Stands in for a number literal that broke a bound, until the walk reports it with its path."""

    __slots__ = ("literal",)

    def __init__(self, literal: str) -> None:
        self.literal = literal


def _number_problem(literal: str) -> str | None:
    if len(literal) > MAX_NUMBER_LENGTH:
        return f"is a number literal of {len(literal)} characters; at most {MAX_NUMBER_LENGTH} are accepted"
    # The exponent as written plus the digits before the point: the magnitude, read from the text alone.
    mantissa, _, exponent = literal.lower().partition("e")
    try:
        power = int(exponent) if exponent else 0  # at most MAX_NUMBER_LENGTH characters: cheap
    except ValueError:
        return "is not a number"
    digits = mantissa.lstrip("-").split(".")[0].lstrip("0")
    magnitude = power + len(digits)
    if magnitude > MAX_EXPONENT or power < -MAX_EXPONENT - MAX_NUMBER_LENGTH:
        return f"is out of range: numbers must lie within ±1e{MAX_EXPONENT}"
    return None


# The only two conversions of a number's text; a literal reaches them only after ``_number_problem`` passed it.
_to_decimal = Decimal
_to_int = int


def _parse_float(literal: str) -> Decimal | _RefusedNumber:
    if len(literal) <= MAX_EXPONENT and "e" not in literal and "E" not in literal:
        return _to_decimal(literal)  # no exponent and few digits: within the bounds by its length alone
    if _number_problem(literal):
        return _RefusedNumber(literal)
    try:
        return _to_decimal(literal)
    except InvalidOperation:  # pragma: no cover - the JSON scanner only hands over valid literals
        return _RefusedNumber(literal)


def _parse_int(literal: str) -> int | _RefusedNumber:
    if len(literal) > MAX_EXPONENT:  # bounded before int(), whose cost grows with the square of the length
        return _RefusedNumber(literal)
    return _to_int(literal)


def _parse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def _shown(literal: str) -> str:
    return literal if len(literal) <= 24 else f"{literal[:12]}…{literal[-8:]}"


class _Walk:
    """One pass over the parsed tree: replaces refused values and records their paths."""

    def __init__(self, *, check_strings: bool) -> None:
        self.check_strings = check_strings
        self.problems: list[Problem] = []

    def problem(self, path: tuple[PathPart, ...], message: str, code: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(path, message, code))

    def scalar(self, value: Any, path: tuple[PathPart, ...]) -> Any:
        if isinstance(value, _RefusedNumber):
            self.problem(path, _number_problem(value.literal) or "is out of range", "number_out_of_range")
            return None
        if self.check_strings and isinstance(value, str) and _BAD_CHARS.search(value):
            self.problem(path, _string_problem(value), "invalid_text")
            return _BAD_CHARS.sub("\ufffd", value)
        return value

    def key(self, key: str, path: tuple[PathPart, ...]) -> str:
        if self.check_strings and _BAD_CHARS.search(key):
            clean = _BAD_CHARS.sub("\ufffd", key)
            self.problem((*path, clean[:100]), "is a key that " + _string_problem(key)[3:], "invalid_text")
            return clean
        return key

    def run(self, root: Any) -> Any:
        """Iterative, so depth costs no stack; containers are rebuilt only where something was replaced."""
        if not isinstance(root, dict | list):
            return self.scalar(root, ())
        # Each frame: the container, its path, its depth.
        stack: list[tuple[dict[Any, Any] | list[Any], tuple[PathPart, ...], int]] = [(root, (), 1)]
        while stack:
            container, path, depth = stack.pop()
            limit, noun = (MAX_OBJECT_KEYS, "keys") if isinstance(container, dict) else (MAX_ARRAY_ITEMS, "items")
            if len(container) > limit:
                self.problem(path, f"has {len(container)} {noun}; at most {limit} are accepted", "too_many_items")
                container.clear()
                continue
            if isinstance(container, dict):
                if self.check_strings and any(_BAD_CHARS.search(k) for k in container):
                    items = [(self.key(k, path), v) for k, v in container.items()]
                    container.clear()
                    container.update(items)
                entries: Iterable[tuple[PathPart, Any]] = container.items()  # values are replaced, never added
            else:
                entries = enumerate(container)
            for key, value in entries:
                if isinstance(value, dict | list):
                    if not value:
                        continue
                    child_path = (*path, key)
                    if depth >= MAX_DEPTH:
                        self.problem(child_path, f"is nested more than {MAX_DEPTH} levels deep", "too_deep")
                        container[key] = None  # type: ignore[index]
                    else:
                        stack.append((value, child_path, depth + 1))
                elif isinstance(value, _RefusedNumber) or (self.check_strings and isinstance(value, str)):
                    replaced = self.scalar(value, (*path, key))
                    if replaced is not value:
                        container[key] = replaced  # type: ignore[index]
        return root


def _string_problem(value: str) -> str:
    if "\x00" in value:
        return "must not contain NUL characters (\\u0000)"
    return "contains a lone UTF-16 surrogate (such as \\ud800), which is not valid Unicode"


def parse(raw: bytes | str) -> Parsed:
    """The JSON text as Python values (Decimal for fractions), with every refused value as a ``Problem``.

    Raises ServiceError (400, field ``body``) when the text is not JSON at all or is nested so deeply that
    the parser itself gives up; the caller has bounded ``raw``'s size already.
    """
    try:
        text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    except UnicodeDecodeError as exc:
        raise ServiceError(
            f"The body is not valid UTF-8 (byte {exc.start})", field="body", code="invalid_encoding"
        ) from None
    try:
        value = json.loads(text, parse_float=_parse_float, parse_int=_parse_int, parse_constant=_parse_constant)
    except RecursionError:
        raise ServiceError(
            f"The body is nested more than {MAX_DEPTH} levels deep", field="body", code="too_deep"
        ) from None
    except ValueError as exc:  # JSONDecodeError
        raise ServiceError(f"The body is not valid JSON: {str(exc)[:200]}", field="body", code="invalid_json") from None
    # Text that did not come from bytes may hold raw surrogates; bytes can only hold them as escapes.
    check_strings = not isinstance(raw, bytes | bytearray) or _SUSPECT_ESCAPE.search(raw) is not None
    walk = _Walk(check_strings=check_strings)
    value = walk.run(value)
    return Parsed(value, walk.problems)


def refuse(problems: list[Problem], *, start: int = 0, root: str = "body") -> None:
    """Raise InvalidInput naming every problem's field (relative to ``start`` parts of its path)."""
    if problems:
        raise InvalidInput([p.as_error(start=start, root=root) for p in problems])


def loads(raw: bytes | str) -> Any:
    """``parse`` for a body that is taken or refused whole: any problem refuses it (400, each field named)."""
    parsed = parse(raw)
    refuse(parsed.problems)
    return parsed.value
