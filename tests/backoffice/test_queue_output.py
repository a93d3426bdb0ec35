"""A queue's page says what the queue sends, as its transform's configuration describes it (``exports.outputs``):
a CSV queue's columns and file format, a simple JSON queue's keys, an identity queue's published schema."""

from __future__ import annotations

import re
from typing import Any

import pytest

from exports.models import ExportQueue
from tests.support.backoffice import SignIn
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def page(tenant: Tenant, sign_in: SignIn, transform: dict[str, Any]) -> str:
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name=f"out {ExportQueue.objects.count()}",
        entity_type="sales",
        transform=transform,
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )
    answer = sign_in(tenant.account, "viewer").get(f"/backoffice/exports/queues/{queue.pk}/")
    assert answer.status_code == 200
    return answer.content.decode()


def cells(html: str, label: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", cell) for cell in re.findall(rf'data-label="{label}"[^>]*>(.*?)</td>', html)]


def test_a_csv_queues_page_lists_its_columns_in_order_and_its_file_format(tenant: Tenant, sign_in: SignIn) -> None:
    transform = {
        "type": "csv",
        "rows": "line_items",
        "line_terminator": "\n",
        "columns": [
            {"header": "Sale", "path": "entity.identifier"},
            {"header": "Total", "path": "sub_total", "format": "money"},
            {"header": "Shop", "value": "Main street"},
        ],
    }
    html = page(tenant, sign_in, transform)

    assert "What it sends" in html
    assert cells(html, "Column") == ["Sale", "Total", "Shop"]
    assert cells(html, "Source") == ["entity.identifier", "sub_total", "the value &quot;Main street&quot;"]
    assert cells(html, "Type") == ["text", "money", "text"]
    assert "<dd>LF</dd>" in html and "<dd><code>;</code></dd>" in html and "One row per line item" in html


def test_a_simple_json_queues_page_lists_its_keys_with_their_types(tenant: Tenant, sign_in: SignIn) -> None:
    fields = {"sale": "{identifier}", "note": "Sale {identifier}", "total": "{summary.total}"}
    html = page(tenant, sign_in, {"type": "simple_json", "fields": fields, "drop_empty": True})

    # In the configured order, on every database (the transform is stored as JSON text, not jsonb).
    rows = list(
        zip(cells(html, "Key"), zip(cells(html, "Type"), cells(html, "Always present"), strict=True), strict=True)
    )
    assert rows == [("sale", ("string", "no")), ("note", ("string", "yes")), ("total", ("number", "no"))]


def test_an_identity_queues_page_names_the_published_schema_and_a_template_queues_its_media_type(
    tenant: Tenant, sign_in: SignIn
) -> None:
    assert "ExportSales," in page(tenant, sign_in, {"type": "identity"})
    template = {"type": "mustache", "template": "{{#elements}}{{identifier}}{{/elements}}"}
    html = page(tenant, sign_in, template)
    assert "What the template writes." in html and "<dd>text/plain</dd>" in html


def test_a_queue_whose_stored_configuration_cannot_work_still_shows_its_page(tenant: Tenant, sign_in: SignIn) -> None:
    html = page(tenant, sign_in, {"type": "csv", "columns": []})

    assert "What it sends" not in html and "Latest items" in html
