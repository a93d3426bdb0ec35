from __future__ import annotations

import json
from typing import Any

import pytest

from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.simple_json import SimpleJsonTransform
from tests.support.sales import elements_of, make_sale

transform = SimpleJsonTransform()


def render(elements: list[Element], context: RenderContext, **config: Any) -> Any:
    config = {"type": "simple_json", **config}
    transform.validate(config)
    rendered = transform.render(elements, context, config)
    assert (rendered.content_type, rendered.extension) == ("application/json", "json")
    return json.loads(rendered.content)


def test_single_placeholder_keeps_the_json_type(render_context: RenderContext, sale_element: Element) -> None:
    output = render(
        [sale_element],
        render_context,
        fields={
            "total": "{summary.total}",
            "shop": "{source.shop_id}",
            "voided": "{voided}",
            "first_tax": "{summary.taxes[0]}",
            "item": "{summary.line_items[1].name}",
        },
    )
    assert output == {
        "sales/sale-1": {
            "total": 130.1,
            "shop": "shop-1",
            "voided": False,
            "first_tax": {"amount": 24.0, "rate": 0.25, "name": "VAT 25%", "type": "vat"},
            "item": "Socks",
        }
    }


def test_mixed_text_renders_a_string(render_context: RenderContext, sale_element: Element) -> None:
    output = render(
        [sale_element],
        render_context,
        fields={"note": "Sale {identifier} of {summary.total} in {{braces}}", "blank": "x{summary.nothing}y"},
    )
    assert output["sales/sale-1"] == {"note": "Sale sale-1 of 130.1 in {braces}", "blank": "xy"}


def test_formats_money_number_and_date(render_context: RenderContext, sale_element: Element) -> None:
    output = render(
        [sale_element],
        render_context,
        decimal_separator=",",
        timezone="Europe/Copenhagen",
        fields={
            "amount": "{summary.total|money}",
            "rate": "{summary.taxes[0].rate|number}",
            "day": "{timing.timestamp|date:%Y-%m-%d %H:%M}",
            "label": "{summary.total|money} DKK",
        },
    )
    assert output["sales/sale-1"] == {
        "amount": "130,10",
        "rate": "0,25",
        "day": "2024-03-01 14:05",
        "label": "130,10 DKK",
    }


def test_missing_path_is_null_and_drop_empty_drops_it(render_context: RenderContext, sale_element: Element) -> None:
    fields = {"shop": "{source.shop_id}", "customer": "{summary.customer.identifier}"}
    assert render([sale_element], render_context, fields=fields)["sales/sale-1"] == {
        "shop": "shop-1",
        "customer": None,
    }
    assert render([sale_element], render_context, fields=fields, drop_empty=True)["sales/sale-1"] == {"shop": "shop-1"}


def test_batch_output_is_keyed_by_element_key_in_order(render_context: RenderContext) -> None:
    output = render(elements_of(make_sale("s-1"), make_sale("s-2")), render_context, fields={"id": "{identifier}"})
    assert list(output.items()) == [("sales/s-1", {"id": "s-1"}), ("sales/s-2", {"id": "s-2"})]


def test_skip_if_skips_matching_elements(render_context: RenderContext) -> None:
    elements = elements_of(make_sale("s-1"), make_sale("s-2", voided=True))
    config = {"type": "simple_json", "fields": {"id": "{identifier}"}, "skip_if": {"path": "voided", "equals": True}}
    assert transform.skip_reason(elements[1], config) == "voided equals true"
    rendered = transform.render(elements, render_context, config)
    assert json.loads(rendered.content) == {"sales/s-1": {"id": "s-1"}}
    assert rendered.skipped == ["sales/s-2"]


def test_skip_if_compares_strictly(sale_element: Element) -> None:
    # voided is false; 0 == False in Python but not here.
    config = {"type": "simple_json", "fields": {"id": "{identifier}"}, "skip_if": {"path": "voided", "equals": 0}}
    assert transform.skip_reason(sale_element, config) is None


@pytest.mark.usefixtures("output_limit_1000")
def test_output_size_limit(render_context: RenderContext) -> None:
    with pytest.raises(TransformError, match="larger than"):
        render(elements_of(*[make_sale(f"s-{n}") for n in range(50)]), render_context, fields={"id": "{identifier}"})


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({}, "fields"),
        ({"fields": {}}, "fields"),
        ({"fields": ["{identifier}"]}, "fields"),
        ({"fields": {"a": "{identifier}", "b": 5}}, "fields.b"),
        ({"fields": {"note": "Sale {identifier"}}, "fields.note"),
        ({"fields": {"note": "Sale identifier}"}}, "fields.note"),
        ({"fields": {"x": "{summary..total}"}}, "fields.x"),
        ({"fields": {"x": "{}"}}, "fields.x"),
        ({"fields": {"x": "{summary.total|euro}"}}, "fields.x"),
        ({"fields": {"x": "{summary.total|date:}"}}, "fields.x"),
        ({"fields": {"x": "{a}"}, "drop_empty": "yes"}, "drop_empty"),
        ({"fields": {"x": "{a}"}, "decimal_separator": ";"}, "decimal_separator"),
        ({"fields": {"x": "{a}"}, "timezone": "Nowhere/Land"}, "timezone"),
        ({"fields": {"x": "{a}"}, "skip_if": {"path": "voided", "equals": [1]}}, "skip_if.equals"),
    ],
)
def test_validate_names_the_bad_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transform.validate({"type": "simple_json", **config})
    assert raised.value.field == field


def test_render_refuses_an_invalid_configuration(render_context: RenderContext, sale_element: Element) -> None:
    with pytest.raises(TransformError, match="fields"):
        transform.render([sale_element], render_context, {"type": "simple_json", "fields": {"x": "{"}})
