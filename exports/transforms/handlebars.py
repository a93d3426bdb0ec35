"""Handlebars (pybars3): a template producing JSON, HTML, XML or text (spec "Events" -> "Transforms").

Configuration::

    {
        "type": "handlebars",
        "template": "{{#each elements}}{{identifier}};{{money summary.total}}\\n{{/each}}",  # required
        "content_type": "text/plain",    # default text/plain; the extension follows it (json, html, xml, csv, txt)
        "extension": "txt",              # optional override, without the dot
        "decimal_separator": ".",        # default for the money helper ("." or ",")
        "date_format": "%Y-%m-%d %H:%M:%S",  # default for the date helper
        "timezone": "UTC",               # default zone for the date helper
        "skip_voided": false, "skip_if": {"path": "voided", "equals": true}
    }

The template sees ``elements`` (the batch's entities in order, each carrying its ``element_key``; real time: one),
``queue``, ``account``, ``now`` (ISO 8601) and ``delivery_id``.

Security. pybars3 compiles a template to Python source and ``exec``s it; path segments and string literals are
pasted into that source, so ``{{['+str(6*7)+']}}`` runs Python in 0.9.7. Staff-written templates must never run
code, so pybars3 only ever compiles a template that passed ``check_template``, a whitelist tokenizer run on the
very text pybars3 parses (after its whitespace-control preprocessing). Allowed are:

* text outside ``{{``; comments ``{{! ... }}``;
* ``{{expr}}`` (HTML-escaped), ``{{{expr}}}`` and ``{{&expr}}`` (raw), with optional ``~`` whitespace control;
* ``{{#each p}}``, ``{{#if p}}``, ``{{#unless p}}``, ``{{#with p}}`` ... ``{{else}}`` ... ``{{/name}}``;
* expr = a path, or one of our helpers with 1 to 3 arguments, each a path or a ``"double-quoted"`` literal of
  ``[A-Za-z0-9 _.,:;%/+#()-]`` (no quotes, backslashes, brackets or braces):
  ``{{money p ["EUR"|currency path]}}`` (two decimals or the currency's minor unit, config decimal separator),
  ``{{date p ["%Y-%m-%d" [tz]]}}`` (timestamp in s or ms, or ISO string) and ``{{{json p}}}`` (JSON text);
* a path = ``this``, ``this.a.b``, ``(../)*a.b.0.c`` or ``@index @key @first @last @root[.a.b]``, segments
  ``[A-Za-z0-9][A-Za-z0-9_-]*`` (never a leading underscore, so no ``__class__``). A bare one-segment path may
  not be a helper name (``each``, ``lookup``, ``log``, ``money`` ...): write ``this.date`` for a field named date.

Everything else is refused: segment literals ``[...]``, single quotes, backslashes, subexpressions ``( )``, hash
arguments ``k=v``, partials ``{{> x}}``, inverted sections ``{{^x}}``, raw blocks ``{{{{x}}}}``, ``lookup``,
``log`` and unknown helpers, block nesting deeper than ``MAX_NESTING``, templates longer than
``MAX_TEMPLATE_LENGTH``. ``validate`` raises ConfigError("template", ...); ``render`` re-checks and raises
TransformError.

pybars3 resolves a missing key by ``getattr`` and calls what it finds (``{{#with summary}}{{setdefault}}``
would call ``dict.setdefault``). The data therefore reaches the template as ``_Safe*`` wrappers whose item
lookup never fails, so pybars3 never falls back to attributes; ``json`` writes them as the values they wrap.

Limits. The template's size, tag count, nesting, whitespace runs and path segments (``MAX_PATH_SEGMENTS`` per
path, ``MAX_SEGMENTS`` in all) are capped before pybars3 sees it, and pybars3's exponential whitespace-control
regex is replaced by an equivalent linear one (``_Compiler``). The compile itself is charged as it runs, like a
render: every rule application of pybars3's grammars counts against ``MAX_COMPILE_UNITS`` and the monotonic clock
against ``COMPILE_TIMEOUT_SECONDS`` (``_CompileMeter``), so no template costs more than one bounded compile
(docs/security.md has the measured figures). Compiled templates are cached per process (``COMPILED_CACHE_SIZE``),
keyed by the text pybars3 parses, so sources that differ only in whitespace control share one entry.

Rendering is bounded while it runs: pybars3's output list and value formatting are replaced in the compiled code
(``_Output``, ``_prepare``), so every piece of output is charged to the render's budget as it is produced (UTF-8
bytes against ``MAX_OUTPUT_BYTES``, the monotonic clock against ``RENDER_TIMEOUT_SECONDS``), and so is every
iteration of our ``each``. An object or a list printed whole (``{{{@root}}}`` prints the Python repr of the data, as
pybars3 always has) and ``{{{json x}}}`` are written a chunk at a time by a ``BoundedWriter`` that stops where the
budget ends; ``money`` and ``date`` never copy an object or a list. A runaway template therefore stops within one
chunk (about 16 K characters) of the limit, and its memory stays within a few times ``MAX_OUTPUT_BYTES``.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextvars import ContextVar
from decimal import Decimal
from typing import Any

import pybars
from pybars._compiler import Scope, escape, prepare, strlist

from core.jsonenc import DecimalJSONEncoder
from exports.transforms.base import ConfigError, Element, RenderContext, Rendered, TransformError
from exports.transforms.common import (
    CHUNK_CHARS,
    DEFAULT_DATE_FORMAT,
    FLUSH_PIECES,
    JSON_LEAVES,
    BoundedWriter,
    CheckedTransform,
    RenderBudget,
    check_formats,
    check_timezone,
    content_type_and_extension,
    format_date,
    format_money,
    json_default,
    require_choice,
    split_skipped,
    template_context,
    validate_skip,
    write_json,
)

MAX_TEMPLATE_LENGTH = 64_000
MAX_NESTING = 8
MAX_TAGS = 1_000
MAX_WHITESPACE_RUN = 1_000
_WHITESPACE_RUN_RE = re.compile(r"\s+")
# Path segments (``a.b.c`` is three, ``../`` one) of one path, and of all the template's paths together: pybars3's
# grammar spends about as long on one segment as on a tag, so both are counted before anything compiles.
MAX_PATH_SEGMENTS = 16
MAX_SEGMENTS = 2_000
# What one compile may cost, in grammar steps (a rule application of pybars3's parser or code generator; a step of
# the two rules that walk literal text counts 1, any other 4: measured, those cost about four times as much),
# and in seconds of the monotonic clock from the compile's request (waiting for the process's other compiles
# included): whichever ends first stops the compile with TemplateRefused.
MAX_COMPILE_UNITS = 150_000
COMPILE_TIMEOUT_SECONDS = 10.0
# Compiled templates kept per process, keyed by the text pybars3 parses (two sources that differ only in ``~``
# whitespace control are one entry). A miss costs one compile, at most the bound above.
COMPILED_CACHE_SIZE = 256

BLOCK_HELPERS = ("each", "if", "unless", "with")
# helper name -> (minimum, maximum) number of arguments
HELPERS = {"money": (1, 2), "date": (1, 3), "json": (1, 1)}
# Names pybars3 looks up as helpers before data for a one-segment path.
RESERVED = {*BLOCK_HELPERS, *HELPERS, "lookup", "log", "helperMissing", "blockHelperMissing", "else"}

_SEGMENT = r"[A-Za-z0-9][A-Za-z0-9_-]*"
_PATH_RE = re.compile(
    rf"(?:this(?:\.{_SEGMENT})*"
    rf"|(?:\.\./){{0,{MAX_NESTING}}}{_SEGMENT}(?:\.{_SEGMENT})*"
    rf"|@(?:index|key|first|last)"
    rf"|@root(?:\.{_SEGMENT})*)"
)
_LITERAL_RE = re.compile(r'"[A-Za-z0-9 _.,:;%/+#()-]{0,100}"')
# Covers every character: blanks, "literals", bare words, and a lone quote (which then fails the checks).
_TOKEN_RE = re.compile(r'[ \t]+|"[^"]*"|[^ \t"]+|"', re.DOTALL)
_WS = " \t"


class TemplateRefused(ValueError):
    """The template is outside the whitelist grammar."""


# pybars3's whitespace-control regex nests ``([ \t]*{{...}}[ \t]*)+``, which backtracks exponentially: a line
# of fifteen ``{{#a}}   `` takes minutes. This is the same language written without the ambiguity
# (``WS* (TAG WS*)+``); the replacement function is pybars3's own. ``\s*{{~`` stays quadratic in the length of
# a whitespace run, so check_template refuses runs longer than MAX_WHITESPACE_RUN before calling it.
_WHITESPACE_CONTROL_RE = re.compile(
    r"~}}\s*|\s*{{~|"
    r"(?<=\n)[ \t]*(?:{{(?:#[^{}]+|/[^{}]+|![^{}]+|else|else if [^{}]+)}}[ \t]*)+\r?\n|"
    r"^[ \t]*(?:{{(?:#[^{}]+|![^{}]+)}}[ \t]*)+\r?\n|"
    r"\r?\n[ \t]*(?:{{(?:/[^{}]+|![^{}]+)}}[ \t]*)+$"
)
_CLEANUP_RE = re.compile(r"(?<={{)~|~(?=}})|(?<=}})[ \t]+(?={{)")


class _CompileMeter:
    """What the compile under way has cost: grammar steps against ``MAX_COMPILE_UNITS`` and the monotonic clock
    against ``COMPILE_TIMEOUT_SECONDS`` (read every ``_CLOCK_EVERY`` steps)."""

    def __init__(self) -> None:
        self.units = 0
        self.steps = 0
        self.deadline = time.monotonic() + COMPILE_TIMEOUT_SECONDS

    def charge(self, rule: str) -> None:
        self.units += 1 if rule in _TEXT_RULES else 4
        if self.units > MAX_COMPILE_UNITS:
            raise TemplateRefused(f"is too costly to compile (more than {MAX_COMPILE_UNITS} grammar steps)")
        self.steps += 1
        if self.steps % _CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise TemplateRefused(f"took longer than {COMPILE_TIMEOUT_SECONDS:g} seconds to compile")


# The two rules pybars3's parser applies for each character of literal text, the cheap steps.
_TEXT_RULES = frozenset({"start", "anything"})
_CLOCK_EVERY = 64
_METER: ContextVar[_CompileMeter | None] = ContextVar("handlebars_compile_meter", default=None)


class _Metered:
    """A pymeta grammar whose every rule application is charged to the compile under way (``_METER``)."""

    def _apply(self, rule: Any, rule_name: str, args: Any) -> Any:
        meter = _METER.get()
        if meter is not None:
            meter.charge(rule_name)
        return super()._apply(rule, rule_name, args)  # type: ignore[misc]


class _Compiler(pybars.Compiler):  # type: ignore[misc]
    """pybars3's compiler with a linear-time whitespace control, and grammars that charge every step they take."""

    _handlebars = type("_MeteredHandlebars", (_Metered, pybars.Compiler._handlebars), {})
    _compiler = type("_MeteredCodeGenerator", (_Metered, pybars.Compiler._compiler), {})

    def whitespace_control(self, source: str) -> str:
        return _WHITESPACE_CONTROL_RE.sub(lambda match: _CLEANUP_RE.sub("", match.group(0).strip()), source)


# --- the whitelist ---------------------------------------------------------------------------------------------


class _Segments:
    """The path segments a template has used so far (``MAX_PATH_SEGMENTS`` per path, ``MAX_SEGMENTS`` in all)."""

    def __init__(self) -> None:
        self.total = 0

    def count(self, path: str) -> None:
        segments = path.count(".") + path.count("/") + 1 - path.count("../") * 2
        if segments > MAX_PATH_SEGMENTS:
            raise TemplateRefused(f"{path[:40]!r} has more than {MAX_PATH_SEGMENTS} path segments")
        self.total += segments
        if self.total > MAX_SEGMENTS:
            raise TemplateRefused(f"must have at most {MAX_SEGMENTS} path segments in all")


def _check_argument(token: str, segments: _Segments) -> None:
    if token.startswith('"'):
        if not _LITERAL_RE.fullmatch(token):
            raise TemplateRefused(f"string literal {token[:40]!r} may only hold letters, digits and [ _.,:;%/+#()-]")
    elif not _PATH_RE.fullmatch(token):
        raise TemplateRefused(f"{token[:40]!r} is not an allowed path")
    else:
        segments.count(token)


def _split_expression(inner: str) -> list[str]:
    tokens: list[str] = []
    after_space = True
    for match in _TOKEN_RE.finditer(inner):
        token = match.group(0)
        if token[0] in _WS:
            after_space = True
            continue
        if not after_space:
            raise TemplateRefused(f"{{{{{inner[:40]}}}}} is not an allowed expression")
        tokens.append(token)
        after_space = False
    return tokens


def _check_expression(inner: str, segments: _Segments) -> None:
    tokens = _split_expression(inner)
    if not tokens:
        raise TemplateRefused("empty expression")
    name, arguments = tokens[0], tokens[1:]
    if arguments:
        if name not in HELPERS:
            raise TemplateRefused(f"unknown helper {name[:40]!r} (allowed: {', '.join(HELPERS)})")
        low, high = HELPERS[name]
        if not low <= len(arguments) <= high:
            raise TemplateRefused(f"helper {name} takes {low} to {high} arguments")
        for argument in arguments:
            _check_argument(argument, segments)
        return
    if name in RESERVED:
        raise TemplateRefused(f"{name!r} is a helper name; use this.{name} for a field of that name")
    if name.startswith('"'):
        raise TemplateRefused("a string literal is not an expression")
    _check_argument(name, segments)


def check_template(source: object) -> str:
    """Refuse anything outside the whitelist grammar (module docstring). Raises TemplateRefused. Returns the text
    pybars3 will parse (the source after its whitespace control)."""
    source = _checked_source(source)
    # Check the exact text pybars3 will parse: its whitespace control runs first and may join braces.
    text = _Compiler().whitespace_control(source)
    blocks = _Blocks()
    segments = _Segments()
    position = 0
    tags = 0
    while (start := text.find("{{", position)) >= 0:
        tags += 1
        if tags > MAX_TAGS:
            raise TemplateRefused(f"must have at most {MAX_TAGS} tags")
        if text.startswith("{{{{", start):
            raise TemplateRefused("raw blocks {{{{ }}}} are not allowed")
        if text.startswith("{{{", start):
            position = _check_triple(text, start, segments)
            continue
        end = text.find("}}", start + 2)
        if end < 0:
            raise TemplateRefused("unclosed {{")
        raw_inner = text[start + 2 : end]
        position = end + 2
        if not raw_inner.startswith("!"):  # a comment: pybars3 also ends it at the first }}
            _check_tag(raw_inner.removeprefix("~").removesuffix("~").strip(_WS), blocks, segments)
    blocks.check_closed()
    return text


def _checked_source(source: object) -> str:
    """The source, within the bounds of the whole text, before any parsing."""
    if not isinstance(source, str) or not source:
        raise TemplateRefused("must be a non-empty string")
    if len(source) > MAX_TEMPLATE_LENGTH:
        raise TemplateRefused(f"must be at most {MAX_TEMPLATE_LENGTH} characters")
    if "\x00" in source:
        raise TemplateRefused("must not contain NUL characters")
    if max((len(run) for run in _WHITESPACE_RUN_RE.findall(source)), default=0) > MAX_WHITESPACE_RUN:
        raise TemplateRefused(f"must not hold more than {MAX_WHITESPACE_RUN} whitespace characters in a row")
    return source


def _check_triple(text: str, start: int, segments: _Segments) -> int:
    """A ``{{{expression}}}`` at ``start``; returns the position after it."""
    end = text.find("}}}", start + 3)
    if end < 0:
        raise TemplateRefused("unclosed {{{")
    inner = text[start + 3 : end].strip(_WS)
    if "{" in inner or "}" in inner:
        raise TemplateRefused("braces are not allowed inside a tag")
    _check_expression(inner, segments)
    return end + 3


class _Blocks:
    """The open blocks while a template is checked, innermost last, each with whether it had its ``{{else}}``."""

    def __init__(self) -> None:
        self.open: list[str] = []
        self.seen_else: list[bool] = []

    def start(self, rest: str, segments: _Segments) -> None:
        words = rest.split()
        if len(words) != 2 or words[0] not in BLOCK_HELPERS or words[1] in RESERVED:
            raise TemplateRefused(f"block {{{{#{rest[:40]}}}}} must be one of #each, #if, #unless, #with and a path")
        _check_argument(words[1], segments)
        if rest != f"{words[0]} {words[1]}":
            raise TemplateRefused(f"block {{{{#{rest[:40]}}}}} must be written with one space")
        self.open.append(words[0])
        self.seen_else.append(False)
        if len(self.open) > MAX_NESTING:
            raise TemplateRefused(f"blocks may be nested at most {MAX_NESTING} deep")

    def close(self, rest: str) -> None:
        if not self.open or rest != self.open[-1]:
            raise TemplateRefused(f"{{{{/{rest[:40]}}}}} does not close the open block")
        self.open.pop()
        self.seen_else.pop()

    def otherwise(self) -> None:
        if not self.open or self.seen_else[-1]:
            raise TemplateRefused("{{else}} outside a block or twice in one block")
        self.seen_else[-1] = True

    def check_closed(self) -> None:
        if self.open:
            raise TemplateRefused(f"{{{{#{self.open[-1]}}}}} is not closed")


def _check_tag(inner: str, blocks: _Blocks, segments: _Segments) -> None:
    """One ``{{...}}`` tag's content, whitespace control and spaces removed."""
    if "{" in inner or "}" in inner:
        raise TemplateRefused("braces are not allowed inside a tag")
    if not inner:
        raise TemplateRefused("empty tag {{}}")
    kind, rest = inner[0], inner[1:].strip(_WS)
    if kind == "#":
        blocks.start(rest, segments)
    elif kind == "/":
        blocks.close(rest)
    elif inner == "else":
        blocks.otherwise()
    elif kind == "&":
        _check_expression(rest, segments)
    elif kind in "^>=(\"'[\\":
        raise TemplateRefused(f"{{{{{inner[:40]}}}}} is not allowed (no partials, inverted sections or literals)")
    else:
        _check_expression(inner, segments)


# --- safe data ---------------------------------------------------------------------------------------------------


class _SafeDict(dict[str, Any]):
    def __missing__(self, key: object) -> None:
        return None


class _SafeList(list[Any]):
    def __getitem__(self, key: Any) -> Any:  # type: ignore[override]
        if isinstance(key, int | slice):
            return super().__getitem__(key)
        if key == "length":
            return len(self)
        if isinstance(key, str) and key.isdigit() and int(key) < len(self):
            return super().__getitem__(int(key))
        return None


class _NoItems:
    """A scalar a template may index (``{{amount.x}}``): nothing there, as in JavaScript."""

    def __getitem__(self, key: Any) -> Any:
        return None


class _SafeStr(_NoItems, str):
    pass


class _SafeInt(_NoItems, int):
    pass


class _SafeFloat(_NoItems, float):
    def __str__(self) -> str:
        return repr(float(self))


class _SafeDecimal(_NoItems, Decimal):
    pass


class _SafeBool(_NoItems, int):
    """A boolean that prints as JSON does; ``bool`` cannot be subclassed."""

    def __str__(self) -> str:
        return "true" if self else "false"

    __repr__ = __str__


# Each scalar as the template sees it (bool before int: a bool is an int), and back (the safe bool first: it is
# an int subclass that must become a bool again).
_SAFE_SCALARS: tuple[tuple[type, type], ...] = (
    (bool, _SafeBool),
    (str, _SafeStr),
    (int, _SafeInt),
    (float, _SafeFloat),
    (Decimal, _SafeDecimal),
)
_PLAIN_SCALARS: tuple[tuple[type, type], ...] = ((_SafeBool, bool), (str, str), (int, int), (float, float))


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return _SafeDict((str(key), _wrap(item)) for key, item in value.items())
    if isinstance(value, list | tuple):
        return _SafeList(_wrap(item) for item in value)
    for kind, safe in _SAFE_SCALARS:
        if isinstance(value, kind):
            return safe(value)
    if value is None:
        return None
    return _SafeStr(DecimalJSONEncoder(default=json_default).encode(value))


def _unwrap(value: Any) -> Any:
    if isinstance(value, Scope):
        return _unwrap(value.context)
    if isinstance(value, dict):
        return {str(key): _unwrap(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_unwrap(item) for item in value]
    for kind, plain in _PLAIN_SCALARS:
        if isinstance(value, kind):
            return plain(value)
    return value


def _plain(value: Any) -> Any:
    return value.context if isinstance(value, Scope) else value


def _scalar(value: Any) -> Any:
    """A helper argument as plain data, or None for an object or list (``money`` and ``date`` format neither,
    and copying a whole ``@root`` at every call would cost time no output limit sees)."""
    value = _plain(value)
    return None if isinstance(value, dict | list) else _unwrap(value)


# --- bounded output ---------------------------------------------------------------------------------------------
#
# pybars3's compiled code builds its output in ``strlist``s (``result.append(literal)``, ``result.grow(value)``)
# and turns values into text with ``prepare``; both names are globals of the compiled module, which
# ``_compile_checked`` points at ``_Output`` and ``_prepare``. Every piece of output is therefore charged to the
# render's budget as it is produced, and the deadline is checked at the same moment: a template stops during the
# work, within one piece of MAX_OUTPUT_BYTES, not after it. The budget of the render under way is found through a
# context variable, as compiled templates are shared by every render of the process.

_BUDGET: ContextVar[RenderBudget | None] = ContextVar("handlebars_budget", default=None)
# Many small pieces cost far more memory than their text (about 50 bytes each): every this many, they are joined.
COALESCE_PIECES = 1024

# How a value nested in an object or a list reads in ``{{{@root}}}``: Python's repr of the wrappers, as pybars3
# has always printed them (``{'total': 130.1, 'voided': false, 'note': None}``).
_REPR_LEAVES: dict[type, Callable[[Any], str]] = {
    str: str.__repr__,
    _SafeStr: str.__repr__,
    _SafeInt: int.__repr__,
    _SafeFloat: float.__repr__,
    _SafeBool: _SafeBool.__str__,
    type(None): repr,
}
# ``{{{json x}}}`` writes JSON with json.dumps's default separators; the wrappers read as the values they wrap.
_JSON_LEAVES: dict[type, Callable[[Any], str]] = {
    **JSON_LEAVES,
    _SafeStr: JSON_LEAVES[str],
    _SafeInt: JSON_LEAVES[int],
    _SafeFloat: JSON_LEAVES[float],
    _SafeBool: JSON_LEAVES[bool],
}
_JSON_SEPARATORS = (", ", ": ")


class _Output(strlist):  # type: ignore[misc]
    """pybars3's output list, charging the render's budget for every piece it is given (not for the output of a
    nested block, already charged when it was produced), and joining small pieces as it goes."""

    def __init__(self, chunks: Iterable[str] = ()) -> None:
        super().__init__(chunks)
        self.budget = _BUDGET.get()
        self.mark = len(self)  # pieces before this index are joined already

    def append(self, text: str) -> None:
        if self.budget is not None:
            self.budget.charge(text)
        super().append(text)
        if len(self) - self.mark >= COALESCE_PIECES:
            self._coalesce()

    def grow(self, thing: Any) -> None:
        if isinstance(thing, _Output):
            self.extend(thing)
            if len(self) - self.mark >= COALESCE_PIECES:
                self._coalesce()
        elif isinstance(thing, str):
            self.append(str(thing))
        else:
            for element in thing:
                self.grow(element)

    def _coalesce(self) -> None:
        joined = "".join(self[self.mark :])
        del self[self.mark :]
        super().append(joined)
        self.mark = len(self)


def _write_repr(value: Any, writer: BoundedWriter) -> None:
    """``repr(value)`` of the wrapped data (what ``str`` prints for a dict or a list), written piece by piece."""
    parts = writer.parts
    append = parts.append
    if isinstance(value, dict | list):
        # A dict's item is its key and ": ", then its value; a list's, its value alone.
        if isinstance(value, dict):
            opening, closing = "{", "}"
            items: Iterable[tuple[str, Any]] = ((repr(key) + ": ", item) for key, item in value.items())
        else:
            opening, closing = "[", "]"
            items = (("", item) for item in value)
        for head, item in items:
            append(opening + head)
            opening = ", "
            leaf = _REPR_LEAVES.get(type(item))
            if leaf is not None:
                append(leaf(item))
            else:
                _write_repr(item, writer)
            if len(parts) >= FLUSH_PIECES:
                writer.flush()
        append(closing if value else opening + closing)
    else:
        append(repr(value))


def _prepare(value: Any, should_escape: bool) -> Any:
    """pybars3's ``prepare`` (a value as output text), writing an object, a list or a long text within the
    budget: ``{{{@root}}}`` stops at the limit instead of printing the whole data first."""
    budget = _BUDGET.get()
    value = _plain(value)
    if isinstance(value, strlist):
        return value  # a block's output: charged as it was produced, and (as in pybars3) never escaped
    if budget is None:
        return prepare(value, should_escape)
    if isinstance(value, dict | list):
        writer = BoundedWriter(budget, escape=escape if should_escape else None)
        _write_repr(value, writer)
        writer.flush()
        return _Output(writer.chunks)
    text = prepare(value, False)
    if not should_escape:
        return text  # charged (and refused if too long) as it is appended
    if len(text) <= CHUNK_CHARS:
        return escape(text)
    writer = BoundedWriter(budget, escape=escape)  # escaping may make it six times longer: a slice at a time
    writer.write(text)
    writer.flush()
    return _Output(writer.chunks)


# --- compiling and rendering ----------------------------------------------------------------------------------

# pybars3 keeps compiler state in module globals: one compilation at a time.
_compile_lock = threading.Lock()
# Compiled templates by the text pybars3 parses, most recently used last.
_compiled: OrderedDict[str, Callable[..., Any]] = OrderedDict()
_compiled_lock = threading.Lock()


def _compile_checked(source: str) -> Callable[..., Any]:
    """pybars3's compile of a checked ``source``, within the compile bound (``_CompileMeter``). The deadline
    counts the wait for the process's other compiles too, so no request waits longer than it for a compile."""
    meter = _CompileMeter()
    if not _compile_lock.acquire(timeout=max(0.0, meter.deadline - time.monotonic())):
        raise TemplateRefused(
            f"took longer than {COMPILE_TIMEOUT_SECONDS:g} seconds to compile (waiting for other templates): try again"
        )
    try:
        token = _METER.set(meter)
        try:
            function = _Compiler().compile(source)
        finally:
            _METER.reset(token)
    finally:
        _compile_lock.release()
    # compile() registers a module per template in sys.modules; the function keeps its globals alive by itself.
    sys.modules.pop(function.__globals__.get("__name__", ""), None)
    # The compiled code builds its output with these two names (see "bounded output").
    function.__globals__["strlist"] = _Output
    function.__globals__["prepare"] = _prepare
    return function  # type: ignore[no-any-return]


def compile_template(source: object) -> Callable[..., Any]:
    """The compiled template, only after the whitelist accepted it. Raises TemplateRefused.

    Cached per process by the text pybars3 parses (what decides the compiled code), so a cache miss is the only
    way to make a render compile, and it costs at most the compile bound."""
    parsed = check_template(source)
    assert isinstance(source, str)
    with _compiled_lock:
        function = _compiled.get(parsed)
        if function is not None:
            _compiled.move_to_end(parsed)
            return function
    try:
        function = _compile_checked(source)
    except (pybars.PybarsError, RecursionError) as error:
        raise TemplateRefused(f"does not compile: {error}") from error
    with _compiled_lock:
        _compiled[parsed] = function
        while len(_compiled) > COMPILED_CACHE_SIZE:
            _compiled.popitem(last=False)
    return function


def clear_compiled() -> None:
    """Forget every compiled template (tests measure a compile from scratch)."""
    with _compiled_lock:
        _compiled.clear()


class _Helpers:
    """Our helpers and the guarded ``each``; one instance per render, holding its budget."""

    def __init__(self, budget: RenderBudget, config: dict[str, Any]) -> None:
        self.budget = budget
        self.decimal_separator = config.get("decimal_separator", ".")
        self.date_format = config.get("date_format", DEFAULT_DATE_FORMAT)
        self.zone = check_timezone(config["timezone"]) if "timezone" in config else None

    def as_dict(self) -> dict[str, Callable[..., Any]]:
        return {
            "each": self.each,
            "money": self.money,
            "date": self.date,
            "json": self.json,
            # pybars3 defaults that the whitelist already refuses; replaced so they cannot be reached.
            "lookup": self.nothing,
            "log": self.nothing,
        }

    def nothing(self, this: Any, *args: Any, **kwargs: Any) -> None:
        return None

    def each(self, this: Any, options: dict[str, Any], context: Any) -> Any:
        context = _plain(context)
        if isinstance(context, dict):
            items = list(context.items())
        elif isinstance(context, list):
            items = [(None, value) for value in context]
        else:
            items = []
        if not items:
            return options["inverse"](this)
        result = _Output()
        last = len(items) - 1
        for index, (key, value) in enumerate(items):
            # An iteration may produce nothing (nested loops): the deadline is checked here too.
            self.budget.check_time()
            extra: dict[str, Any] = {"key": _SafeStr(key)} if key is not None else {}
            scope = Scope(value, this, options["root"], index=index, first=index == 0, last=index == last, **extra)
            result.grow(options["fn"](scope))
        return result

    def money(self, this: Any, value: Any, currency: Any = None) -> str:
        self.budget.check_time()
        text = format_money(_scalar(value), decimal_separator=self.decimal_separator, currency=_scalar(currency))
        return text or ""

    def date(self, this: Any, value: Any, date_format: Any = None, zone: Any = None) -> str:
        self.budget.check_time()
        chosen_format = self.date_format if date_format is None else str(date_format)
        chosen_zone = self.zone
        if zone is not None:
            try:
                chosen_zone = check_timezone(str(_scalar(zone)))
            except ValueError as error:
                raise TransformError(f"date helper: {error}") from error
        try:
            return format_date(_scalar(value), chosen_format, chosen_zone) or ""
        except ValueError as error:
            raise TransformError(f"date helper: {error}") from error

    def json(self, this: Any, value: Any) -> str:
        # Written within what the budget has left (and charged again where the text is output).
        writer = BoundedWriter(self.budget, charge=False)
        write_json(_plain(value), writer, separators=_JSON_SEPARATORS, leaves=_JSON_LEAVES)
        return writer.text()


class HandlebarsTransform(CheckedTransform):
    code = "handlebars"
    refused = "refused template configuration"

    def check(self, config: dict[str, Any]) -> Callable[..., Any]:
        validate_skip(config)
        content_type_and_extension(config)
        require_choice(config, "decimal_separator", (".", ","), ".")
        check_formats(config)
        try:
            return compile_template(config.get("template"))
        except TemplateRefused as error:
            raise ConfigError("template", str(error)) from error

    def render(self, elements: list[Element], context: RenderContext, config: dict[str, Any]) -> Rendered:
        template = self.checked(config)
        content_type, extension = content_type_and_extension(config)
        budget = RenderBudget()
        kept, skipped = split_skipped(elements, config)
        data = _wrap(template_context(kept, context))
        helpers = _Helpers(budget, config)
        token = _BUDGET.set(budget)
        try:
            output = template(data, helpers=helpers.as_dict(), partials={})
        except TransformError:
            raise
        except (pybars.PybarsError, TypeError, ValueError, KeyError, IndexError, AttributeError) as error:
            raise TransformError(f"template failed: {type(error).__name__}: {error}") from error
        except RecursionError as error:
            raise TransformError("template nests too deeply") from error
        finally:
            _BUDGET.reset(token)
        return Rendered(budget.encode(str(output)), content_type, extension, skipped)
