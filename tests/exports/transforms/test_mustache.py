from __future__ import annotations

import json
from typing import Any

import pytest

from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.mustache import MustacheTransform
from tests.support.sales import elements_of, make_sale, rendered_text

transform = MustacheTransform()


def render(elements: list[Element], context: RenderContext, template: str, **config: Any) -> str:
    return rendered_text(transform, elements, context, {"type": "mustache", "template": template, **config})


def test_text_template_with_sections_and_context(render_context: RenderContext) -> None:
    template = (
        "{{account.name}} {{queue.name}} {{delivery_id}} {{now}}\n"
        "{{#elements}}\n"
        "{{element_key}} {{identifier}} {{source.shop_name}} {{summary.total}}\n"
        "{{#summary.line_items}}\n"
        "  {{name}} x{{quantity}} {{identifier}}\n"
        "{{/summary.line_items}}\n"
        "{{/elements}}\n"
        "{{^elements}}nothing{{/elements}}"
    )
    text = render(elements_of(make_sale("s-1")), render_context, template)
    assert text.splitlines() == [
        "Acme Retail Sales to ERP dlv-1 2024-03-02T03:00:00+00:00",
        "sales/s-1 s-1 Main street 130.1",
        "  T-shirt x2 s-1",
        "  Socks x1 s-1",
        "  Newspaper x1 s-1",
    ]


def test_empty_batch_renders_the_inverted_section(render_context: RenderContext) -> None:
    assert render([], render_context, "{{#elements}}x{{/elements}}{{^elements}}nothing{{/elements}}") == "nothing"


def test_money_date_and_json_derived_names(render_context: RenderContext, sale_element: Element) -> None:
    template = (
        "{{#elements}}{{summary.total__money}}|{{timing.timestamp__date}}|{{timing.timestamp_string__date}}|"
        "{{{summary.taxes__json}}}|{{summary.missing__money}}{{/elements}}"
    )
    text = render(
        [sale_element],
        render_context,
        template,
        decimal_separator=",",
        date_format="%d.%m.%Y %H:%M",
        timezone="Europe/Copenhagen",
    )
    assert text == (
        '130,10|01.03.2024 14:05|01.03.2024 14:05|[{"amount":24.0,"rate":0.25,"name":"VAT 25%","type":"vat"},'
        '{"amount":0,"rate":0,"name":"VAT 0%","type":"vat"}]|'
    )


def test_json_template_embeds_elements_safely(render_context: RenderContext) -> None:
    sale = make_sale("s-1")
    sale["summary"]["comment"] = 'He said "hi"\n</script>'
    template = (
        '{ {{#elements}}"{{element_key}}": '
        '{"comment": "{{summary.comment}}", "sale": {{{element_json}}}}{{/elements}} }'
    )
    config = {"type": "mustache", "template": template, "content_type": "application/json"}
    rendered = transform.render(elements_of(sale), render_context, config)
    assert rendered.extension == "json"
    output = json.loads(rendered.content)
    assert output["sales/s-1"]["comment"] == 'He said "hi"\n</script>'
    assert output["sales/s-1"]["sale"] == {**sale, "element_key": "sales/s-1"}


def test_html_escaping_by_content_type(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["line_items"][0]["name"] = "<b>&</b>"
    template = "{{#elements}}{{#summary.line_items}}<li>{{name}}</li>{{/summary.line_items}}{{/elements}}"
    html_text = render(elements_of(sale), render_context, template, content_type="text/html")
    assert html_text.startswith("<li>&lt;b&gt;&amp;&lt;/b&gt;</li>")
    plain_text = render(elements_of(sale), render_context, template)
    assert plain_text.startswith("<li><b>&</b></li>")
    raw = render(
        elements_of(sale),
        render_context,
        "{{#elements}}{{{summary.line_items.0.name}}}{{/elements}}",
        content_type="text/html",
    )
    assert raw == ""  # mustache names are keys, not list indexes


def test_names_are_only_looked_up_as_keys(render_context: RenderContext, sale_element: Element) -> None:
    template = "{{#elements}}{{identifier.upper}}{{summary.items}}{{summary.__class__}}{{payments.pop}}{{/elements}}"
    assert render([sale_element], render_context, template) == ""


def test_register_close_statement(render_context: RenderContext, statement_element: Element) -> None:
    template = (
        "{{#elements}}{{#reconciliations}}{{payment_type_identifier}};{{currency_code}};{{counted__money}}\n"
        "{{/reconciliations}}{{timing.timestamp__date}}{{/elements}}"
    )
    text = render([statement_element], render_context, template)
    assert text.splitlines() == [
        "cash;DKK;1520.50",
        "cash;EUR;20.00",
        "card.external;DKK;4200.75",
        "2024-03-01 22:00:00",
    ]


def test_skip_if(render_context: RenderContext) -> None:
    elements = elements_of(make_sale("s-1"), make_sale("s-2", voided=True))
    config = {
        "type": "mustache",
        "template": "{{#elements}}{{identifier}}{{/elements}}",
        "skip_if": [{"path": "voided", "equals": True}],
    }
    rendered = transform.render(elements, render_context, config)
    assert (rendered.content, rendered.skipped) == (b"s-1", ["sales/s-2"])


@pytest.mark.usefixtures("output_limit_1000")
def test_output_size_limit(render_context: RenderContext) -> None:
    elements = elements_of(*[make_sale(f"s-{n}") for n in range(20)])
    with pytest.raises(TransformError, match="larger than 1000 bytes"):
        render(elements, render_context, "{{#elements}}{{#elements}}{{{element_json}}}{{/elements}}{{/elements}}")


@pytest.mark.usefixtures("render_timeout_50ms")
def test_long_render_is_stopped(render_context: RenderContext) -> None:
    sale = make_sale()
    elements = [Element(f"sales/{n}", sale) for n in range(200)]
    with pytest.raises(TransformError, match="longer than"):
        render(
            elements, render_context, "{{#elements}}{{#elements}}{{#elements}}{{/elements}}{{/elements}}{{/elements}}"
        )


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({}, "template"),
        ({"template": ["x"]}, "template"),
        ({"template": "{{#a}}"}, "template"),
        ({"template": "x", "escape": "url"}, "escape"),
        ({"template": "x", "content_type": "text html"}, "content_type"),
        ({"template": "x", "date_format": 5}, "date_format"),
        ({"template": "x", "skip_voided": 1}, "skip_voided"),
    ],
)
def test_validate_names_the_bad_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transform.validate({"type": "mustache", **config})
    assert raised.value.field == field
