"""Mustache: a logic-less template producing JSON, HTML, XML or text (spec "Events" -> "Transforms").

Configuration::

    {
        "type": "mustache",
        "template": "{{#elements}}{{identifier}};{{summary.total__money}}\\n{{/elements}}",  # required
        "content_type": "text/plain",    # default text/plain; the extension follows it (json, html, xml, csv, txt)
        "extension": "txt",              # optional override, without the dot
        "escape": "html",                # how {{x}} is escaped: html | json | none; {{{x}}} and {{&x}} never are.
                                         # default: html for text/html and XML, json for application/json,
                                         # none otherwise
        "decimal_separator": ".",        # for __money ("." or ",")
        "date_format": "%Y-%m-%d %H:%M:%S",  # for __date
        "timezone": "UTC",               # for __date (default: UTC for timestamps, ISO strings keep their offset)
        "skip_voided": false, "skip_if": {"path": "voided", "equals": true}
    }

The template sees ``elements`` (the batch's entities in order, each carrying its ``element_key``; real time: one),
``queue``, ``account``, ``now`` (ISO 8601) and ``delivery_id``.

Formatting. Mustache has no helpers and its lambdas only see unrendered text, so formatting is offered as
pre-formatted names, computed when a tag asks for them: the last name of a tag may end in

* ``__money``: ``{{summary.total__money}}`` -> ``12.50`` (Decimal, the element's ``base_currency_code`` minor
  unit, ``decimal_separator``);
* ``__date``: ``{{timing.timestamp__date}}`` (timestamp in s or ms, or ISO string; ``date_format``, ``timezone``);
* ``__json``: ``{{{summary__json}}}`` -> the value as JSON text.

``{{{element_json}}}`` is the innermost enclosing element (the entity with its ``element_key``) as JSON, so a
JSON template can embed an entity safely. A real key of that name always wins over a derived one.

Safety and limits. The template is parsed by pystache (spec-conformant tags, delimiters and standalone lines)
and rendered by the small renderer below: names are looked up in dicts only (no attributes, nothing is
called), partials are refused (pystache would read them from disk), and the renderer writes its output through a
``BoundedWriter``, which charges it to the budget as it goes (UTF-8 bytes against ``MAX_OUTPUT_BYTES``, the
monotonic clock against ``RENDER_TIMEOUT_SECONDS``, also at every section iteration); an object or a list
(``{{{elements}}}``, ``__json``, ``element_json``) is serialised a chunk at a time, so a runaway template (e.g.
nested ``{{#elements}}``, or ``{{{elements}}}`` repeated) stops with a TransformError within one chunk of the
limit. The template's size, tag count, section nesting and names per tag are capped too, and so is what makes
pystache's tag
regex slow (long runs of blanks, a ``{{`` that is never closed); set-delimiter tags are refused for the same
reason.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any, NamedTuple

from pystache.parser import (  # type: ignore[attr-defined]
    ParsingError,
    _ChangeNode,
    _CommentNode,
    _EscapeNode,
    _InvertedNode,
    _LiteralNode,
    _SectionNode,
    parse,
)

from exports.transforms.base import ConfigError, Element, RenderContext, Rendered, TransformError
from exports.transforms.common import (
    CHUNK_CHARS,
    DEFAULT_DATE_FORMAT,
    BoundedWriter,
    CheckedTransform,
    RenderBudget,
    base_media_type,
    check_formats,
    check_timezone,
    content_type_and_extension,
    format_date,
    format_money,
    require_choice,
    split_skipped,
    template_context,
    to_text,
    validate_skip,
    write_json,
)

MAX_TEMPLATE_LENGTH = 64_000
MAX_NESTING = 8
MAX_TAGS = 5_000
MAX_BLANK_RUN = 1_000
# Names in one tag (``summary.line_items.name`` is three): each is looked up at every render of the tag.
MAX_PATH_SEGMENTS = 16
_BLANK_RUN_RE = re.compile(r"[ \t]+")
_SET_DELIMITER_RE = re.compile(r"\{\{\s*=")
_NOT_FOUND = object()


def _escape_json(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)[1:-1]


_ESCAPES: dict[str, Callable[[str], str]] = {
    "html": lambda text: html.escape(text, quote=True),
    "json": _escape_json,
    "none": lambda text: text,
}


def _default_escape(content_type: str) -> str:
    media_type = base_media_type(content_type)
    if media_type == "text/html" or media_type.endswith(("/xml", "+xml")):
        return "html"
    if media_type == "application/json" or media_type.endswith("+json"):
        return "json"
    return "none"


def _check_tree(parsed: Any, depth: int) -> None:
    if depth > MAX_NESTING:
        raise ConfigError("template", f"sections may be nested at most {MAX_NESTING} deep")
    for node in parsed._parse_tree:
        if isinstance(node, str | _CommentNode | _ChangeNode):
            continue
        if node.key.count(".") >= MAX_PATH_SEGMENTS:
            raise ConfigError("template", f"{node.key[:40]!r} has more than {MAX_PATH_SEGMENTS} path segments")
        if isinstance(node, _EscapeNode | _LiteralNode):
            continue
        if isinstance(node, _SectionNode):
            _check_tree(node.parsed, depth + 1)
        elif isinstance(node, _InvertedNode):
            _check_tree(node.parsed_section, depth + 1)
        else:
            raise ConfigError("template", "partials ({{> name}}) are not allowed")


def _check_parser_cost(template: str) -> None:
    """Refuse what makes pystache's tag regex super-linear (measured: 99,000 spaces take 25 s to parse)."""
    if max((len(run) for run in _BLANK_RUN_RE.findall(template)), default=0) > MAX_BLANK_RUN:
        raise ConfigError("template", f"must not hold more than {MAX_BLANK_RUN} spaces or tabs in a row")
    if _SET_DELIMITER_RE.search(template):
        raise ConfigError("template", "changing the delimiters ({{=<% %>=}}) is not supported")
    # A {{ with no }} after it makes every later search rescan the rest of the template.
    if template.rfind("{{") > template.rfind("}}"):
        raise ConfigError("template", "has a {{ that is never closed")
    if template.count("{{") > MAX_TAGS:
        raise ConfigError("template", f"must have at most {MAX_TAGS} tags")


class _JsonOf(NamedTuple):
    """A value asked for as JSON (``x__json``, ``element_json``): written within the budget where it is output."""

    value: Any


class _Renderer:
    """Renders pystache's parse tree against plain JSON data, within the budget."""

    def __init__(
        self,
        *,
        budget: RenderBudget,
        escape: Callable[[str], str] | None,
        config: dict[str, Any],
        element_ids: set[int],
    ) -> None:
        self.budget = budget
        self.escape = escape
        self.decimal_separator = config.get("decimal_separator", ".")
        self.date_format = config.get("date_format", DEFAULT_DATE_FORMAT)
        self.zone = check_timezone(config["timezone"]) if "timezone" in config else None
        self.element_ids = element_ids
        self.out = BoundedWriter(budget)

    def render(self, parsed: Any, stack: list[Any]) -> None:
        for node in parsed._parse_tree:
            if isinstance(node, str):
                self.out.write(node)
            elif isinstance(node, _EscapeNode):
                self.output(self.lookup(stack, node.key), self.escape)
            elif isinstance(node, _LiteralNode):
                self.output(self.lookup(stack, node.key), None)
            elif isinstance(node, _SectionNode):
                self.section(node, stack)
            elif isinstance(node, _InvertedNode):
                value = self.lookup(stack, node.key)
                if value is _NOT_FOUND or not value:
                    self.render(node.parsed_section, stack)

    def output(self, value: Any, escape: Callable[[str], str] | None) -> None:
        """Write a tag's value: text as it is, an object or a list (or ``__json``) as JSON, a chunk at a time."""
        if value is _NOT_FOUND:
            return
        if isinstance(value, _JsonOf | dict | list):
            value = value.value if isinstance(value, _JsonOf) else value
            if escape is None:
                write_json(value, self.out)
            else:
                self.out.extend_charged(self._escaped(lambda writer: write_json(value, writer), escape))
            return
        text = to_text(value)
        if not text:
            return
        if escape is None:
            self.out.write(text)
        elif len(text) <= CHUNK_CHARS:
            self.out.write(escape(text))
        else:  # escaping may make it six times longer: a slice at a time
            self.out.extend_charged(self._escaped(lambda writer: writer.write(text), escape))

    def _escaped(self, write: Callable[[BoundedWriter], None], escape: Callable[[str], str]) -> list[str]:
        writer = BoundedWriter(self.budget, escape=escape)
        write(writer)
        writer.flush()
        return writer.chunks

    def section(self, node: Any, stack: list[Any]) -> None:
        value = self.lookup(stack, node.key)
        if value is _NOT_FOUND or not value:
            return
        if isinstance(value, _JsonOf):  # a section over x__json sees the JSON text
            writer = BoundedWriter(self.budget, charge=False)
            write_json(value.value, writer)
            value = writer.text()
        for item in value if isinstance(value, list) else [value]:
            self.budget.check_time()
            stack.append(item)
            try:
                self.render(node.parsed, stack)
            finally:
                stack.pop()

    def lookup(self, stack: list[Any], key: str) -> Any:
        if key == ".":
            return stack[-1]
        names = key.split(".")
        last = names[-1]
        value = self._find(stack, names)
        if value is not _NOT_FOUND or "__" not in last:
            return value
        base, _, kind = last.rpartition("__")
        if base == "" and len(names) == 1:
            return _NOT_FOUND
        value = self._find(stack, [*names[:-1], base])
        if value is _NOT_FOUND or value is None:
            return _NOT_FOUND
        if kind == "money":
            currency = self._currency(stack)
            return format_money(value, decimal_separator=self.decimal_separator, currency=currency) or _NOT_FOUND
        if kind == "date":
            return format_date(value, self.date_format, self.zone) or _NOT_FOUND
        if kind == "json":
            return _JsonOf(value)
        return _NOT_FOUND

    def _find(self, stack: list[Any], names: list[str]) -> Any:
        first = names[0]
        if first == "element_json" and len(names) == 1:
            found = self._get_from_stack(stack, first)
            if found is not _NOT_FOUND:
                return found
            for frame in reversed(stack):
                if id(frame) in self.element_ids:
                    return _JsonOf(frame)
            return _NOT_FOUND
        value = self._get_from_stack(stack, first)
        for name in names[1:]:
            if not isinstance(value, dict) or name not in value:
                return _NOT_FOUND
            value = value[name]
        return value

    def _get_from_stack(self, stack: list[Any], name: str) -> Any:
        for frame in reversed(stack):
            if isinstance(frame, dict) and name in frame:
                return frame[name]
        return _NOT_FOUND

    def _currency(self, stack: list[Any]) -> Any:
        for frame in reversed(stack):
            if isinstance(frame, dict) and isinstance(frame.get("base_currency_code"), str):
                return frame["base_currency_code"]
        return None


class MustacheTransform(CheckedTransform):
    code = "mustache"

    def check(self, config: dict[str, Any]) -> tuple[Any, str, str, str]:
        validate_skip(config)
        content_type, extension = content_type_and_extension(config)
        escape = require_choice(config, "escape", tuple(_ESCAPES), _default_escape(content_type))
        require_choice(config, "decimal_separator", (".", ","), ".")
        check_formats(config)
        template = config.get("template")
        if not isinstance(template, str) or not template:
            raise ConfigError("template", "must be a non-empty string")
        if len(template) > MAX_TEMPLATE_LENGTH:
            raise ConfigError("template", f"must be at most {MAX_TEMPLATE_LENGTH} characters")
        _check_parser_cost(template)
        try:
            parsed = parse(template, raise_on_mismatch=True)
        except (ParsingError, ValueError, KeyError, IndexError) as error:
            raise ConfigError("template", f"does not parse: {error}") from error
        _check_tree(parsed, 0)
        return parsed, content_type, extension, escape

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        parsed, content_type, extension, escape = self.checked(config)
        budget = RenderBudget()
        kept, skipped = split_skipped(elements, config)
        data = template_context(kept, context)
        renderer = _Renderer(
            budget=budget,
            escape=None if escape == "none" else _ESCAPES[escape],
            config=config,
            element_ids={id(entity) for entity in data["elements"]},
        )
        try:
            renderer.render(parsed, [data])
        except RecursionError as error:
            raise TransformError("template nests too deeply") from error
        return Rendered(budget.encode(renderer.out.text()), content_type, extension, skipped)
