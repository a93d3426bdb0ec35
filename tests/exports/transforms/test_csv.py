from __future__ import annotations

import csv as stdlib_csv
import io
from decimal import Decimal
from typing import Any

import pytest

import exports.transforms.csv as csv_module
from exports.transforms.base import ConfigError, Element, RenderContext, TransformError
from exports.transforms.csv import CsvTransform
from tests.support.sales import elements_of, make_sale

transform = CsvTransform()


def render(elements: list[Element], context: RenderContext, **config: Any) -> str:
    config = {"type": "csv", **config}
    transform.validate(config)
    rendered = transform.render(elements, context, config)
    assert rendered.content_type == "text/csv; charset=utf-8"
    assert rendered.extension == "csv"
    return rendered.content.decode("utf-8")


def rows(text: str, separator: str = ";") -> list[list[str]]:
    return list(stdlib_csv.reader(io.StringIO(text), delimiter=separator))


def test_module_named_csv_uses_the_standard_library_csv() -> None:
    assert csv_module.stdlib_csv is stdlib_csv
    assert hasattr(csv_module.stdlib_csv, "writer")


def test_entity_rows_with_money_date_and_defaults(render_context: RenderContext) -> None:
    text = render(
        elements_of(make_sale("s-1"), make_sale("s-2")),
        render_context,
        columns=[
            {"header": "Sale", "path": "identifier"},
            {"header": "Shop", "path": "source.shop_id"},
            {"header": "Total", "path": "summary.total", "format": "money"},
            {"header": "Day", "path": "timing.timestamp", "format": "date:%Y-%m-%d %H:%M"},
            {"header": "Voided", "path": "voided"},
        ],
    )
    assert text.splitlines() == [
        "Sale;Shop;Total;Day;Voided",
        "s-1;shop-1;130,10;2024-03-01 13:05;false",
        "s-2;shop-1;130,10;2024-03-01 13:05;false",
    ]
    assert text.endswith("\r\n")


def test_date_column_uses_the_configured_timezone(render_context: RenderContext, sale_element: Element) -> None:
    text = render(
        [sale_element],
        render_context,
        header=False,
        timezone="Europe/Copenhagen",
        columns=[{"path": "timing.timestamp", "format": "date:%H:%M"}],
    )
    assert text == "14:05\r\n"


def test_separator_decimal_separator_and_line_terminator(render_context: RenderContext, sale_element: Element) -> None:
    text = render(
        [sale_element],
        render_context,
        separator=",",
        decimal_separator=".",
        line_terminator="\n",
        columns=[
            {"header": "Total", "path": "summary.total", "format": "money"},
            {"header": "Rate", "path": "summary.taxes[0].rate", "format": "number"},
        ],
    )
    assert text == "Total,Rate\n130.10,0.25\n"


def test_quoting_all_quotes_every_cell(render_context: RenderContext, sale_element: Element) -> None:
    text = render([sale_element], render_context, quoting="all", columns=[{"header": "Sale", "path": "identifier"}])
    assert text == '"Sale"\r\n"sale-1"\r\n'


def test_quoting_minimal_quotes_cells_holding_the_separator(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["comment"] = 'a;b "c"'
    text = render(elements_of(sale), render_context, header=False, columns=[{"path": "summary.comment"}])
    assert text == '"a;b ""c"""\r\n'


def test_quoting_none_writes_a_separator_inside_a_value_as_a_space(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["comment"] = "a;b"
    text = render(
        elements_of(sale), render_context, header=False, quoting="none", columns=[{"path": "summary.comment"}]
    )
    assert text == "a b\r\n"


def spreadsheet_rows(text: str, separator: str) -> list[list[str]]:
    """How a spreadsheet reads the file: quoted fields as CSV has them, and no backslash escape."""
    return list(stdlib_csv.reader(io.StringIO(text, newline=""), delimiter=separator, escapechar=None))


@pytest.mark.parametrize("quoting", ["minimal", "all", "none"])
@pytest.mark.parametrize("separator", [";", ",", "\t", " ", "|"])
@pytest.mark.parametrize(
    "name", ["x;=1+1", "a\n=4+4", "a\r\n=4+4", "x,=1+1", "x\t=1+1", "x =1+1", "x|=1+1", 'x";=1+1', "x\\;=1+1"]
)
def test_no_value_starts_a_cell_or_a_row_of_its_own(
    render_context: RenderContext, quoting: str, separator: str, name: str
) -> None:
    # With quoting none, a line named "x;=1+1" must not read as the cells "x\\" and "=1+1", nor "a\n=4+4"
    # start a new row with a formula.
    sale = make_sale()
    sale["summary"]["line_items"][0]["name"] = name
    text = render(
        elements_of(sale),
        render_context,
        rows="line_items",
        quoting=quoting,
        separator=separator,
        decimal_separator="." if separator == "," else ",",
        columns=[{"header": "Name", "path": "name"}, {"header": "Qty", "path": "quantity"}],
    )

    read = spreadsheet_rows(text, separator)
    assert len(read) == 1 + len(sale["summary"]["line_items"])
    assert all(len(row) == 2 for row in read)
    assert not any(cell.startswith(("=", "+", "@")) for row in read for cell in row)


def test_header_row_can_be_switched_off(render_context: RenderContext, sale_element: Element) -> None:
    text = render([sale_element], render_context, header=False, columns=[{"header": "Sale", "path": "identifier"}])
    assert text == "sale-1\r\n"


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('=HYPERLINK("http://evil")', '\'=HYPERLINK("http://evil")'),
        ("+1+2", "'+1+2"),
        ("-2+3", "'-2+3"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\tcmd", "'\tcmd"),
        ("\rcmd", "'\rcmd"),
        ("-12,50", "'-12,50"),
        ("plain", "plain"),
    ],
)
def test_string_cells_are_neutralised_against_formula_injection(
    render_context: RenderContext, value: str, expected: str
) -> None:
    sale = make_sale()
    sale["summary"]["comment"] = value
    text = render(elements_of(sale), render_context, header=False, columns=[{"path": "summary.comment"}])
    assert rows(text) == [[expected]]


def test_negative_numbers_stay_numbers(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["total"] = -12.5
    text = render(
        elements_of(sale),
        render_context,
        header=False,
        columns=[
            {"path": "summary.total", "format": "money"},
            {"path": "summary.total", "format": "number"},
            {"path": "summary.total"},
        ],
    )
    assert text == "-12,50;-12,5;-12,5\r\n"


def test_headers_are_neutralised_too(render_context: RenderContext, sale_element: Element) -> None:
    text = render([sale_element], render_context, columns=[{"header": "=cmd", "path": "identifier"}])
    assert rows(text)[0] == ["'=cmd"]


def test_line_items_rows_read_the_parent_entity(render_context: RenderContext, sale_element: Element) -> None:
    text = render(
        [sale_element],
        render_context,
        rows="line_items",
        columns=[
            {"header": "Sale", "path": "entity.identifier"},
            {"header": "Shop", "path": "../source.shop_id"},
            {"header": "Item", "path": "name"},
            {"header": "Qty", "path": "quantity"},
            {"header": "VAT", "path": "taxes[0].rate", "format": "number"},
            {"header": "Total", "path": "total", "format": "money"},
        ],
    )
    assert rows(text) == [
        ["Sale", "Shop", "Item", "Qty", "VAT", "Total"],
        ["sale-1", "shop-1", "T-shirt", "2", "0,25", "90,00"],
        ["sale-1", "shop-1", "Socks", "1", "0,25", "30,00"],
        ["sale-1", "shop-1", "Newspaper", "1", "0", "10,10"],
    ]


def test_line_items_grouped_by_vat_rate_sums_exactly_to_the_cent(render_context: RenderContext) -> None:
    # 0.1 + 0.2 is 0.30000000000000004 in floats; Decimal sums must give exactly 0.30 per item pair.
    sales = []
    for number in range(3):
        sale = make_sale(f"s-{number}")
        sale["summary"]["line_items"][0]["total"] = 0.1
        sale["summary"]["line_items"][1]["total"] = 0.2
        sales.append(sale)
    text = render(
        elements_of(*sales),
        render_context,
        rows="line_items_grouped",
        group_by=["taxes[0].rate"],
        columns=[
            {"header": "VAT", "path": "taxes[0].rate", "format": "number"},
            {"header": "Total", "path": "total", "format": "money", "aggregate": "sum"},
            {"header": "Raw", "path": "total", "format": "number", "aggregate": "sum"},
            {"header": "VAT amount", "path": "vat_amount", "format": "money", "aggregate": "sum"},
            {"header": "Items", "aggregate": "count"},
        ],
    )
    assert rows(text) == [
        ["VAT", "Total", "Raw", "VAT amount", "Items"],
        ["0,25", "0,90", "0,9", "72,00", "6"],
        ["0", "30,30", "30,3", "0,00", "3"],
    ]


def test_line_items_grouped_per_entity(render_context: RenderContext) -> None:
    text = render(
        elements_of(make_sale("s-1"), make_sale("s-2")),
        render_context,
        rows="line_items_grouped",
        group_by="taxes[0].rate",
        group_scope="entity",
        header=False,
        columns=[
            {"path": "entity.identifier"},
            {"path": "taxes[0].rate", "format": "number"},
            {"path": "total", "format": "money", "aggregate": "sum"},
        ],
    )
    assert rows(text) == [
        ["s-1", "0,25", "120,00"],
        ["s-1", "0", "10,10"],
        ["s-2", "0,25", "120,00"],
        ["s-2", "0", "10,10"],
    ]


def test_grouped_sum_of_text_is_a_transform_error(render_context: RenderContext) -> None:
    sale = make_sale()
    sale["summary"]["line_items"][0]["total"] = "lots"
    with pytest.raises(TransformError, match="columns\\[0\\]"):
        render(
            elements_of(sale),
            render_context,
            rows="line_items_grouped",
            group_by=["taxes[0].rate"],
            columns=[{"path": "total", "aggregate": "sum"}],
        )


def test_payments_grouped_by_type_and_currency(render_context: RenderContext) -> None:
    euro_sale = make_sale("s-2")
    euro_sale["payments"] = [
        {
            "identifier": "p-9",
            "payment_type": "cash",
            "amount": 74.6,
            "foreign_currency": "EUR",
            "foreign_currency_amount": 10.0,
            "success": True,
        }
    ]
    text = render(
        elements_of(make_sale("s-1"), make_sale("s-3"), euro_sale),
        render_context,
        rows="payments_grouped",
        columns=[
            {"header": "Type", "path": "payment_type"},
            {"header": "Currency", "path": "currency_code"},
            {"header": "Amount", "path": "amount", "format": "money"},
            {"header": "Foreign", "path": "foreign_currency_amount", "format": "money"},
            {"header": "Count", "path": "count"},
            {"header": "First sale", "path": "entity.identifier"},
        ],
    )
    assert rows(text) == [
        ["Type", "Currency", "Amount", "Foreign", "Count", "First sale"],
        ["card.external", "DKK", "200,00", "", "2", "s-1"],
        ["cash", "DKK", "60,70", "", "2", "s-1"],
        ["cash.rounding", "DKK", "-0,50", "", "2", "s-1"],
        ["cash", "EUR", "74,60", "10,00", "1", "s-2"],
    ]


def test_payments_grouped_can_include_failed_payments(render_context: RenderContext, sale_element: Element) -> None:
    text = render(
        [sale_element],
        render_context,
        rows="payments_grouped",
        include_failed_payments=True,
        header=False,
        columns=[{"path": "payment_type"}, {"path": "amount", "format": "money"}, {"path": "count"}],
    )
    assert rows(text)[0] == ["card.external", "105,00", "2"]


def test_reconciliation_rows(render_context: RenderContext, statement_element: Element) -> None:
    text = render(
        [statement_element],
        render_context,
        rows="reconciliations",
        columns=[
            {"header": "Register", "path": "entity.source.register_id"},
            {"header": "Type", "path": "payment_type_identifier"},
            {"header": "Currency", "path": "currency_code"},
            {"header": "Counted", "path": "counted", "format": "money"},
            {"header": "Difference comment", "path": "entity.comment"},
            {"header": "Closed", "path": "entity.timing.timestamp", "format": "date:%Y-%m-%dT%H:%M:%S"},
        ],
    )
    assert rows(text)[1:] == [
        ["reg-1", "cash", "DKK", "1520,50", '\'=HYPERLINK("http://evil")', "2024-03-01T22:00:00"],
        ["reg-1", "cash", "EUR", "20,00", '\'=HYPERLINK("http://evil")', "2024-03-01T22:00:00"],
        ["reg-1", "card.external", "DKK", "4200,75", '\'=HYPERLINK("http://evil")', "2024-03-01T22:00:00"],
    ]


def test_tax_summary_rows(render_context: RenderContext, statement_element: Element) -> None:
    text = render(
        [statement_element],
        render_context,
        rows="tax_summaries",
        header=False,
        columns=[{"path": "name"}, {"path": "rate", "format": "number"}, {"path": "amount", "format": "money"}],
    )
    assert rows(text) == [["VAT 25%", "0,25", "1146,25"], ["VAT 0%", "0", "0,00"]]


def test_money_uses_the_currency_minor_unit(render_context: RenderContext) -> None:
    sale = make_sale(base_currency_code="JPY")
    sale["summary"]["total"] = 1234.5
    text = render(
        elements_of(sale), render_context, header=False, columns=[{"path": "summary.total", "format": "money"}]
    )
    assert text == "1235\r\n"


def test_skip_voided_skips_and_reports(render_context: RenderContext) -> None:
    elements = elements_of(make_sale("s-1"), make_sale("s-2", voided=True))
    config = {"type": "csv", "skip_voided": True, "header": False, "columns": [{"path": "identifier"}]}
    assert transform.skip_reason(elements[1], config) == "voided"
    assert transform.skip_reason(elements[0], config) is None
    rendered = transform.render(elements, render_context, config)
    assert rendered.content == b"s-1\r\n"
    assert rendered.skipped == ["sales/s-2"]


def test_bom_option(render_context: RenderContext, sale_element: Element) -> None:
    rendered = transform.render(
        [sale_element],
        render_context,
        {"type": "csv", "bom": True, "header": False, "columns": [{"path": "identifier"}]},
    )
    assert rendered.content.startswith(b"\xef\xbb\xbf")


@pytest.mark.usefixtures("output_limit_1000")
def test_output_size_limit(render_context: RenderContext) -> None:
    with pytest.raises(TransformError, match="larger than 1000 bytes"):
        render(
            elements_of(*[make_sale(f"s-{n}") for n in range(300)]), render_context, columns=[{"path": "identifier"}]
        )


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"rows": "per_moon"}, "rows"),
        ({"columns": []}, "columns"),
        ({"columns": "identifier"}, "columns"),
        ({"columns": [{"path": "identifier"}, {"path": "a"}, {"path": "summary..total"}]}, "columns[2].path"),
        ({"columns": [{"path": "summary.line_items[x]"}]}, "columns[0].path"),
        ({"columns": [{"path": "summary.line items"}]}, "columns[0].path"),
        ({"columns": [{"path": "a"}, {"path": "b", "format": "currency"}]}, "columns[1].format"),
        ({"columns": [{"path": "a", "format": "date:"}]}, "columns[0].format"),
        ({"columns": [{"path": "a", "aggregate": "sum"}]}, "columns[0].aggregate"),
        ({"columns": [{"path": "a", "colour": "red"}]}, "columns[0]"),
        ({"rows": "line_items_grouped", "columns": [{"path": "total"}]}, "group_by"),
        ({"rows": "line_items_grouped", "group_by": ["taxes[0]].rate"], "columns": [{"path": "a"}]}, "group_by[0]"),
        (
            {"rows": "line_items_grouped", "group_by": ["a"], "columns": [{"path": "a", "aggregate": "max"}]},
            "columns[0].aggregate",
        ),
        (
            {"rows": "line_items_grouped", "group_by": ["a"], "columns": [{"path": "a", "aggregate": "count"}]},
            "columns[0].path",
        ),
        ({"group_by": ["a"], "columns": [{"path": "a"}]}, "group_by"),
        ({"separator": ";;", "columns": [{"path": "a"}]}, "separator"),
        ({"separator": ",", "columns": [{"path": "a"}]}, "decimal_separator"),
        ({"decimal_separator": "'", "columns": [{"path": "a"}]}, "decimal_separator"),
        ({"quoting": "some", "columns": [{"path": "a"}]}, "quoting"),
        ({"header": "yes", "columns": [{"path": "a"}]}, "header"),
        ({"timezone": "Mars/Olympus", "columns": [{"path": "a"}]}, "timezone"),
        ({"skip_voided": "true", "columns": [{"path": "a"}]}, "skip_voided"),
        ({"skip_if": {"path": "voided"}, "columns": [{"path": "a"}]}, "skip_if"),
        ({"skip_if": [{"path": "a[", "equals": 1}], "columns": [{"path": "a"}]}, "skip_if[0].path"),
    ],
)
def test_validate_names_the_bad_field(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transform.validate({"type": "csv", **config})
    assert raised.value.field == field


def test_render_refuses_an_invalid_configuration(render_context: RenderContext, sale_element: Element) -> None:
    with pytest.raises(TransformError, match="rows"):
        transform.render([sale_element], render_context, {"type": "csv", "rows": "nope", "columns": [{"path": "a"}]})


def test_large_batch_renders_quickly(render_context: RenderContext) -> None:
    sale = make_sale()
    elements = [Element(f"sales/{n}", sale) for n in range(5000)]
    text = render(
        elements,
        render_context,
        rows="line_items",
        header=False,
        columns=[{"path": "entity.identifier"}, {"path": "total", "format": "money"}],
    )
    assert text.count("\r\n") == 15000
    assert Decimal(rows(text)[-1][1].replace(",", ".")) == Decimal("10.10")
