"""Template output amplification: a template that prints a large value many times is stopped while it
renders, by output size and by time, with its memory within a small multiple of the output limit.

Nothing here measures wall time. Memory is measured with tracemalloc, against a render of the same template
shape that prints something small (so parsing and the data's own copies cancel out); time runs on a fake clock
that advances at every reading, so the deadline passes after a known number of checks.
"""

from __future__ import annotations

import json
import tracemalloc
from decimal import Decimal
from typing import Any

import pytest

from core.jsonenc import DecimalJSONEncoder
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import Element, RenderContext, Transform, TransformError
from exports.transforms.common import json_default
from exports.transforms.handlebars import HandlebarsTransform
from exports.transforms.mustache import MustacheTransform
from tests.support.clocks import FakeClock
from tests.support.sales import make_large_sale

LIMIT = 64 * 1024
# Produced text may take two bytes a character in memory (the sale's names hold an en dash), and a render holds
# a chunk in the making besides: four times the limit is room enough, and less than one copy of the sale as
# text (about 200 KB, 400 KB in memory), which is what every repetition costs when nothing checks the size.
MEMORY_BOUND = 4 * LIMIT
TIMEOUT = 5.0

HANDLEBARS = HandlebarsTransform()
MUSTACHE = MustacheTransform()

# name -> (transform, the attack, a template printing something small). Mustache parses its template in the
# render, so its baseline has the attack's shape; Handlebars compiles it (cached) before the render is measured.
# A Handlebars template of 1,000 such tags costs more than a compile may (MAX_COMPILE_UNITS): 300 copies of the
# sale (60 MB) are as far past the output limit.
ATTACKS = {
    "handlebars {{{@root}}}": (HANDLEBARS, "{{{@root}}}" * 300, "{{{delivery_id}}}"),
    "handlebars {{@root}}": (HANDLEBARS, "{{@root}}" * 300, "{{delivery_id}}"),
    "handlebars {{{json @root}}}": (HANDLEBARS, "{{{json @root}}}" * 300, "{{{json delivery_id}}}"),
    "mustache {{{elements}}}": (MUSTACHE, "{{{elements}}}" * 1000, "{{{delivery_id}}}" * 1000),
    "mustache {{{element_json}}}": (
        MUSTACHE,
        "{{#elements}}" + "{{{element_json}}}" * 1000 + "{{/elements}}",
        "{{#elements}}" + "{{{element_key}}}" * 1000 + "{{/elements}}",
    ),
}


@pytest.fixture
def large_sale() -> list[Element]:
    return [Element("sales/sale-large", make_large_sale())]


@pytest.fixture
def output_limit_64k(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("exports.transforms.common.MAX_OUTPUT_BYTES", LIMIT)


@pytest.fixture(autouse=True)
def _no_compile_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    """The templates here compile within the steps allowed; a loaded machine must not turn one into a refusal at
    the compile deadline (tests/exports/transforms/test_compile_bounds.py tests that)."""
    monkeypatch.setattr("exports.transforms.handlebars.COMPILE_TIMEOUT_SECONDS", 3600)


@pytest.fixture
def render_timeout_5s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("exports.transforms.common.RENDER_TIMEOUT_SECONDS", TIMEOUT)


def measure(
    transform: Transform, elements: list[Element], context: RenderContext, template: str
) -> tuple[int, TransformError | None]:
    """The peak of memory a render allocates, and the TransformError that stopped it (if one did)."""
    config = {"type": transform.code, "template": template}
    transform.validate(config)  # a Handlebars template is compiled (and cached) here, before measuring
    tracemalloc.start()
    try:
        try:
            transform.render(elements, context, config)
        except TransformError as raised:
            return tracemalloc.get_traced_memory()[1], raised
        return tracemalloc.get_traced_memory()[1], None
    finally:
        tracemalloc.stop()


# --- output size -----------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("output_limit_64k")
@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_large_value_printed_a_thousand_times_stops_at_the_output_limit_while_rendering(
    name: str, large_sale: list[Element], render_context: RenderContext
) -> None:
    # Handlebars must stop at the output limit while it prints, not after: 1,000 copies of this sale are 200 MB.
    # Mustache and the json helper must look at the size before a whole copy is serialised.
    transform, attack, small = ATTACKS[name]
    baseline, _ = measure(transform, large_sale, render_context, small)
    peak, error = measure(transform, large_sale, render_context, attack)
    assert error is not None and f"larger than {LIMIT} bytes" in str(error)
    assert peak - baseline < MEMORY_BOUND


@pytest.mark.usefixtures("output_limit_64k")
@pytest.mark.parametrize(
    ("transform", "template"),
    [
        (
            HANDLEBARS,
            "{{#each elements}}{{#each summary.line_items}}{{#each ../summary.line_items}}{{@index}}"
            "{{/each}}{{/each}}{{/each}}",
        ),
        (
            MUSTACHE,
            "{{#elements}}{{#summary.line_items}}{{#summary.line_items}}{{quantity}}"
            "{{/summary.line_items}}{{/summary.line_items}}{{/elements}}",
        ),
    ],
    ids=["handlebars", "mustache"],
)
def test_many_small_pieces_cost_no_more_memory_than_a_few_times_their_text(
    transform: Transform, template: str, large_sale: list[Element], render_context: RenderContext
) -> None:
    # Pieces of one to three characters, kept one by one, cost some 60 bytes each: 25 times their text.
    baseline, _ = measure(transform, large_sale, render_context, "{{delivery_id}}")
    peak, error = measure(transform, large_sale, render_context, template)
    assert error is not None and f"larger than {LIMIT} bytes" in str(error)
    assert peak - baseline < MEMORY_BOUND


def test_money_and_date_do_not_copy_an_object_they_are_given(
    large_sale: list[Element], render_context: RenderContext
) -> None:
    # They format neither an object nor a list, but copied it first: {{money @root}} x 1,000 ran for 20 s over
    # this sale and produced nothing that a limit would see.
    template = "{{money @root}}{{date @root}}{{money elements}}" * 20
    baseline, _ = measure(HANDLEBARS, large_sale, render_context, "{{money delivery_id}}" * 60)
    peak, error = measure(HANDLEBARS, large_sale, render_context, template)
    assert error is None
    assert peak - baseline < MEMORY_BOUND


# --- time -----------------------------------------------------------------------------------------------------


@pytest.mark.usefixtures("render_timeout_5s")
@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_large_value_printed_a_thousand_times_stops_at_the_deadline_while_rendering(
    name: str, large_sale: list[Element], render_context: RenderContext, fake_clock: FakeClock
) -> None:
    # The clock advances one second at every reading: the render must read it while it writes (not only between
    # values, or at the end) and stop at the first reading past the deadline, having written less than one copy
    # of the sale. Read only between copies, it would let five whole copies through first.
    transform, attack, small = ATTACKS[name]
    fake_clock.step = 0.0  # the baseline runs with time standing still
    baseline, _ = measure(transform, large_sale, render_context, small)
    fake_clock.step, fake_clock.readings = 1.0, 0
    peak, error = measure(transform, large_sale, render_context, attack)
    assert error is not None and f"longer than {TIMEOUT:g} seconds" in str(error)
    assert fake_clock.readings <= TIMEOUT + 2  # the deadline is set at the first reading, passed at the seventh
    assert peak - baseline < len(json.dumps(large_sale[0].entity, ensure_ascii=False))


# --- what objects and values print, pinned --------------------------------------------------------------------

SAMPLE = {
    "a": [1, 2.5, True, False, None, "x'y", 'q"', Decimal("1.50"), {}, []],
    "b": {"c": [], "d": {"e": "æøå \u2013 \u2028 <&>"}},
    "n": -0.0,
}


def test_an_object_prints_as_it_always_has(render_context: RenderContext) -> None:
    # Pinned, as stored templates print it: {{{x}}} of an object or a list is the Python repr of the data
    # (booleans as JSON writes them), {{x}} the same HTML-escaped; the bounded writer must not change it.
    config = {"type": "handlebars", "template": "{{#each elements}}{{{this}}}|{{{a}}}|{{{b.d}}}|{{b}}{{/each}}"}
    text = HANDLEBARS.render([Element("k", SAMPLE)], render_context, config).content.decode()
    assert text == (
        "{'a': [1, 2.5, true, false, None, \"x'y\", 'q\"', Decimal('1.50'), {}, []], "
        "'b': {'c': [], 'd': {'e': 'æøå \u2013 \\u2028 <&>'}}, 'n': -0.0, 'element_key': 'k'}"
        "|[1, 2.5, true, false, None, \"x'y\", 'q\"', Decimal('1.50'), {}, []]"
        "|{'e': 'æøå \u2013 \\u2028 <&>'}"
        "|{&#x27;c&#x27;: [], &#x27;d&#x27;: {&#x27;e&#x27;: &#x27;æøå \u2013 \\u2028 &lt;&amp;&gt;&#x27;}}"
    )


def test_json_helper_element_json_and_objects_print_what_json_dumps_prints(render_context: RenderContext) -> None:
    element = Element("k", SAMPLE)
    expected = {**SAMPLE, "element_key": "k"}
    config = {"type": "handlebars", "template": "{{#each elements}}{{{json this}}}{{/each}}"}
    handlebars = HANDLEBARS.render([element], render_context, config).content.decode()
    assert handlebars == json.dumps(expected, cls=DecimalJSONEncoder, default=json_default, ensure_ascii=False)
    config = {"type": "mustache", "template": "{{#elements}}{{{element_json}}}|{{{b__json}}}|{{b}}{{/elements}}"}
    mustache = MUSTACHE.render([element], render_context, config).content.decode()
    compact: dict[str, Any] = {
        "cls": DecimalJSONEncoder,
        "default": json_default,
        "ensure_ascii": False,
        "separators": (",", ":"),
    }
    assert mustache == "|".join(json.dumps(value, **compact) for value in (expected, SAMPLE["b"], SAMPLE["b"]))


# --- the configured transforms: simple JSON and CSV -------------------------------------------------------------

SIMPLE_JSON_ATTACK = {
    "type": "simple_json",
    "fields": {f"f{n}": "x{summary|text}" * 100 for n in range(500)},
}
SIMPLE_JSON_SMALL = {"type": "simple_json", "fields": {f"f{n}": "x{identifier}" * 100 for n in range(500)}}
CSV_ATTACK = {"type": "csv", "columns": [{"header": f"c{n}", "path": "summary"} for n in range(200)]}
CSV_SMALL = {"type": "csv", "columns": [{"header": f"c{n}", "path": "identifier"} for n in range(200)]}


def measure_config(
    transform: Transform, elements: list[Element], context: RenderContext, config: dict[str, Any]
) -> tuple[int, TransformError | None]:
    transform.validate(config)
    tracemalloc.start()
    try:
        try:
            transform.render(elements, context, config)
        except TransformError as raised:
            return tracemalloc.get_traced_memory()[1], raised
        return tracemalloc.get_traced_memory()[1], None
    finally:
        tracemalloc.stop()


@pytest.mark.usefixtures("output_limit_64k")
@pytest.mark.parametrize(
    ("code", "attack", "small"),
    [("simple_json", SIMPLE_JSON_ATTACK, SIMPLE_JSON_SMALL), ("csv", CSV_ATTACK, CSV_SMALL)],
    ids=["simple_json: 500 fields of 100 objects in text", "csv: 200 columns of an object"],
)
def test_a_configured_transform_printing_an_object_many_times_stops_at_the_output_limit(
    code: str, attack: dict[str, Any], small: dict[str, Any], large_sale: list[Element], render_context: RenderContext
) -> None:
    # Unchecked, simple JSON serialises the object for every placeholder of every field (50,000 copies,
    # gigabytes), and a CSV checked every 500 rows holds 200 copies in its first row. A render stops within one
    # value past the limit: what it costs is at most that one value's serialisation in the making (its pieces
    # and their join, two bytes a character here), not copies of it.
    transform = TRANSFORMS[code]
    one_copy = len(json.dumps(large_sale[0].entity, ensure_ascii=False))
    baseline, _ = measure_config(transform, large_sale, render_context, small)
    peak, error = measure_config(transform, large_sale, render_context, attack)
    assert error is not None and f"larger than {LIMIT} bytes" in str(error)
    assert peak - baseline < MEMORY_BOUND + 16 * one_copy  # not 200 copies (CSV) or 50,000 (simple JSON)


def test_simple_json_writes_what_json_dumps_wrote(render_context: RenderContext) -> None:
    config = {"type": "simple_json", "fields": {"all": "{b}", "text": "<{b}|{a}>", "n": "{n}", "a": "{a}"}}
    out = TRANSFORMS["simple_json"].render([Element("k", SAMPLE)], render_context, config).content.decode()
    text = "<" + json.dumps(SAMPLE["b"], ensure_ascii=False, separators=(",", ":")) + "|"
    text += (
        json.dumps(SAMPLE["a"], cls=DecimalJSONEncoder, default=json_default, ensure_ascii=False, separators=(",", ":"))
        + ">"
    )
    expected = {"k": {"all": SAMPLE["b"], "text": text, "n": -0.0, "a": SAMPLE["a"]}}
    assert out == json.dumps(expected, cls=DecimalJSONEncoder, default=json_default, ensure_ascii=False)
