"""CSV: configurable columns over entities, line items, grouped line items, grouped payments, reconciliations or
tax summaries (spec "Events" -> "Transforms": "Line items can be aggregated and grouped (for example by VAT).
Payment transactions can be grouped by type and currency.").

Configuration::

    {
        "type": "csv",
        "rows": "entity",            # entity | line_items | line_items_grouped | payments_grouped
                                     # | reconciliations | tax_summaries
        "columns": [                 # required, 1..200
            {"header": "Sale", "path": "identifier"},
            {"header": "Total", "path": "summary.total", "format": "money"},
            {"header": "Day", "path": "timing.timestamp", "format": "date:%Y-%m-%d"},
            {"header": "Net", "path": "sub_total", "format": "money", "aggregate": "sum"}
        ],
        "group_by": ["taxes[0].rate"],   # line_items_grouped only, required: paths relative to the line item
        "group_scope": "batch",          # grouped modes: "batch" (whole export) or "entity" (per sale)
        "include_failed_payments": false,  # payments_grouped: also count payments with success false
        "separator": ";",            # one character
        "decimal_separator": ",",    # "," or "."
        "quoting": "minimal",        # minimal | all | none (none: a separator or line break in a value is
                                     # written as a space; a backslash or quote is escaped with a backslash)
        "header": true,              # header row on/off
        "line_terminator": "\\r\\n", # "\\r\\n" or "\\n"
        "bom": false,                # prefix a UTF-8 byte order mark (for spreadsheet programs)
        "timezone": "Europe/Copenhagen",  # optional, for date formats
        "skip_voided": false, "skip_if": {"path": "voided", "equals": true},
        "language": ["da", "en"],    # L10nString cells in the first language present (then any); default: JSON
        "required_values": ["summary.customer.identifier"],  # rows missing any of these values are left out
        "whole_numbers_as_integers": true  # a number without a fraction is written as one (2.0 -> 2)
    }

Columns besides ``path`` (exactly one of them, none with ``aggregate: count``):

* ``{"header": "Account", "value": "1010"}``: a constant (string, number, boolean or null), the same in every row.
* ``{"header": "Type", "derived": "type"}``: the sale's type in the platform's words, ``void`` (``voided``
  true), ``return`` (``summary.is_return``), ``expense`` (a line with the ``expense`` behavior) or ``sale``; of the
  row's entity.
* ``"language": "da"`` or ``["da", "en"]`` on a column (over the configuration's ``language``): an L10nString
  (``{"da": ..., "en": ...}``) is written in the first of these languages it has, else in its first language; a
  plain string is written as it is. Without a language an object is written as JSON, as before.

Rows per mode, and what a column ``path`` is relative to:

* ``entity``: one row per element; the entity.
* ``line_items``: one row per ``summary.line_items[n]``; the line item.
* ``reconciliations``: one row per ``reconciliations[n]`` of a register close statement; the reconciliation.
* ``tax_summaries``: one row per ``register_summary.all.tax_summaries[n]``; the tax summary.
* ``line_items_grouped``: one row per distinct ``group_by`` value (in order of first appearance); a column's
  ``aggregate`` is ``first`` (default: the value of the group's first line item), ``sum`` (exact Decimal sum of
  the path over the group; missing values count as zero) or ``count`` (line items in the group, no path).
* ``required_values``: paths (relative to the row, ``entity.`` for the entity, as columns): a row where any of
  them is missing, null or an empty string is left out (for grouped line items: the line item, before grouping).
* ``payments_grouped``: one row per (``payment_type``, currency) over ``payments[n]``; the row is
  ``{"payment_type", "currency_code", "amount", "foreign_currency_amount", "count"}`` where the currency is the
  payment's ``foreign_currency`` or else the entity's ``base_currency_code``, ``amount`` and
  ``foreign_currency_amount`` are exact Decimal sums and ``count`` the number of payments. Failed payments
  (``success: false``) are left out unless ``include_failed_payments``.

In every mode a path starting with ``entity.`` (or ``../``) reads the parent entity (for grouped rows: the
group's first entity), so ``entity.identifier`` or ``../source.shop_id`` work beside line item paths.

Formats: ``text`` (default), ``number``, ``money`` (Decimal, quantized to the minor unit of the entity's
``base_currency_code``; for reconciliations of the reconciliation's ``currency_code``) and ``date:<strftime>``.
Numbers use ``decimal_separator`` in every format.

Formula injection: a cell that comes from a JSON *string* (or a text/date format) and starts with ``= + - @``,
tab or carriage return gets a leading ``'``. Cells produced from JSON *numbers* (``text``, ``number`` or
``money`` of a number) are left alone, so ``-12,50`` stays a negative number; a number can only hold digits, a
sign and the decimal separator. Headers are neutralised like strings.

No value can start a cell or a row of its own, whatever the separator and quoting: ``minimal`` and ``all`` quote a
value holding the separator, a quote or a line break, and ``none`` writes the separator, CR and LF inside a value
as a space (``_`` when the separator is a space): spreadsheets ignore a backslash escape, so ``x;=1+1`` would read
as the cells ``x\\`` and ``=1+1``.
"""

from __future__ import annotations

# This module is exports.transforms.csv; imports are absolute, so this is the standard library's csv.
import csv as stdlib_csv
import io
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from decimal import Decimal
from typing import IO, Any

from exports.transforms.base import (
    MAX_STREAM_BYTES,
    STREAM_TIMEOUT_SECONDS,
    ConfigError,
    Element,
    RenderContext,
    Rendered,
    TransformError,
)
from exports.transforms.common import (
    CheckedTransform,
    Path,
    RenderBudget,
    check_date_format,
    check_timezone,
    dumps,
    format_date,
    format_money,
    format_number,
    neutralise_formula,
    parse_path,
    reader,
    require_bool,
    require_choice,
    resolve,
    skip_paths,
    to_decimal,
    validate_skip,
    without_skipped,
)
from exports.transforms.described import Described, ElementSchema, Schema, cell_type, json_type

ROW_MODES = ("entity", "line_items", "line_items_grouped", "payments_grouped", "reconciliations", "tax_summaries")
_ROW_LISTS: dict[str, Path] = {
    "line_items": ("summary", "line_items"),
    "line_items_grouped": ("summary", "line_items"),
    "reconciliations": ("reconciliations",),
    "tax_summaries": ("register_summary", "all", "tax_summaries"),
}
_GROUPED = ("line_items_grouped", "payments_grouped")
_QUOTING = {"minimal": stdlib_csv.QUOTE_MINIMAL, "all": stdlib_csv.QUOTE_ALL, "none": stdlib_csv.QUOTE_NONE}
MAX_COLUMNS = 200
_SIZE_CHECK_EVERY = 500
_TIME_CHECK_CELLS = 1000


# The platform's own export tools' words; a voided sale is ``void`` there (the entity's field stays ``voided``).
SALE_TYPES = ("sale", "return", "expense", "void")
# What ``sale_type`` reads of a sale.
SALE_TYPE_READS: tuple[Path, ...] = (("voided",), ("summary", "is_return"), ("summary", "line_items"))
DERIVED = ("type",)
MAX_LANGUAGES = 10
MAX_REQUIRED_VALUES = 50
_COLUMN_KEYS = {"header", "path", "format", "aggregate", "value", "derived", "language"}


@dataclass(frozen=True)
class _Column:
    header: str
    on_entity: bool  # the path starts with entity. or ../
    path: Path
    format: str  # text | number | money | date:<strftime>
    aggregate: str  # first | sum | count
    source: str = "path"  # path | value | derived
    constant: Any = None
    languages: tuple[str, ...] = ()


def sale_type(entity: dict[str, Any]) -> str:
    """The type of a sale for a ``derived: type`` column: ``void``, ``return``, ``expense`` or ``sale``."""
    if entity.get("voided") is True:
        return "void"
    summary = entity.get("summary")
    summary = summary if isinstance(summary, dict) else {}
    if summary.get("is_return") is True:
        return "return"
    lines = summary.get("line_items")
    for line in lines if isinstance(lines, list) else ():
        behavior = line.get("behavior") if isinstance(line, dict) else None
        if isinstance(behavior, dict) and "expense" in behavior:
            return "expense"
    return "sale"


def localised(value: Any, languages: tuple[str, ...]) -> Any:
    """An L10nString in the first of ``languages`` it has, else in its first language; anything else as it is."""
    if not languages or not isinstance(value, dict) or not value:
        return value
    for language in languages:
        text = value.get(language)
        if isinstance(text, str):
            return text
    first = next(iter(value.values()))
    return first if isinstance(first, str) else value


def _languages(raw: object, field: str) -> tuple[str, ...]:
    items = [raw] if isinstance(raw, str) else raw
    if (
        not isinstance(items, list)
        or not 1 <= len(items) <= MAX_LANGUAGES
        or not all(isinstance(item, str) and 0 < len(item) <= 35 for item in items)
    ):
        raise ConfigError(field, f'must be a language such as "da", or a list of 1 to {MAX_LANGUAGES} ("da", "en")')
    return tuple(items)


@dataclass(frozen=True)
class _Settings:
    mode: str
    columns: list[_Column]
    required_values: list[tuple[bool, Path]]
    whole_numbers: bool
    group_by: list[Path]
    group_scope: str
    include_failed_payments: bool
    delimiter: str
    decimal_separator: str
    quoting: int
    header: bool
    line_terminator: str
    bom: bool
    timezone: Any


def _parse_column_path(text: object) -> tuple[bool, Path]:
    if isinstance(text, str) and text.startswith("entity."):
        return True, parse_path(text[len("entity.") :])
    if isinstance(text, str) and text.startswith("../"):
        return True, parse_path(text[3:])
    return False, parse_path(text)


def _compile_column(position: int, raw: object, mode: str, languages: tuple[str, ...]) -> _Column:
    field = f"columns[{position}]"
    if not isinstance(raw, dict):
        raise ConfigError(field, 'must be an object such as {"header": "Total", "path": "summary.total"}')
    unknown = set(raw) - _COLUMN_KEYS
    if unknown:
        raise ConfigError(field, f"unknown keys: {', '.join(sorted(unknown))}")
    header = raw.get("header", "")
    if not isinstance(header, str) or len(header) > 200:
        raise ConfigError(f"{field}.header", "must be a string of at most 200 characters")
    aggregate = _column_aggregate(raw, field, mode)
    sources = [key for key in ("path", "value", "derived") if key in raw]
    if len(sources) > 1:
        raise ConfigError(field, f"has one of path, value and derived, not {' and '.join(sources)}")
    source = sources[0] if sources else "path"
    if source != "path" and aggregate != "first":
        raise ConfigError(f"{field}.{source}", f"cannot be combined with aggregate {aggregate}")
    if "language" in raw:
        languages = _languages(raw["language"], f"{field}.language")
    on_entity, path, constant = _column_source(raw, field, source, aggregate)
    column_format = _column_format(raw, field)
    return _Column(header, on_entity, path, column_format, aggregate, source, constant, languages)


def _column_aggregate(raw: dict[str, Any], field: str, mode: str) -> str:
    aggregate = raw.get("aggregate", "first")
    if aggregate != "first" and mode != "line_items_grouped":
        raise ConfigError(f"{field}.aggregate", "is only allowed with rows line_items_grouped")
    if aggregate not in ("first", "sum", "count"):
        raise ConfigError(f"{field}.aggregate", "must be one of first, sum, count")
    return str(aggregate)


def _column_source(raw: dict[str, Any], field: str, source: str, aggregate: str) -> tuple[bool, Path, Any]:
    """Where a column's values come from: (read on the entity rather than the row, the path, the constant)."""
    if source == "value":
        constant = raw["value"]
        if not (constant is None or isinstance(constant, str | int | float | bool)) or (
            isinstance(constant, str) and len(constant) > 1000
        ):
            raise ConfigError(f"{field}.value", "must be a string (at most 1000 characters), number, boolean or null")
        return False, (), constant
    if source == "derived":
        if raw["derived"] not in DERIVED:
            raise ConfigError(f"{field}.derived", f"must be one of {', '.join(DERIVED)}")
        return False, (), None
    if aggregate == "count":
        if "path" in raw:
            raise ConfigError(f"{field}.path", "must be left out with aggregate count")
        return False, (), None
    try:
        on_entity, path = _parse_column_path(raw.get("path"))
    except ValueError as error:
        raise ConfigError(f"{field}.path", str(error)) from error
    if aggregate == "sum" and on_entity:
        raise ConfigError(f"{field}.path", "a sum adds up line item values, not entity values")
    return on_entity, path, None


def _column_format(raw: dict[str, Any], field: str) -> str:
    column_format = raw.get("format", "text")
    if column_format not in ("text", "number", "money") and not (
        isinstance(column_format, str) and column_format.startswith("date:")
    ):
        raise ConfigError(f"{field}.format", "must be text, number, money or date:<strftime format>")
    if column_format.startswith("date:"):
        try:
            check_date_format(column_format[5:])
        except ValueError as error:
            raise ConfigError(f"{field}.format", f"date format {error}") from error
    return str(column_format)


def _required_values(config: dict[str, Any]) -> list[tuple[bool, Path]]:
    raw = config.get("required_values", [])
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list) or len(raw) > MAX_REQUIRED_VALUES:
        raise ConfigError("required_values", f"must be a list of at most {MAX_REQUIRED_VALUES} paths")
    paths = []
    for position, text in enumerate(raw):
        try:
            paths.append(_parse_column_path(text))
        except ValueError as error:
            raise ConfigError(f"required_values[{position}]", str(error)) from error
    return paths


def _required_texts(config: dict[str, Any]) -> list[str]:
    raw = config.get("required_values", [])
    return [raw] if isinstance(raw, str) else list(raw)


def _compile(config: dict[str, Any]) -> _Settings:
    validate_skip(config)
    mode = require_choice(config, "rows", ROW_MODES, "entity")
    columns = config.get("columns")
    if not isinstance(columns, list) or not columns:
        raise ConfigError("columns", "must be a non-empty list of columns")
    if len(columns) > MAX_COLUMNS:
        raise ConfigError("columns", f"must have at most {MAX_COLUMNS} columns")
    languages = _languages(config["language"], "language") if "language" in config else ()
    compiled = [_compile_column(position, column, mode, languages) for position, column in enumerate(columns)]
    group_by: list[Path] = []
    if mode == "line_items_grouped":
        raw_group_by = config.get("group_by")
        if isinstance(raw_group_by, str):
            raw_group_by = [raw_group_by]
        if not isinstance(raw_group_by, list) or not raw_group_by or len(raw_group_by) > 10:
            raise ConfigError("group_by", "must be a list of 1 to 10 line item paths such as taxes[0].rate")
        for position, text in enumerate(raw_group_by):
            try:
                group_by.append(parse_path(text))
            except ValueError as error:
                raise ConfigError(f"group_by[{position}]", str(error)) from error
    elif "group_by" in config:
        raise ConfigError("group_by", "is only allowed with rows line_items_grouped")
    group_scope = require_choice(config, "group_scope", ("batch", "entity"), "batch")
    delimiter = config.get("separator", ";")
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\"'\r\n\\" or delimiter.isalnum():
        raise ConfigError("separator", "must be one character that is not a letter, digit, quote or line break")
    decimal_separator = require_choice(config, "decimal_separator", (",", "."), ",")
    if decimal_separator == delimiter:
        raise ConfigError("decimal_separator", "must differ from the separator")
    quoting = _QUOTING[require_choice(config, "quoting", tuple(_QUOTING), "minimal")]
    timezone = None
    if "timezone" in config:
        try:
            timezone = check_timezone(config["timezone"])
        except ValueError as error:
            raise ConfigError("timezone", str(error)) from error
    return _Settings(
        mode=mode,
        columns=compiled,
        required_values=_required_values(config),
        whole_numbers=require_bool(config, "whole_numbers_as_integers", True),
        group_by=group_by,
        group_scope=group_scope,
        include_failed_payments=require_bool(config, "include_failed_payments", False),
        delimiter=delimiter,
        decimal_separator=decimal_separator,
        quoting=quoting,
        header=require_bool(config, "header", True),
        line_terminator=require_choice(config, "line_terminator", ("\r\n", "\n"), "\r\n"),
        bom=require_bool(config, "bom", False),
        timezone=timezone,
    )


def _cell_formatter(column: _Column, settings: _Settings) -> Callable[[Any, Any], str]:
    """A function (value, currency) -> cell text for one column, built once per render."""
    separator = settings.decimal_separator
    zone = settings.timezone
    whole_numbers = settings.whole_numbers

    def plain_number(value: Any) -> str | None:
        number = to_decimal(value)
        if whole_numbers and number is not None and number.is_finite() and number == number.to_integral_value():
            return str(int(number))  # 2.0 -> 2: a quantity reads as the whole number it is
        return format_number(value, decimal_separator=separator)

    def as_text(value: Any) -> str:
        if isinstance(value, str):  # the usual cell first
            return neutralise_formula(value)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, int | float | Decimal):
            number = plain_number(value)
            return number if number is not None else ""
        return neutralise_formula(dumps(value))

    if column.format == "money":

        def money(value: Any, currency: Any) -> str:
            text = format_money(value, decimal_separator=separator, currency=currency)
            return text if text is not None else as_text(value)

        return money
    if column.format == "number":

        def number(value: Any, currency: Any) -> str:
            text = plain_number(value) if not isinstance(value, bool) else None
            return text if text is not None else as_text(value)

        return number
    if column.format.startswith("date:"):
        date_format = column.format[5:]

        def date(value: Any, currency: Any) -> str:
            text = format_date(value, date_format, zone)
            return neutralise_formula(text) if text is not None else as_text(value)

        return date
    return lambda value, currency: as_text(value)


def _unquoted_blanks(settings: _Settings) -> dict[int, str] | None:
    """With ``quoting: none``, what ``str.translate`` writes for the characters that would end a cell or a row (the
    separator, CR, LF): a space (``_`` when the separator is a space). None for the quoting modes, where the
    writer quotes such a value."""
    if settings.quoting != stdlib_csv.QUOTE_NONE:
        return None
    blank = "_" if settings.delimiter == " " else " "
    return {ord(character): blank for character in (settings.delimiter, "\r", "\n")}


def _group_key(values: list[Any]) -> tuple[str, ...]:
    # 0.25 and 0.250 are one VAT rate: numbers are compared as normalized Decimals.
    key = []
    for value in values:
        number = to_decimal(value) if not isinstance(value, str) else None
        key.append("n" + str(number.normalize()) if number is not None else "j" + dumps(value))
    return tuple(key)


def _add(total: Decimal, value: Any, column: str) -> Decimal:
    if value is None:
        return total
    number = to_decimal(value)
    if number is None:
        raise TransformError(f"{column}: cannot sum the non-numeric value {dumps(value)}")
    return total + number


def _charged(formatter: Callable[[Any, Any], str], budget: RenderBudget) -> Callable[[Any, Any], str]:
    """``formatter`` with every cell it makes counted against ``budget`` as it is made: a column that prints a
    whole entity (200 of them in a row) stops at the limit within one cell, not at the next size check. The
    count is in characters (a lower bound on bytes; the written file's size is checked exactly too), and the
    clock is read once every ``_TIME_CHECK_CELLS`` cells."""
    calls = 0

    def cell(value: Any, currency: Any) -> str:
        nonlocal calls
        text = formatter(value, currency)
        budget.produced += len(text)
        if budget.produced > budget.max_bytes:
            budget.check_size(budget.produced)
        calls += 1
        if calls >= _TIME_CHECK_CELLS:
            calls = 0
            budget.check_time()
        return text

    return cell


# A function (row, entity) -> a column's value in a row.
_Reader = Callable[[dict[str, Any], dict[str, Any]], Any]


def _reader(column: _Column) -> _Reader:
    """A column's value in a row: its constant, its derived value or the value at its path (localised); the
    function is chosen once per render, so a row only reads."""
    if column.source == "value":
        constant = column.constant
        return lambda row, entity: constant
    if column.source == "derived":
        return lambda row, entity: sale_type(entity)
    read, languages, on_entity = reader(column.path), column.languages, column.on_entity
    if not languages:
        return (lambda row, entity: read(entity)) if on_entity else (lambda row, entity: read(row))
    return lambda row, entity: localised(read(entity if on_entity else row), languages)


# What one row of each mode is, for ``describe``: where the rows come from and what a column path is read in.
ROWS_DESCRIBED = {
    "entity": "One row per element; column paths read the element.",
    "line_items": "One row per line item (`summary.line_items`) of each element; column paths read the line item.",
    "line_items_grouped": "One row per distinct `group_by` value over the line items (`summary.line_items`), in "
    "order of first appearance; column paths read the group's first line item, or sum or count the group.",
    "payments_grouped": "One row per payment type and currency over the payments; column paths read the row "
    "(`payment_type`, `currency_code`, `amount`, `foreign_currency_amount`, `count`).",
    "reconciliations": "One row per reconciliation of each element; column paths read the reconciliation.",
    "tax_summaries": "One row per tax summary (`register_summary.all.tax_summaries`) of each element; column paths "
    "read the tax summary.",
}
# The row of ``payments_grouped`` (``CsvTransform._payment_groups``).
PAYMENT_ROW: Schema = {
    "type": "object",
    "properties": {
        "payment_type": {"type": "string", "description": "The payment type, e.g. `cash`."},
        "currency_code": {
            "type": "string",
            "description": "The payment's foreign currency, else the element's base currency.",
        },
        "amount": {"type": "number", "description": "The exact sum of the payments' amounts."},
        "foreign_currency_amount": {
            "type": ["number", "null"],
            "description": "The exact sum of their foreign currency amounts, if any had one.",
        },
        "count": {"type": "integer", "description": "The number of payments."},
    },
}
# How a constant column's value reads, by its JSON type.
_CONSTANT_TYPES = {"string": "text", "number": "number", "boolean": "boolean", "null": "empty"}


def _row_schema(mode: str, element: ElementSchema) -> Schema | None:
    if mode == "entity":
        return element.element
    if mode == "payments_grouped":
        return PAYMENT_ROW
    return element.at((*_ROW_LISTS[mode], 0))


def _describe_column(
    position: int, raw: dict[str, Any], column: _Column, row: Schema | None, element: ElementSchema
) -> dict[str, Any]:
    """One column: its header, where its value comes from and what the cell holds (``type``)."""
    described: dict[str, Any] = {"position": position + 1, "header": column.header}
    if column.source == "value":
        constant = column.constant
        return {**described, "source": "value", "value": constant, "type": _CONSTANT_TYPES[json_type(constant)]}
    if column.source == "derived":
        meaning = "The sale's type: `voided`, `return`, `expense` or `sale`."
        return {**described, "source": "derived", "derived": raw["derived"], "type": "text", "description": meaning}
    if column.aggregate == "count":
        return {**described, "source": "count", "type": "number", "description": "The line items in the group."}
    start = element.element if column.on_entity else row
    found = element.at(column.path, start=start) if start is not None else None
    described.update(source="path", path=raw["path"], of="element" if column.on_entity else "row")
    if column.aggregate != "first":
        described["aggregate"] = column.aggregate
    if column.languages:
        described["language"] = list(column.languages)
    meaning = element.description(found)
    if column.format == "money":
        quantized = "Written quantized to the minor unit of the currency."
        described.update(type="money", description=f"{meaning} {quantized}" if meaning else quantized)
    elif column.format == "number" or column.aggregate == "sum":
        described["type"] = "number"
    elif column.format.startswith("date:"):
        described.update(type="date", date_format=column.format[5:])
    else:
        kinds = element.types(found)
        if column.languages and "object" in kinds:  # an L10nString is written in one of the languages
            kinds = (kinds - {"object"}) | {"string"}
        described["type"] = cell_type(kinds)
    if "description" not in described and meaning:
        described["description"] = meaning
    described["in_schema"] = found is not None
    return described


class CsvTransform(CheckedTransform):
    code = "csv"

    def describe(self, config: dict[str, Any], element: ElementSchema) -> Described:
        """The layout: the rows, the ordered columns (each one's source and cell type) and how the file is
        written. Cell types: ``text``, ``number`` and ``money`` (digits, a sign and ``decimal_separator``),
        ``date`` (``date_format``), ``boolean`` (true / false), ``json`` (an object or list as JSON), ``empty``."""
        settings = _compile(config)
        row = _row_schema(settings.mode, element)
        columns = [
            _describe_column(position, raw, column, row, element)
            for position, (raw, column) in enumerate(zip(config["columns"], settings.columns, strict=True))
        ]
        layout: dict[str, Any] = {
            "rows": settings.mode,
            "row": ROWS_DESCRIBED[settings.mode],
            "header": settings.header,
            "separator": settings.delimiter,
            "decimal_separator": settings.decimal_separator,
            "quoting": config.get("quoting", "minimal"),
            "line_terminator": settings.line_terminator,
            "encoding": "utf-8",
            "bom": settings.bom,
            "timezone": config.get("timezone"),
            "whole_numbers_as_integers": settings.whole_numbers,
            "required_values": _required_texts(config),
            "columns": columns,
        }
        if settings.mode == "line_items_grouped":
            group_by = config["group_by"]
            layout["group_by"] = [group_by] if isinstance(group_by, str) else list(group_by)
        if settings.mode in _GROUPED:
            layout["group_scope"] = settings.group_scope
        if settings.mode == "payments_grouped":
            layout["include_failed_payments"] = settings.include_failed_payments
        return Described("text/csv; charset=utf-8", "csv", csv=layout)

    def check(self, config: dict[str, Any]) -> _Settings:
        return _compile(config)

    def reads(self, config: dict[str, Any]) -> list[Path] | None:
        """Rows of entities read their columns' paths, the required values, what the skip rules and a derived
        type read, and the currency of money columns; the other modes read the entity's lists: all of it."""
        try:
            settings = _compile(config)
        except ConfigError:
            return None  # the render refuses it
        if settings.mode != "entity":
            return None
        paths: list[Path] = [("base_currency_code",), *skip_paths(config)]
        for column in settings.columns:
            if column.source == "path":
                paths.append(column.path)
            elif column.source == "derived":
                paths.extend(SALE_TYPE_READS)
        paths.extend(path for _on_entity, path in settings.required_values)
        return paths

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        buffer = io.BytesIO()
        rendered = self._write(elements, config, buffer, RenderBudget())
        return Rendered(buffer.getvalue(), rendered.content_type, rendered.extension, rendered.skipped)

    def render_to(
        self, elements: Iterable[Element], context: RenderContext, config: dict[str, Any], out: IO[bytes]
    ) -> Rendered:
        return self._write(
            elements, config, out, RenderBudget(timeout=STREAM_TIMEOUT_SECONDS, max_bytes=MAX_STREAM_BYTES)
        )

    def _write(
        self, elements: Iterable[Element], config: dict[str, Any], out: IO[bytes], budget: RenderBudget
    ) -> Rendered:
        """Rows go straight into ``out`` as UTF-8: only a group table (grouped modes) is held in memory."""
        settings: _Settings = self.checked(config)
        skipped: list[str] = []
        kept = without_skipped(elements, config, skipped)
        formatters = [_charged(_cell_formatter(column, settings), budget) for column in settings.columns]
        text = io.TextIOWrapper(out, encoding="utf-8", newline="", write_through=True)
        start = out.tell()
        try:
            if settings.bom:
                text.write("\ufeff")
            writer = stdlib_csv.writer(
                text,
                delimiter=settings.delimiter,
                quoting=settings.quoting,  # type: ignore[arg-type]
                escapechar="\\" if settings.quoting == stdlib_csv.QUOTE_NONE else None,
                lineterminator=settings.line_terminator,
            )
            # Unquoted, a separator or line break inside a value would start a new cell or row in a spreadsheet
            # (which ignores the backslash escape): it is written as a space.
            blank = _unquoted_blanks(settings)
            if settings.header:
                header = [neutralise_formula(column.header) for column in settings.columns]
                writer.writerow(header if blank is None else [cell.translate(blank) for cell in header])
            for count, cells in enumerate(self._rows(kept, settings, formatters), start=1):
                writer.writerow(cells if blank is None else [cell.translate(blank) for cell in cells])
                if count % _SIZE_CHECK_EVERY == 0:
                    budget.check_time()
                    budget.check_size(out.tell() - start)
            text.flush()
            budget.check_size(out.tell() - start)
        except stdlib_csv.Error as error:
            raise TransformError(f"cannot write CSV: {error}") from error
        finally:
            text.detach()  # leaves ``out`` open for the delivery
        return Rendered(b"", "text/csv; charset=utf-8", "csv", skipped, file=out)

    def _rows(
        self, elements: Iterable[Element], settings: _Settings, formatters: list[Callable[[Any, Any], str]]
    ) -> Iterator[list[str]]:
        columns = settings.columns
        pairs = list(zip(columns, formatters, strict=True))
        plan = [(_reader(column), formatter) for column, formatter in pairs]

        row_currency = settings.mode == "reconciliations"
        required = settings.required_values

        def cells(row: dict[str, Any], entity: dict[str, Any]) -> list[str]:
            currency = (row_currency and row.get("currency_code")) or entity.get("base_currency_code")
            return [formatter(read(row, entity), currency) for read, formatter in plan]

        def complete(row: dict[str, Any], entity: dict[str, Any]) -> bool:
            return all(resolve(entity if on_entity else row, path) not in (None, "") for on_entity, path in required)

        if settings.mode == "entity":
            for element in elements:
                if complete(element.entity, element.entity):
                    yield cells(element.entity, element.entity)
        elif settings.mode in ("line_items", "reconciliations", "tax_summaries"):
            list_path = _ROW_LISTS[settings.mode]
            for element in elements:
                items = resolve(element.entity, list_path)
                for item in items if isinstance(items, list) else ():
                    if isinstance(item, dict) and complete(item, element.entity):
                        yield cells(item, element.entity)
        else:
            scopes: Iterable[Iterable[Element]] = (
                [elements] if settings.group_scope == "batch" else ([element] for element in elements)
            )
            for scope in scopes:
                if settings.mode == "line_items_grouped":
                    yield from self._line_item_groups(scope, settings, pairs, plan)
                else:
                    for row, entity in self._payment_groups(scope, settings):
                        if complete(row, entity):
                            yield cells(row, entity)

    def _line_item_groups(
        self,
        elements: Iterable[Element],
        settings: _Settings,
        pairs: list[tuple[_Column, Callable[[Any, Any], str]]],
        plan: list[tuple[_Reader, Callable[[Any, Any], str]]],
    ) -> Iterator[list[str]]:
        # group key -> [first line item, its entity, item count, one running sum per column]
        groups: dict[tuple[str, ...], list[Any]] = {}
        for element in elements:
            items = resolve(element.entity, _ROW_LISTS["line_items"])
            for item in items if isinstance(items, list) else ():
                if not isinstance(item, dict) or not all(
                    resolve(element.entity if on_entity else item, path) not in (None, "")
                    for on_entity, path in settings.required_values
                ):
                    continue
                key = _group_key([resolve(item, path) for path in settings.group_by])
                group = groups.get(key)
                if group is None:
                    group = groups[key] = [item, element.entity, 0, [Decimal(0)] * len(pairs)]
                group[2] += 1
                sums = group[3]
                for position, (column, _formatter) in enumerate(pairs):
                    if column.aggregate == "sum":
                        sums[position] = _add(sums[position], resolve(item, column.path), f"columns[{position}]")
        for first_item, entity, count, sums in groups.values():
            currency = entity.get("base_currency_code")
            row = []
            for position, ((column, formatter), (read, _formatter)) in enumerate(zip(pairs, plan, strict=True)):
                if column.aggregate == "sum":
                    value: Any = sums[position]
                elif column.aggregate == "count":
                    value = count
                else:
                    value = read(first_item, entity)
                row.append(formatter(value, currency))
            yield row

    def _payment_groups(
        self, elements: Iterable[Element], settings: _Settings
    ) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
        groups: dict[tuple[str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
        for element in elements:
            payments = element.entity.get("payments")
            for payment in payments if isinstance(payments, list) else ():
                if not isinstance(payment, dict):
                    continue
                if payment.get("success") is False and not settings.include_failed_payments:
                    continue
                payment_type = str(payment.get("payment_type") or "")
                currency = str(payment.get("foreign_currency") or element.entity.get("base_currency_code") or "")
                entry = groups.get((payment_type, currency))
                if entry is None:
                    row: dict[str, Any] = {
                        "payment_type": payment_type,
                        "currency_code": currency,
                        "amount": Decimal(0),
                        "foreign_currency_amount": None,
                        "count": 0,
                    }
                    entry = groups[(payment_type, currency)] = (row, element.entity)
                row = entry[0]
                row["amount"] = _add(row["amount"], payment.get("amount"), "payments[].amount")
                if payment.get("foreign_currency_amount") is not None:
                    row["foreign_currency_amount"] = _add(
                        row["foreign_currency_amount"] or Decimal(0),
                        payment["foreign_currency_amount"],
                        "payments[].foreign_currency_amount",
                    )
                row["count"] += 1
        yield from groups.values()
