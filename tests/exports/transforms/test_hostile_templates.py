"""Templates staff could write to run code or exhaust the worker; each must be refused on save and at render."""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime

import pybars
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.handlebars import (
    MAX_NESTING,
    MAX_TAGS,
    MAX_TEMPLATE_LENGTH,
    MAX_WHITESPACE_RUN,
    HandlebarsTransform,
    TemplateRefused,
    _Compiler,
    check_template,
)
from exports.transforms.mustache import MAX_NESTING as MUSTACHE_MAX_NESTING
from exports.transforms.mustache import MAX_TEMPLATE_LENGTH as MUSTACHE_MAX_LENGTH
from exports.transforms.mustache import MustacheTransform

PAYLOAD = "'+str(__import__('os').getpid())+'"

HOSTILE_HANDLEBARS = [
    # segment literals pasted into generated Python
    "{{['+str(6*7)+']}}",
    f"{{{{[{PAYLOAD}]}}}}",
    f"{{{{summary.[{PAYLOAD}]}}}}",
    f"{{{{{{[{PAYLOAD}]}}}}}}",
    f"{{{{&[{PAYLOAD}]}}}}",
    f"{{{{~[{PAYLOAD}]~}}}}",
    f"{{ {{{{~[{PAYLOAD}]}}}}",
    f"{{{{#each [{PAYLOAD}]}}}}x{{{{/each}}}}",
    f"{{{{#with summary}}}}{{{{this/[{PAYLOAD}]}}}}{{{{/with}}}}",
    f"{{{{! harmless comment }}}}{{{{[{PAYLOAD}]}}}}",
    # quotes and backslashes in arguments
    '{{money "x\\"+str(1)+\\""}}',
    "{{money 'x'}}",
    "{{date timing.timestamp \"%Y'+str(1)+'\"}}",
    '{{date timing.timestamp "%Y\\n"}}',
    "{{identifier\\x}}",
    '{{a"b}}',
    '{{"literal"}}',
    # dunder and private attribute paths
    "{{__class__}}",
    "{{this.__class__.__mro__}}",
    "{{elements.__class__}}",
    "{{__import__}}",
    "{{@root.__class__}}",
    "{{../../__globals__}}",
    "{{@_parent}}",
    "{{_private}}",
    # partials, raw blocks, inverted and implicit sections
    "{{> partial}}",
    '{{> (lookup . "x")}}',
    "{{#> layout}}x{{/layout}}",
    "{{{{raw}}}}{{x}}{{{{/raw}}}}",
    "{{^elements}}none{{/elements}}",
    "{{#elements}}x{{/elements}}",
    "{{#each elements}}x{{^}}y{{/each}}",
    "{{#each elements as |sale|}}{{sale.identifier}}{{/each}}",
    # helpers: unknown, built-in escape hatches, subexpressions, hash arguments, arity, bare names
    "{{lookup elements 0}}",
    "{{log identifier}}",
    "{{format identifier}}",
    "{{money (json this)}}",
    '{{money summary.total sep=","}}',
    '{{money summary.total "EUR" "x"}}',
    "{{json}}",
    "{{each}}",
    "{{#money summary.total}}x{{/money}}",
    "{{#each}}x{{/each}}",
    "{{#each elements summary}}x{{/each}}",
    # structure
    "{{#each elements}}x",
    "{{#if voided}}x{{/each}}",
    "{{else}}",
    "{{#if voided}}a{{else}}b{{else}}c{{/if}}",
    "{{}}",
    "{{identifier",
    "{{{identifier}}",
    "{{identifier\n}}",
    "{{\uff49dentifier}}",  # fullwidth i
    "{{identifier}}\x00",
    "".join("{{#if voided}}" for _ in range(MAX_NESTING + 1)) + "".join("{{/if}}" for _ in range(MAX_NESTING + 1)),
    "x" * (MAX_TEMPLATE_LENGTH + 1),
    "{{identifier}}" * (MAX_TAGS + 1),
    "{{identifier}}" + " " * (MAX_WHITESPACE_RUN + 1) + "{{~identifier}}",
]


@pytest.mark.parametrize("template", HOSTILE_HANDLEBARS)
def test_hostile_handlebars_template_is_refused_on_save(template: str) -> None:
    with pytest.raises(ConfigError) as raised:
        HandlebarsTransform().validate({"type": "handlebars", "template": template})
    assert raised.value.field == "template"


@pytest.mark.parametrize("template", HOSTILE_HANDLEBARS)
def test_hostile_handlebars_template_is_refused_at_render(
    template: str, render_context: RenderContext, sale_element: Element
) -> None:
    with pytest.raises(TransformError):
        HandlebarsTransform().render([sale_element], render_context, {"type": "handlebars", "template": template})


HOSTILE_MUSTACHE = [
    "{{> partial}}",
    "{{#elements}}{{> /etc/passwd}}{{/elements}}",
    "{{=<% %>=}}<%> partial%>",
    "{{#elements}}x",
    "{{/elements}}",
    "{{#a}}{{/b}}",
    "".join("{{#a}}" for _ in range(MUSTACHE_MAX_NESTING + 2))
    + "".join("{{/a}}" for _ in range(MUSTACHE_MAX_NESTING + 2)),
    "x" * (MUSTACHE_MAX_LENGTH + 1),
    " " * 99_000 + "x",
    "{{identifier}} {{" + "x" * 1000,
    "{{" * 30_000 + "}}",
    "{{=| |=}}|identifier|",
]


@pytest.mark.parametrize("template", HOSTILE_MUSTACHE)
def test_hostile_mustache_template_is_refused(
    template: str, render_context: RenderContext, sale_element: Element
) -> None:
    config = {"type": "mustache", "template": template}
    with pytest.raises(ConfigError) as raised:
        MustacheTransform().validate(config)
    assert raised.value.field == "template"
    with pytest.raises(TransformError):
        MustacheTransform().render([sale_element], render_context, config)


@pytest.mark.parametrize("template", HOSTILE_HANDLEBARS)
def test_the_whitelist_refuses_before_pybars_compiles(template: str) -> None:
    with pytest.raises(TemplateRefused):
        check_template(template)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(alphabet="{}[]'\"\\ #/.^>&~!=()|@_aeisx0\n", max_size=40))
def test_random_templates_are_refused_or_render_safely(template: str) -> None:
    # Whatever staff type, the outcome is a refusal or a render that fails only with our own errors.
    transform = HandlebarsTransform()
    config = {"type": "handlebars", "template": template}
    try:
        transform.validate(config)
    except ConfigError:
        return
    context = RenderContext(queue={}, account={}, now=datetime(2024, 1, 1, tzinfo=UTC), delivery_id="d")
    with contextlib.suppress(TransformError):
        transform.render([Element("k", {"a": {"x": 1}, "s": "text"})], context, config)


def test_backtracking_whitespace_template_is_handled_quickly() -> None:
    # Plain pybars3 needs minutes for this (its whitespace-control regex backtracks exponentially): a
    # regression shows as this test hanging, not as a timing assertion.
    line = "\n" + "{{#if voided}}   {{/if}}   " * 40 + "x"
    HandlebarsTransform().validate({"type": "handlebars", "template": line})


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            ["{{#a}}", "{{/a}}", "{{!c}}", "{{else}}", "{{~x}}", "{{x~}}", " ", "\t", "\n", "\r\n", "y", "{{z}}"]
        ),
        max_size=8,
    )
)
def test_linear_whitespace_control_matches_pybars(pieces: list[str]) -> None:
    source = "".join(pieces)
    assert _Compiler().whitespace_control(source) == pybars.Compiler().whitespace_control(source)
