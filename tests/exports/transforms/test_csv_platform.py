"""The CSV features the platform's exports have, each over real sales: posted through the POS API,
stored, and loaded as the sales entity exports them."""

from __future__ import annotations

import csv as stdlib_csv
import io
from typing import Any

import pytest
from rest_framework.test import APIClient

from accounts.models import Register
from exports.entities.sales import ENTITY as SALES
from exports.transforms.base import ConfigError, Element, RenderContext
from exports.transforms.csv import SALE_TYPES, CsvTransform
from ledger.models import Expense, Sale
from tests.factories import RegisterFactory
from tests.support.api import PosApi
from tests.support.register_day import register_day
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db
transform = CsvTransform()


@pytest.fixture
def sales(tenant: Tenant) -> list[Element]:
    """The register day's sales, in the order posted, as the sales entity exports them."""
    register: Register = RegisterFactory(
        account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1"
    )
    assert register.identifier == "reg-1"
    Expense.objects.create(account=tenant.account, expense_id="coffee", name={"en": "Coffee"})
    pos = PosApi(APIClient(), tenant)
    for body in register_day():
        response = pos.post("checkouts", body)
        assert response.status_code == 201, response.json()
        assert response.json()["warnings"] == [], response.json()
    ids = list(Sale.objects.order_by("pk").values_list("pk", flat=True))
    loaded = SALES.load(ids)
    return [Element(f"sales/{loaded[pk]['identifier']}", loaded[pk]) for pk in ids]


def render(elements: list[Element], context: RenderContext, **config: Any) -> list[list[str]]:
    config = {"type": "csv", "separator": ";", **config}
    transform.validate(config)
    text = transform.render(elements, context, config).content.decode("utf-8")
    return list(stdlib_csv.reader(io.StringIO(text), delimiter=";"))


def test_an_l10n_string_column_is_written_in_its_language_with_a_fallback(
    sales: list[Element], render_context: RenderContext
) -> None:
    rows = render(
        sales[:1],
        render_context,
        rows="line_items",
        language=["da", "en"],
        columns=[{"header": "Line", "path": "line_item_id"}, {"header": "Name", "path": "name"}],
    )

    assert rows == [["Line", "Name"], ["li-1", "T-shirt basis"], ["li-2", "Socks"]]  # socks: no Danish name


def test_a_column_language_overrides_the_configuration(sales: list[Element], render_context: RenderContext) -> None:
    rows = render(
        sales[:1],
        render_context,
        rows="line_items",
        header=False,
        language="da",
        columns=[{"path": "name"}, {"path": "name", "language": "en"}],
    )

    assert rows == [["T-shirt basis", "Basic T-shirt"], ["Socks", "Socks"]]


def test_without_a_language_an_l10n_string_is_still_written_as_json(
    sales: list[Element], render_context: RenderContext
) -> None:
    rows = render(sales[:1], render_context, rows="line_items", header=False, columns=[{"path": "name"}])

    assert rows[0] == ['{"da":"T-shirt basis","en":"Basic T-shirt"}']


def test_a_constant_column_is_the_same_in_every_row(sales: list[Element], render_context: RenderContext) -> None:
    rows = render(
        sales,
        render_context,
        header=False,
        columns=[{"path": "identifier"}, {"header": "Account", "value": "1010"}, {"value": 7}],
    )

    assert {tuple(row[1:]) for row in rows} == {("1010", "7")}
    assert len(rows) == 5


def test_a_derived_type_column_tells_sale_return_expense_and_void(
    sales: list[Element], render_context: RenderContext
) -> None:
    rows = render(
        sales, render_context, header=False, columns=[{"path": "identifier"}, {"header": "Type", "derived": "type"}]
    )

    assert rows == [
        ["co-1-s1", "sale"],
        ["co-2-s1", "sale"],
        ["co-3-s1", "return"],
        ["co-4-s1", "expense"],
        ["co-5-s1", "void"],  # the platform's word for a voided sale
    ]
    assert {row[1] for row in rows} == set(SALE_TYPES)


def test_rows_missing_a_required_value_are_left_out(sales: list[Element], render_context: RenderContext) -> None:
    rows = render(
        sales,
        render_context,
        rows="line_items",
        header=False,
        required_values=["id", "entity.summary.customer.identifier"],
        columns=[{"path": "entity.identifier"}, {"path": "id"}],
    )

    # Only co-1 has a customer; the expense line (no product id) and the other sales are left out.
    assert rows == [["co-1-s1", "tshirt"], ["co-1-s1", "socks"]]


def test_required_values_apply_to_grouped_line_items_before_grouping(
    sales: list[Element], render_context: RenderContext
) -> None:
    rows = render(
        sales,
        render_context,
        rows="line_items_grouped",
        header=False,
        group_by=["taxes[0].rate"],
        required_values=["id"],
        columns=[{"aggregate": "count"}, {"path": "sub_total", "aggregate": "sum", "format": "money"}],
    )

    # Every line with a product: 359.90 + 99.90 + 150.00 - 179.95 + 150.00 (voided, still a line of its sale).
    assert rows == [["5", "579,85"]]


def test_whole_numbers_are_written_as_integers(sales: list[Element], render_context: RenderContext) -> None:
    rows = render(
        sales[:1],
        render_context,
        rows="line_items",
        header=False,
        columns=[{"path": "quantity"}, {"path": "quantity", "format": "number"}, {"path": "retail_price"}],
    )

    assert rows == [["2", "2", "399,9"], ["3", "3", "149,85"]]


def test_whole_numbers_can_keep_their_decimals(sales: list[Element], render_context: RenderContext) -> None:
    element = Element("sales/x", {**sales[0].entity, "summary": {"line_items": [{"quantity": 2.0}]}})

    kept = render(
        [element],
        render_context,
        rows="line_items",
        header=False,
        whole_numbers_as_integers=False,
        columns=[{"path": "quantity"}],
    )
    plain = render([element], render_context, rows="line_items", header=False, columns=[{"path": "quantity"}])

    assert (kept, plain) == ([["2,0"]], [["2"]])


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"columns": [{"path": "id", "value": 1}]}, "columns[0]"),
        ({"columns": [{"derived": "colour"}]}, "columns[0].derived"),
        ({"columns": [{"value": {"a": 1}}]}, "columns[0].value"),
        ({"columns": [{"path": "name", "language": ""}]}, "columns[0].language"),
        ({"columns": [{"path": "name"}], "language": 5}, "language"),
        ({"columns": [{"path": "name"}], "required_values": ["a..b"]}, "required_values[0]"),
        ({"columns": [{"path": "name"}], "whole_numbers_as_integers": "yes"}, "whole_numbers_as_integers"),
    ],
)
def test_new_configuration_keys_are_validated(config: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as raised:
        transform.validate({"type": "csv", **config})

    assert raised.value.field == field


ENTITY_ROWS = [
    {
        "columns": [
            {"header": "=Sale", "path": "identifier"},
            {"header": "Date", "path": "timing.timestamp", "format": "date:%Y-%m-%d %H:%M"},
            {"header": "Shop", "path": "entity.source.shop_id"},
            {"header": "Total", "path": "summary.total", "format": "money"},
            {"header": "Lines", "path": "summary.line_items[1].quantity", "format": "number"},
            {"header": "Type", "derived": "type"},
            {"header": "Account", "value": "1010"},
            {"header": "Customer", "path": "summary.customer"},
            {"header": "Name", "path": "summary.line_items[0].name", "language": "da"},
            {"header": "Missing", "path": "summary.total.deeper"},
        ],
        "timezone": "Europe/Copenhagen",
    },
    {
        "columns": [{"path": "identifier"}, {"path": "summary.vat_amount", "format": "money"}],
        "skip_voided": True,
        "skip_if": {"path": "summary.is_return", "equals": True},
        "required_values": ["summary.customer.identifier"],
        "decimal_separator": ".",
        "quoting": "all",
    },
    {"columns": [{"path": "summary"}, {"path": "payments[0]"}, {"path": "summary.taxes"}], "header": False},
]


@pytest.mark.parametrize("config", ENTITY_ROWS)
def test_rows_of_entities_read_from_what_reads_names_are_the_same_bytes(
    sales: list[Element], render_context: RenderContext, config: dict[str, Any]
) -> None:
    config = {"type": "csv", "rows": "entity", **config}
    transform.validate(config)
    ids = list(Sale.objects.order_by("pk").values_list("pk", flat=True))
    paths = transform.reads(config)
    assert paths is not None
    reduced = SALES.load_paths(ids, paths)  # type: ignore[misc]
    elements = [Element(element.element_key, reduced[pk]) for element, pk in zip(sales, ids, strict=True)]

    whole, read = transform.render(sales, render_context, config), transform.render(elements, render_context, config)

    assert read.content == whole.content
    assert read.skipped == whole.skipped
    assert len(whole.content.splitlines()) > 1


@pytest.mark.parametrize("rows", ["line_items", "line_items_grouped", "payments_grouped"])
def test_other_row_modes_read_the_whole_entity(rows: str) -> None:
    config = {"type": "csv", "rows": rows, "columns": [{"path": "entity.identifier"}], "group_by": ["id"]}
    if rows != "line_items_grouped":
        del config["group_by"]

    assert transform.reads(config) is None
