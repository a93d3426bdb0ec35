"""What the configurable transforms share: value paths, money / number / date formatting, skipping, limits.

Value paths (spec "Transforms": expression forms are limited) are dotted keys with list indexes, nothing more:
``summary.total``, ``summary.line_items[0].name``, ``register_summary.all.tax_summaries[1].rate``. A key is
``[A-Za-z0-9_][A-Za-z0-9_-]*``; an index is ``[n]`` with n >= 0. A missing key, a wrong type on the way or an
index past the end resolves to ``None``; resolving never calls or imports anything.

Money is ``Decimal`` from end to end: a JSON float is converted through its shortest ``repr`` (so ``12.3`` is
exactly ``Decimal("12.3")``) and quantized to the currency's minor unit with ROUND_HALF_UP. Dates accept a Unix
timestamp (seconds with decimals; values of 1e11 and more are taken as milliseconds, the register close
statement's unit) or an ISO 8601 string; a naive ISO string is UTC.

Shared configuration keys understood by every transform in this package:

* ``skip_voided`` (bool, default false): skip elements whose entity has ``voided: true`` (reason ``"voided"``).
* ``skip_if`` (object or list of objects ``{"path": str, "equals": JSON scalar}``): skip an element when the
  value at ``path`` equals ``equals`` (strictly: ``true`` never equals ``1``).
"""

from __future__ import annotations

import functools
import json
import math
import re
import time
from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, tzinfo
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from accounts import money
from core.jsonenc import DecimalJSONEncoder, decimal_json
from exports.transforms.base import (
    MAX_OUTPUT_BYTES,
    RENDER_TIMEOUT_SECONDS,
    ConfigError,
    Element,
    RenderContext,
    Transform,
    TransformError,
)
from exports.transforms.described import Described, ElementSchema

PathStep = str | int
Path = tuple[PathStep, ...]

_KEY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]*")
_INDEX_RE = re.compile(r"\[(0|[1-9][0-9]{0,8})\]")
MAX_PATH_LENGTH = 300

# ISO 4217 minor units that differ from 2; everything else is quantized to cents.

DEFAULT_DATE_FORMAT = "%Y-%m-%d %H:%M:%S"
_MILLISECONDS_THRESHOLD = Decimal(10) ** 11
_FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")


# --- value paths ---------------------------------------------------------------------------------------------


def parse_path(text: object) -> Path:
    """Compile ``summary.line_items[0].name`` to ``("summary", "line_items", 0, "name")``; ValueError if malformed."""
    if not isinstance(text, str) or not text:
        raise ValueError("must be a non-empty string")
    if len(text) > MAX_PATH_LENGTH:
        raise ValueError(f"must be at most {MAX_PATH_LENGTH} characters")
    steps: list[PathStep] = []
    for part in text.split("."):
        key = _KEY_RE.match(part)
        if key is None:
            raise ValueError(f"{text!r} is not a path such as summary.line_items[0].name")
        steps.append(key.group(0))
        position = key.end()
        while position < len(part):
            index = _INDEX_RE.match(part, position)
            if index is None:
                raise ValueError(f"{text!r} is not a path such as summary.line_items[0].name")
            steps.append(int(index.group(1)))
            position = index.end()
    return tuple(steps)


def resolve(data: Any, path: Path) -> Any:
    """The value at ``path`` inside plain JSON data, or None. Only dict keys and list indexes are followed."""
    for step in path:
        if isinstance(step, int):
            if not isinstance(data, list) or step >= len(data):
                return None
            data = data[step]
        else:
            if not isinstance(data, dict):
                return None
            data = data.get(step)
        if data is None:
            return None
    return data


def reader(path: Path) -> Callable[[Any], Any]:
    """``resolve`` of one ``path`` as a function of the data, chosen once for a path read many times: a path of
    one or two keys (the usual column) is read directly, with resolve's checks."""
    if len(path) == 1 and isinstance(path[0], str):
        key = path[0]
        return lambda data: data.get(key) if isinstance(data, dict) else None
    if len(path) == 2 and isinstance(path[0], str) and isinstance(path[1], str):
        first, second = path

        def read(data: Any) -> Any:
            inner = data.get(first) if isinstance(data, dict) else None
            return inner.get(second) if isinstance(inner, dict) else None

        return read
    return lambda data: resolve(data, path)


# --- numbers, money, dates -----------------------------------------------------------------------------------


def to_decimal(value: Any) -> Decimal | None:
    """A finite Decimal for a JSON number (or numeric string), None otherwise. Floats go through ``repr``."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, Decimal):
        number = value
    elif isinstance(value, int):
        return Decimal(value)
    elif isinstance(value, float):
        number = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            number = Decimal(value.strip())
        except InvalidOperation:
            return None
    else:
        return None
    return number if number.is_finite() else None


def minor_unit(currency: object) -> int:
    """The currency's minor unit from ISO 4217 (``accounts.money``); 2 for an unknown or missing code."""
    return _minor_unit(currency) if isinstance(currency, str) else 2


@functools.lru_cache(maxsize=256)  # every money cell of a batch asks for the same few currencies
def _minor_unit(currency: str) -> int:
    code = currency.upper()
    return money.minor_unit(code) if money.is_currency_code(code) else 2


@functools.lru_cache(maxsize=32)
def _quantum(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)


def _with_separator(text: str, decimal_separator: str) -> str:
    return text.replace(".", decimal_separator) if decimal_separator != "." else text


def format_money(
    value: Any, *, decimal_separator: str = ".", currency: object = None, decimals: int | None = None
) -> str | None:
    """``12.5`` -> ``"12.50"`` (or ``"12,50"``), quantized to the currency's minor unit; None if not a number."""
    number = to_decimal(value)
    if number is None:
        return None
    places = minor_unit(currency) if decimals is None else decimals
    quantized = number.quantize(_quantum(places), rounding=ROUND_HALF_UP)
    return _with_separator(f"{quantized:f}", decimal_separator)


def format_number(value: Any, *, decimal_separator: str = ".") -> str | None:
    """A number in plain notation (no exponent, no float noise): ``0.25`` -> ``"0,25"``; None if not a number."""
    number = to_decimal(value)
    if number is None:
        return None
    return _with_separator(f"{number:f}", decimal_separator)


def parse_datetime(value: Any) -> datetime | None:
    """An aware datetime from a Unix timestamp (s or ms) or an ISO 8601 string; None if it is neither."""
    if isinstance(value, str):
        try:
            parsed = datetime.fromisoformat(value.strip())
        except ValueError:
            number = to_decimal(value)
            if number is None:
                return None
            return _from_timestamp(number)
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=UTC)
    number = to_decimal(value)
    return None if number is None else _from_timestamp(number)


def _from_timestamp(number: Decimal) -> datetime | None:
    if abs(number) >= _MILLISECONDS_THRESHOLD:
        number = number / 1000
    try:
        return datetime.fromtimestamp(float(number), tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def format_date(value: Any, date_format: str, zone: tzinfo | None = None) -> str | None:
    """``value`` formatted with ``date_format`` (strftime), in ``zone`` when given; None if it is not a date."""
    moment = parse_datetime(value)
    if moment is None:
        return None
    if zone is not None:
        moment = moment.astimezone(zone)
    return moment.strftime(date_format)


def check_date_format(date_format: object) -> str:
    """Return a usable strftime format or raise ValueError."""
    if not isinstance(date_format, str) or not date_format or len(date_format) > 100:
        raise ValueError("must be a strftime format of 1 to 100 characters, such as %Y-%m-%d")
    try:
        datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC).strftime(date_format)
    except ValueError as error:
        raise ValueError(f"is not a valid strftime format: {error}") from error
    return date_format


def check_timezone(name: object) -> ZoneInfo:
    if not isinstance(name, str) or not name or len(name) > 64:
        raise ValueError("must be a tz database name such as Europe/Copenhagen")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise ValueError(f"unknown time zone {name!r}") from error


def neutralise_formula(text: str) -> str:
    """Defuse spreadsheet formula injection: a cell starting with = + - @ tab or CR gets a leading quote."""
    return "'" + text if text.startswith(_FORMULA_PREFIXES) else text


# --- JSON ----------------------------------------------------------------------------------------------------


def json_default(value: object) -> Any:
    """``json.dumps`` fallback for what entity dicts may carry besides plain JSON types (Decimals are written by
    ``DecimalJSONEncoder`` and the ``Decimal`` leaf: exactly, never through a float)."""
    if isinstance(value, datetime):
        return value.isoformat()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def dumps(value: Any) -> str:
    return DecimalJSONEncoder(default=json_default, ensure_ascii=False, separators=(",", ":")).encode(value)


def to_text(value: Any, *, decimal_separator: str = ".") -> str:
    """How a value reads inside text: None -> "", booleans as JSON, numbers in plain notation, objects as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float | Decimal):
        number = format_number(value, decimal_separator=decimal_separator)
        return number if number is not None else str(value)
    return dumps(value)


# --- shared configuration ------------------------------------------------------------------------------------


def require_bool(config: dict[str, Any], key: str, default: bool) -> bool:
    value = config.get(key, default)
    if not isinstance(value, bool):
        raise ConfigError(key, "must be true or false")
    return value


def require_choice(config: dict[str, Any], key: str, choices: Iterable[str], default: str) -> str:
    allowed = tuple(choices)
    value = config.get(key, default)
    if value not in allowed:
        raise ConfigError(key, f"must be one of {', '.join(allowed)}")
    return str(value)


def _skip_conditions(config: dict[str, Any]) -> list[tuple[str, Path, Any]]:
    raw = config.get("skip_if")
    if raw is None:
        return []
    items = raw if isinstance(raw, list) else [raw]
    conditions = []
    for position, item in enumerate(items):
        field = "skip_if" if not isinstance(raw, list) else f"skip_if[{position}]"
        if not isinstance(item, dict) or set(item) != {"path", "equals"}:
            raise ConfigError(field, 'must be {"path": "...", "equals": value}')
        try:
            path = parse_path(item["path"])
        except ValueError as error:
            raise ConfigError(f"{field}.path", str(error)) from error
        if not (item["equals"] is None or isinstance(item["equals"], str | int | float | bool)):
            raise ConfigError(f"{field}.equals", "must be a string, number, boolean or null")
        conditions.append((item["path"], path, item["equals"]))
    return conditions


def validate_skip(config: dict[str, Any]) -> None:
    """Check the shared skip keys (``skip_voided``, ``skip_if``)."""
    require_bool(config, "skip_voided", False)
    _skip_conditions(config)


def skip_paths(config: dict[str, Any]) -> list[Path]:
    """The paths the shared skip rules read (``skip_reason_for``); a bad config reads none."""
    paths: list[Path] = [("voided",)] if config.get("skip_voided") is True else []
    try:
        return paths + [path for _text, path, _equals in _skip_conditions(config)]
    except ConfigError:
        return paths


def _strictly_equal(left: Any, right: Any) -> bool:
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left is right
    return bool(left == right)


def skip_reason_for(element: Element, config: dict[str, Any]) -> str | None:
    """The shared ``skip_reason``: ``"voided"`` or ``"<path> equals <value>"``; a bad config skips nothing."""
    if config.get("skip_voided") is True and element.entity.get("voided") is True:
        return "voided"
    try:
        conditions = _skip_conditions(config)
    except ConfigError:
        return None
    for text, path, equals in conditions:
        if _strictly_equal(resolve(element.entity, path), equals):
            return f"{text} equals {json.dumps(equals)}"
    return None


def check_formats(config: dict[str, Any], keys: tuple[str, ...] = ("date_format", "timezone")) -> None:
    """The date format and time zone a template's helpers use, when given."""
    checks: dict[str, Callable[[Any], object]] = {"date_format": check_date_format, "timezone": check_timezone}
    for key in keys:
        if key in config:
            try:
                checks[key](config[key])
            except ValueError as error:
                raise ConfigError(key, str(error)) from error


class CheckedTransform(Transform):
    """A transform whose configuration ``check`` reads (raising ConfigError) when it is validated and again before
    each render (a stored configuration is not trusted to have passed today's ``validate``), and whose elements
    the shared skip rules (``skip_voided``, ``skip_if``) may skip."""

    # How a render names a configuration that fails its check.
    refused = "invalid configuration"

    def check(self, config: dict[str, Any]) -> Any:
        """The configuration checked and prepared for rendering (by default: the skip rules alone)."""
        validate_skip(config)

    def validate(self, config: dict[str, Any]) -> None:
        self.check(config)

    def skip_reason(self, element: Element, config: dict[str, Any]) -> str | None:
        return skip_reason_for(element, config)

    def describe(self, config: dict[str, Any], element: ElementSchema) -> Described:
        """A template's output is what it writes: only its media type is fixed."""
        self.check(config)
        content_type, extension = content_type_and_extension(config)
        return Described(content_type, extension)

    def checked(self, config: dict[str, Any]) -> Any:
        """``check(config)`` for a render: a ConfigError becomes the render's TransformError."""
        try:
            return self.check(config)
        except ConfigError as error:
            raise TransformError(f"{self.refused}: {error}") from error


def split_skipped(elements: list[Element], config: dict[str, Any]) -> tuple[list[Element], list[str]]:
    """Elements to render, and the keys of those the skip rules drop (render repeats the caller's check)."""
    kept: list[Element] = []
    skipped: list[str] = []
    for element in elements:
        if skip_reason_for(element, config) is None:
            kept.append(element)
        else:
            skipped.append(element.element_key)
    return kept, skipped


def without_skipped(elements: Iterable[Element], config: dict[str, Any], skipped: list[str]) -> Iterator[Element]:
    """``split_skipped`` as it goes, for a streamed render: the keys of dropped elements land in ``skipped``."""
    for element in elements:
        if skip_reason_for(element, config) is None:
            yield element
        else:
            skipped.append(element.element_key)


# --- content type for the template transforms ----------------------------------------------------------------

_CONTENT_TYPE_RE = re.compile(r"[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*(; ?charset=[A-Za-z0-9_-]+)?")
_EXTENSION_RE = re.compile(r"[a-z0-9]{1,10}")
_EXTENSIONS = {
    "application/json": "json",
    "text/html": "html",
    "application/xml": "xml",
    "text/xml": "xml",
    "text/csv": "csv",
}


def content_type_and_extension(config: dict[str, Any]) -> tuple[str, str]:
    """``content_type`` (default text/plain) and ``extension`` (default from the content type, else txt)."""
    content_type = config.get("content_type", "text/plain")
    if not isinstance(content_type, str) or not _CONTENT_TYPE_RE.fullmatch(content_type):
        raise ConfigError("content_type", "must be a media type such as application/json or text/html")
    default_extension = _EXTENSIONS.get(content_type.split(";")[0], "txt")
    extension = config.get("extension", default_extension)
    if not isinstance(extension, str) or not _EXTENSION_RE.fullmatch(extension):
        raise ConfigError("extension", "must be 1 to 10 lowercase letters or digits, without the dot")
    return content_type, extension


def base_media_type(content_type: str) -> str:
    return content_type.split(";")[0].strip()


# --- limits --------------------------------------------------------------------------------------------------

# A bounded writer charges what it is given to the budget every FLUSH_PIECES pieces (joined into one chunk), and
# cuts a text longer than CHUNK_CHARS into chunks of that length, so a value is refused within one chunk of the
# point where it passes what the budget has left.
CHUNK_CHARS = 16 * 1024
FLUSH_PIECES = 256


def utf8_length(text: str) -> int:
    """The length of ``text`` in UTF-8 (what it costs in the output); never fails, even on a lone surrogate."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


class RenderBudget:
    """The render's limits: a monotonic deadline and an output size.

    The template transforms ``charge`` every piece of output as it is produced, so a runaway template stops
    during the work, within one piece of ``max_bytes`` and at the first piece after the deadline; the other
    transforms check at their loop steps. ``encode`` checks the final text again."""

    def __init__(self, *, timeout: float | None = None, max_bytes: int | None = None) -> None:
        # Module globals read at call time, so a test (or a caller) can tighten the limits.
        self.timeout = RENDER_TIMEOUT_SECONDS if timeout is None else timeout
        self.max_bytes = MAX_OUTPUT_BYTES if max_bytes is None else max_bytes
        self.deadline = time.monotonic() + self.timeout
        self.produced = 0  # bytes charged so far

    def check_time(self) -> None:
        if time.monotonic() > self.deadline:
            raise TransformError(f"rendering took longer than {self.timeout:g} seconds")

    def check_size(self, size: int) -> None:
        if size > self.max_bytes:
            raise TransformError(f"output is larger than {self.max_bytes} bytes")

    def charge(self, text: str) -> None:
        """Count ``text`` (UTF-8 bytes) as produced output: TransformError past the size or the deadline."""
        self.produced += utf8_length(text)
        self.check_size(self.produced)
        self.check_time()

    def encode(self, text: str) -> bytes:
        # Characters are a lower bound on UTF-8 bytes: refuse before encoding an obviously oversized text.
        self.check_size(len(text))
        content = text.encode("utf-8")
        self.check_size(len(content))
        return content


class BoundedWriter:
    """Text built piece by piece within a budget: a template's output, or one value's JSON or repr.

    Pieces are collected in ``parts`` (a walker may append to it directly, then call ``settle``) and joined into
    a chunk every ``FLUSH_PIECES``; each chunk is escaped (``escape``, HTML or JSON escaping, works character by
    character) and charged to the budget, or with ``charge=False`` counted against what the budget has left
    (for a value that is charged again where it is output). Both limits are thus enforced while a large value
    is written, not after it: a value is refused at most one chunk past the limit."""

    def __init__(
        self, budget: RenderBudget, *, charge: bool = True, escape: Callable[[str], str] | None = None
    ) -> None:
        self.budget = budget
        self.charge = charge
        self.escape = escape
        self.parts: list[str] = []
        self.chunks: list[str] = []
        self.used = 0  # bytes of the chunks not charged to the budget (charge=False)

    def write(self, text: str) -> None:
        if len(text) > CHUNK_CHARS:
            self.flush()
            self._check(len(text))  # characters are a lower bound on the bytes: refuse before copying
            for start in range(0, len(text), CHUNK_CHARS):
                self._add(text[start : start + CHUNK_CHARS])
            return
        self.parts.append(text)
        if len(self.parts) >= FLUSH_PIECES:
            self.flush()

    def settle(self) -> None:
        """Flush if enough pieces were appended to ``parts`` directly."""
        if len(self.parts) >= FLUSH_PIECES:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            chunk = "".join(self.parts)
            self.parts.clear()
            self._check(len(chunk))
            self._add(chunk)

    def extend_charged(self, chunks: list[str]) -> None:
        """Chunks written (and charged) by another writer of the same budget."""
        self.flush()
        self.chunks.extend(chunks)

    def _add(self, chunk: str) -> None:
        if self.escape is not None:
            chunk = self.escape(chunk)
        if self.charge:
            self.budget.charge(chunk)
        else:
            size = utf8_length(chunk)
            self._check(size)
            self.budget.check_time()
            self.used += size
        self.chunks.append(chunk)

    def _check(self, more: int) -> None:
        """Refuse ``more`` bytes that do not fit in what is left (uncharged chunks count as spent)."""
        self.budget.check_size(self.budget.produced + self.used + more)

    def text(self) -> str:
        self.flush()
        return "".join(self.chunks)


def _float_json(value: float) -> str:
    # What json.dumps writes for a float (allow_nan: NaN and Infinity are JavaScript literals, not JSON).
    if value != value:
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return float.__repr__(value)


def _bool_json(value: Any) -> str:
    return "true" if value else "false"


# Leaf writers by exact type; a transform whose data are subclasses (Handlebars' wrappers) adds its own.
JSON_LEAVES: dict[type, Callable[[Any], str]] = {
    str: encode_basestring,
    int: int.__repr__,
    float: _float_json,
    bool: _bool_json,
    type(None): lambda value: "null",
    Decimal: decimal_json,
}


def _json_key(key: Any) -> str:
    if isinstance(key, str):
        return encode_basestring(key)  # type: ignore[no-any-return]
    if key is True or key is False or key is None:
        return f'"{json.dumps(key)}"'
    if isinstance(key, int):
        return f'"{int.__repr__(key)}"'
    if isinstance(key, float):
        return f'"{_float_json(key)}"'
    raise TypeError(f"keys must be str, int, float, bool or None, not {type(key).__name__}")


def write_json(
    value: Any,
    writer: BoundedWriter,
    *,
    separators: tuple[str, str] = (",", ":"),
    leaves: dict[type, Callable[[Any], str]] = JSON_LEAVES,
    default: Callable[[Any], Any] = json_default,
) -> None:
    """``json.dumps(value, default=default, ensure_ascii=False, separators=separators)`` written piece by piece
    into ``writer``, so that a large value costs no more than the writer's budget lets it."""
    leaf = leaves.get(type(value))
    if leaf is not None:
        writer.write(leaf(value))
        return
    _write_json(value, writer, separators[0], separators[1], leaves, default)
    writer.settle()


def _write_json(
    value: Any,
    writer: BoundedWriter,
    item_separator: str,
    key_separator: str,
    leaves: dict[type, Callable[[Any], str]],
    default: Callable[[Any], Any],
) -> None:
    # The hot loop of every large value; the budget is looked at once per item. An object's values are mostly
    # leaves, so its loop writes a leaf inline; an array's items are mostly objects (line items, payments, taxes),
    # so its loop leaves each item to this function, whose first step is the leaf. bench/json_writer.py: documents
    # as fast as with a leaf step in both loops, an array of 100,000 scalars 1.5x slower; one loop for both
    # (over key heads and items) wrote documents 10-20% slower.
    parts = writer.parts
    append = parts.append
    leaf = leaves.get(type(value))
    if leaf is not None:
        append(leaf(value))
    elif isinstance(value, dict):
        if not value:
            append("{}")
            return
        opening = "{"
        for key, item in value.items():
            append(opening + (encode_basestring(key) if type(key) is str else _json_key(key)) + key_separator)
            opening = item_separator
            leaf = leaves.get(type(item))
            if leaf is not None:
                append(leaf(item))
            else:
                _write_json(item, writer, item_separator, key_separator, leaves, default)
            if len(parts) >= FLUSH_PIECES:
                writer.flush()
        append("}")
    elif isinstance(value, list | tuple):
        if not value:
            append("[]")
            return
        opening = "["
        for item in value:
            append(opening)
            opening = item_separator
            _write_json(item, writer, item_separator, key_separator, leaves, default)
            if len(parts) >= FLUSH_PIECES:
                writer.flush()
        append("]")
    elif isinstance(value, str):
        append(encode_basestring(value))
    elif isinstance(value, int):  # an int subclass (bool is a leaf: it cannot be subclassed)
        append(int.__repr__(value))
    elif isinstance(value, float):
        append(_float_json(value))
    elif isinstance(value, Decimal):  # a Decimal subclass (Decimal itself is a leaf)
        append(decimal_json(value))
    else:
        _write_json(default(value), writer, item_separator, key_separator, leaves, default)


def template_context(elements: list[Element], context: RenderContext) -> dict[str, Any]:
    """What the Mustache and Handlebars templates see: ``elements`` (entities carrying their element key)
    in order, ``queue``, ``account``, ``now`` (ISO 8601) and ``delivery_id``."""
    return {
        "elements": [{**element.entity, "element_key": element.element_key} for element in elements],
        "queue": context.queue,
        "account": context.account,
        "now": context.now.isoformat(),
        "delivery_id": context.delivery_id,
    }
