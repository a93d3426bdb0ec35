"""A queue's output is described by its transform's configuration (``GET /api/v1/export-queues/{id}/output-schema``,
``exports.outputs``): a simple JSON queue's JSON Schema is derived from its fields and its rendered exports match
it, a CSV queue's layout names its columns in the order and with the cells it writes, an identity queue's schema is
the published wrapper; docs/events.md shows an example answer the service gives."""

from __future__ import annotations

import csv as stdlib_csv
import io
import json
import re
from pathlib import Path
from typing import Any

import jsonschema_rs
import pytest
from rest_framework.test import APIClient

from exports import outputs, services
from exports.api import OUTPUT_SCHEMA_EXAMPLE, OUTPUT_SCHEMA_EXAMPLE_TRANSFORM
from exports.models import ExportQueue
from ledger.api.checkouts import CHECKOUT_REQUEST_EXAMPLE
from tests.factories import RegisterFactory
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

DOC = Path(__file__).resolve().parents[2] / "docs" / "events.md"
FIELDS = {
    "sale": "{identifier}",
    "total": "{summary.total}",
    "amount": "{summary.total|money}",
    "day": "{timing.timestamp|date:%Y-%m-%d}",
    "shop": "{source.shop_id}",
    "note": "Sale {identifier} in {source.shop_name}",
    "kind": "sale",
    "lines": "{summary.line_items}",
    "first_line": "{summary.line_items[0].quantity}",
    "elsewhere": "{not_a_field}",
}
SIMPLE_JSON: dict[str, Any] = {"type": "simple_json", "fields": FIELDS, "decimal_separator": ","}
CSV: dict[str, Any] = {
    "type": "csv",
    "rows": "line_items",
    "separator": ";",
    "decimal_separator": ".",
    "language": ["da", "en"],
    "columns": [
        {"header": "Sale", "path": "entity.identifier"},
        {"header": "Type", "derived": "type"},
        {"header": "Shop", "value": "Main street"},
        {"header": "Name", "path": "name"},
        {"header": "Quantity", "path": "quantity"},
        {"header": "Sub total", "path": "sub_total", "format": "money"},
        {"header": "Day", "path": "entity.timing.timestamp", "format": "date:%Y-%m-%d"},
    ],
}


def queue_of(tenant: Tenant, transform: dict[str, Any], entity_type: str = "sales") -> ExportQueue:
    return ExportQueue.objects.create(
        account=tenant.account,
        name=f"{transform['type']} queue",
        entity_type=entity_type,
        transform=transform,
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )


def output_schema(tenant: Tenant, queue: ExportQueue) -> Any:
    answer = APIClient().get(f"/api/v1/export-queues/{queue.pk}/output-schema?{tenant.query(tenant.admin_key)}")
    assert answer.status_code == 200, answer.content
    return answer.json()


@pytest.fixture
def sale(tenant: Tenant) -> None:
    """A sale, made as a register makes it."""
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1", name="Till 1")
    client = APIClient()
    for path, body in (
        ("registers/reg-1/open", {"cash_total_at_open": 500}),
        ("checkouts", CHECKOUT_REQUEST_EXAMPLE),
    ):
        answer = client.post(f"/api/v1/pos/{path}?{tenant.query(tenant.pos_key)}", body, format="json")
        assert answer.status_code in (200, 201), answer.content


def rendered(queue: ExportQueue) -> bytes:
    output, _key = services.preview(queue=queue)
    return bytes(output.content)


def test_a_simple_json_queue_is_described_by_a_schema_of_its_fields(tenant: Tenant) -> None:
    described = output_schema(tenant, queue_of(tenant, SIMPLE_JSON))
    schema = described["json_schema"]
    flat = schema["additionalProperties"]

    assert (described["transform"], described["content_type"], described["csv"]) == (
        "simple_json",
        "application/json",
        None,
    )
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # In the configured order, on every database (the transform is stored as JSON text, not jsonb).
    assert list(flat["properties"]) == list(FIELDS) == flat["required"]
    assert flat["additionalProperties"] is False
    element = outputs.element_schema("sales")
    kinds = {key: element.types(prop) for key, prop in flat["properties"].items()}
    assert kinds == {
        "sale": {"string"},
        "total": {"number"},
        "amount": {"string"},
        "day": {"string"},
        "shop": {"string"},
        "note": {"string"},
        "kind": {"string"},
        "lines": {"array"},
        "first_line": {"number"},
        "elsewhere": set(),  # not in the element's schema: any value
    }
    assert flat["properties"]["kind"]["const"] == "sale"
    assert flat["properties"]["amount"]["anyOf"][0]["pattern"] == "^-?[0-9]+(,[0-9]+)?$"
    assert flat["properties"]["total"]["description"].startswith("From `{summary.total}`: ")
    assert {"type": "null"} in flat["properties"]["total"]["anyOf"]  # a missing value is null
    assert "anyOf" not in flat["properties"]["note"]  # mixed text is always a string
    jsonschema_rs.Draft202012Validator(schema)  # a schema a validator compiles, its $defs included


def test_with_drop_empty_a_value_that_can_be_missing_is_an_optional_key_never_null(tenant: Tenant) -> None:
    flat = output_schema(tenant, queue_of(tenant, {**SIMPLE_JSON, "drop_empty": True}))["json_schema"][
        "additionalProperties"
    ]

    assert sorted(flat["required"]) == ["kind", "note"]
    assert "anyOf" not in flat["properties"]["amount"]


def test_a_rendered_simple_json_export_matches_the_derived_schema_and_a_changed_one_does_not(
    tenant: Tenant, sale: None
) -> None:
    queue = queue_of(tenant, SIMPLE_JSON)
    validator = jsonschema_rs.Draft202012Validator(output_schema(tenant, queue)["json_schema"])
    export = json.loads(rendered(queue))
    (key,) = export

    assert validator.is_valid(export), [e.message for e in validator.iter_errors(export)]
    assert re.fullmatch(r"-?[0-9]+,[0-9]{2}", export[key]["amount"])  # DKK's minor unit, the decimal comma
    for changed in ({"total": "12"}, {"amount": "12.50"}, {"kind": "return"}, {"extra": 1}):
        assert not validator.is_valid({key: {**export[key], **changed}}), changed
    without = dict(export[key])
    del without["total"]
    assert not validator.is_valid({key: without})


def test_a_csv_queue_is_described_by_its_columns_and_its_file_has_them(tenant: Tenant, sale: None) -> None:
    queue = queue_of(tenant, CSV)
    described = output_schema(tenant, queue)
    layout = described["csv"]
    columns = layout["columns"]

    assert (described["content_type"], described["json_schema"]) == ("text/csv; charset=utf-8", None)
    assert {key: layout[key] for key in ("rows", "header", "separator", "decimal_separator", "quoting")} == {
        "rows": "line_items",
        "header": True,
        "separator": ";",
        "decimal_separator": ".",
        "quoting": "minimal",
    }
    assert layout["line_terminator"] == "\r\n" and layout["encoding"] == "utf-8" and layout["bom"] is False
    assert [(c["position"], c["header"], c["source"], c["type"]) for c in columns] == [
        (1, "Sale", "path", "text"),
        (2, "Type", "derived", "text"),
        (3, "Shop", "value", "text"),
        (4, "Name", "path", "text"),
        (5, "Quantity", "path", "number"),
        (6, "Sub total", "path", "money"),
        (7, "Day", "path", "date"),
    ]
    assert (columns[0]["of"], columns[3]["of"], columns[3]["language"]) == ("element", "row", ["da", "en"])
    assert (columns[2]["value"], columns[6]["date_format"]) == ("Main street", "%Y-%m-%d")
    assert all(c["in_schema"] for c in columns if c["source"] == "path")

    text = rendered(queue).decode()
    assert text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
    rows = list(stdlib_csv.reader(io.StringIO(text), delimiter=layout["separator"]))
    assert rows[0] == [c["header"] for c in columns]
    assert len(rows) > 1 and all(len(row) == len(columns) for row in rows)
    for row in rows[1:]:
        assert row[1] in ("sale", "return", "expense", "voided") and row[2] == "Main street"
        assert re.fullmatch(r"-?[0-9]+(\.[0-9]+)?", row[4]) and re.fullmatch(r"-?[0-9]+\.[0-9]{2}", row[5])
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", row[6])


def test_an_identity_queue_is_described_by_the_published_wrapper(tenant: Tenant, sale: None) -> None:
    queue = queue_of(tenant, {"type": "identity"})
    schema = output_schema(tenant, queue)["json_schema"]
    validator = jsonschema_rs.Draft202012Validator(schema)
    export = json.loads(rendered(queue))
    (key,) = export

    assert schema["$ref"] == "#/$defs/ExportSales" and "ExportSalesElement" in schema["$defs"]
    assert validator.is_valid(export), [e.message for e in validator.iter_errors(export)]
    assert not validator.is_valid({key: {**export[key], "voided": "no"}})


def test_a_template_queue_is_described_by_its_media_type_only(tenant: Tenant) -> None:
    template = {"type": "mustache", "template": "{{#elements}}{{identifier}}{{/elements}}", "content_type": "text/html"}
    described = output_schema(tenant, queue_of(tenant, template))

    assert described == {
        "entity_type": "sales",
        "transform": "mustache",
        "content_type": "text/html",
        "extension": "html",
        "json_schema": None,
        "csv": None,
    }


def test_a_stored_configuration_that_cannot_work_is_refused_naming_the_field(tenant: Tenant) -> None:
    queue = queue_of(tenant, {"type": "csv", "columns": [{"header": "x", "path": "a..b"}]})
    answer = APIClient().get(f"/api/v1/export-queues/{queue.pk}/output-schema?{tenant.query(tenant.admin_key)}")

    assert answer.status_code == 400
    assert answer.json()["errors"][0]["field"] == "transform.columns[0].path"


def test_another_accounts_queue_is_not_found(tenant: Tenant, other_tenant: Tenant) -> None:
    theirs = queue_of(other_tenant, SIMPLE_JSON)
    answer = APIClient().get(f"/api/v1/export-queues/{theirs.pk}/output-schema?{tenant.query(tenant.admin_key)}")

    assert answer.status_code == 404


def test_the_events_page_shows_the_answers_the_service_gives_for_its_example_queues() -> None:
    section = DOC.read_text().split("## What a queue sends", 1)[1]
    blocks = [json.loads(block) for block in re.findall(r"```json\n(.*?)\n```", section, flags=re.S)]

    assert len(blocks) == 4  # a simple JSON queue and a CSV queue, each with the answer
    for queue, answer in zip(blocks[::2], blocks[1::2], strict=True):
        assert outputs.describe(entity_type=queue["entity_type"], transform=queue["transform"]) == answer


def test_the_openapi_documents_example_is_the_answer_for_its_queue() -> None:
    described = outputs.describe(entity_type="sales", transform=OUTPUT_SCHEMA_EXAMPLE_TRANSFORM)

    assert described == OUTPUT_SCHEMA_EXAMPLE
