from __future__ import annotations

import copy
import json
from typing import Any

import pybars
import pytest

from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.handlebars import MAX_NESTING, MAX_TEMPLATE_LENGTH, HandlebarsTransform
from tests.support.sales import elements_of, make_sale, rendered_text

transform = HandlebarsTransform()


def render(elements: list[Element], context: RenderContext, template: str, **config: Any) -> str:
    return rendered_text(transform, elements, context, {"type": "handlebars", "template": template, **config})


def test_json_template_over_a_batch(render_context: RenderContext) -> None:
    template = (
        '{ {{#each elements}}"{{element_key}}": {"total": "{{money summary.total}}", '
        '"day": "{{date timing.timestamp "%Y-%m-%d"}}", "items": {{summary.line_items.length}}, '
        '"sale": {{{json this}}}}{{#unless @last}}, {{/unless}}{{/each}} }'
    )
    config = {"type": "handlebars", "template": template, "content_type": "application/json"}
    sales = elements_of(make_sale("s-1"), make_sale("s-2"))
    rendered = transform.render(sales, render_context, config)
    assert (rendered.content_type, rendered.extension) == ("application/json", "json")
    output = json.loads(rendered.content)
    assert list(output) == ["sales/s-1", "sales/s-2"]
    assert output["sales/s-1"]["total"] == "130.10"
    assert output["sales/s-1"]["day"] == "2024-03-01"
    assert output["sales/s-1"]["items"] == 3
    assert output["sales/s-2"]["sale"] == {**make_sale("s-2"), "element_key": "sales/s-2"}


def test_html_template_escapes_values(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["line_items"][0]["name"] = "<script>alert(1)</script>"
    text = render(
        elements_of(sale),
        render_context,
        "<ul>{{#each elements}}{{#each summary.line_items}}<li>{{name}}</li>{{/each}}{{/each}}</ul>",
        content_type="text/html",
    )
    assert text == "<ul><li>&lt;script&gt;alert(1)&lt;/script&gt;</li><li>Socks</li><li>Newspaper</li></ul>"


def test_context_fields_parent_paths_and_loop_data(render_context: RenderContext, sale_element: Element) -> None:
    template = (
        "{{account.identifier}}/{{queue.name}}/{{delivery_id}}/{{now}}\n"
        "{{#each elements}}{{#each summary.line_items}}{{@index}}:{{../identifier}}:{{name}}"
        "{{#if @first}}*{{/if}}{{#each taxes}}[{{rate}}]{{/each}};{{/each}}{{/each}}"
    )
    text = render([sale_element], render_context, template)
    assert text.splitlines() == [
        "acme/Sales to ERP/dlv-1/2024-03-02T03:00:00+00:00",
        "0:sale-1:T-shirt*[0.25];1:sale-1:Socks[0.25];2:sale-1:Newspaper[0];",
    ]


def test_money_and_date_helpers_take_options(render_context: RenderContext, sale_element: Element) -> None:
    template = (
        '{{#each elements}}{{money summary.total}}|{{money summary.total "JPY"}}|'
        '{{date timing.timestamp}}|{{date timing.timestamp "%H:%M" "Europe/Copenhagen"}}|'
        '{{date timing.timestamp_string "%d.%m.%Y %H:%M"}}|{{money nothing}}{{/each}}'
    )
    text = render([sale_element], render_context, template, decimal_separator=",", date_format="%Y/%m/%d")
    assert text == "130,10|130|2024/03/01|14:05|01.03.2024 14:05|"


def test_register_close_statement_template(render_context: RenderContext, statement_element: Element) -> None:
    template = (
        "{{#each elements}}{{#each reconciliations}}"
        "{{payment_type_identifier}} {{currency_code}} {{money counted currency_code}} {{transaction_count}}\n"
        '{{/each}}{{date timing.timestamp "%Y-%m-%d %H:%M:%S"}}{{/each}}'
    )
    text = render([statement_element], render_context, template, content_type="text/plain")
    assert text.splitlines() == [
        "cash DKK 1520.50 12",
        "cash EUR 20.00 1",
        "card.external DKK 4200.75 30",
        "2024-03-01 22:00:00",
    ]


def test_xml_content_type_gets_the_xml_extension(render_context: RenderContext, sale_element: Element) -> None:
    config = {
        "type": "handlebars",
        "template": '<sales>{{#each elements}}<sale id="{{identifier}}"/>{{/each}}</sales>',
        "content_type": "application/xml",
    }
    rendered = transform.render([sale_element], render_context, config)
    assert (rendered.content, rendered.extension) == (b'<sales><sale id="sale-1"/></sales>', "xml")


def test_data_methods_are_never_called(render_context: RenderContext) -> None:
    sale = make_sale()
    pristine = copy.deepcopy(sale)
    template = (
        "{{#each elements}}{{#with summary}}{{setdefault}}{{clear}}{{items}}{{/with}}"
        "{{#with identifier}}{{upper}}{{format}}{{/with}}{{#with payments}}{{append}}{{pop}}{{/with}}"
        "{{#with voided}}{{conjugate}}{{real}}{{/with}}{{summary.total.hex}}{{/each}}"
    )
    element = Element("sales/sale-1", sale)
    assert render([element], render_context, template) == ""
    assert sale == pristine


def test_skip_voided(render_context: RenderContext) -> None:
    elements = elements_of(make_sale("s-1"), make_sale("s-2", voided=True))
    config = {"type": "handlebars", "template": "{{#each elements}}{{identifier}}{{/each}}", "skip_voided": True}
    assert transform.skip_reason(elements[1], config) == "voided"
    rendered = transform.render(elements, render_context, config)
    assert (rendered.content, rendered.skipped) == (b"s-1", ["sales/s-2"])


@pytest.mark.usefixtures("output_limit_1000")
def test_huge_each_output_is_stopped(render_context: RenderContext) -> None:
    elements = elements_of(*[make_sale(f"s-{n}") for n in range(30)])
    template = (
        "{{#each elements}}{{#each ../elements}}{{#each ../../elements}}{{{json this}}}{{/each}}{{/each}}{{/each}}"
    )
    with pytest.raises(TransformError, match="larger than 1000 bytes"):
        render(elements, render_context, template)


@pytest.mark.usefixtures("render_timeout_50ms")
def test_long_render_is_stopped(render_context: RenderContext) -> None:
    sale = make_sale()
    elements = [Element(f"sales/{n}", sale) for n in range(300)]
    template = "{{#each elements}}{{#each ../elements}}{{#each ../../elements}}{{/each}}{{/each}}{{/each}}"
    with pytest.raises(TransformError, match="longer than"):
        render(elements, render_context, template)


def test_plain_pybars_would_execute_the_exploit() -> None:
    # Proves the corpus is real: unguarded pybars3 0.9.7 evaluates Python pasted into a segment literal.
    unguarded = pybars.Compiler().compile("{{['+str(6*7)+']}}")
    assert unguarded({"42": "executed"}) == "executed"


def test_the_exploit_is_refused_on_save_and_at_render(render_context: RenderContext, sale_element: Element) -> None:
    config = {"type": "handlebars", "template": "{{['+str(6*7)+']}}"}
    with pytest.raises(ConfigError) as raised:
        transform.validate(config)
    assert raised.value.field == "template"
    with pytest.raises(TransformError):
        transform.render([sale_element], render_context, config)


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({}, "template"),
        ({"template": ""}, "template"),
        ({"template": 5}, "template"),
        ({"template": "x", "content_type": "json"}, "content_type"),
        ({"template": "x", "extension": ".txt"}, "extension"),
        ({"template": "x", "decimal_separator": "|"}, "decimal_separator"),
        ({"template": "x", "date_format": ""}, "date_format"),
        ({"template": "x", "timezone": "Europe/Atlantis"}, "timezone"),
        ({"template": "x", "skip_if": "voided"}, "skip_if"),
    ],
)
def test_validate_names_the_bad_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transform.validate({"type": "handlebars", **config})
    assert raised.value.field == field


def test_limits_are_documented_constants() -> None:
    assert MAX_TEMPLATE_LENGTH >= 10_000
    assert MAX_NESTING >= 4
