"""A queue's transform and delivery configuration keep the order of their keys as configured, on every database:
through the API and back, in the rendered export and on the wire (PostgreSQL's jsonb would store an object's keys
shorter first, then bytewise)."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.exceptions import FieldError
from django.db import connection

from exports import services
from exports.models import ExportDelivery, ExportQueue, ExportStatus
from tests.support.admin import admin_url
from tests.support.api import AdminApi
from tests.support.backoffice import SignIn
from tests.support.imports import import_orders
from tests.support.queues import SECRET, admin_queue_form
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# Neither in jsonb's order (a, mm, zebra_long_key) nor in bytewise order.
FIELDS = {
    "zebra_long_key": "{order.order_identifier}",
    "a": "Order {order.order_identifier}",
    "mm": "{state.order_state|text}",
}
HEADERS = {"X-Zeta-Long-Name": "z", "X-A": "a", "X-Mm": "m"}


def _keys_in_text(text: str, keys: list[str]) -> list[str]:
    """``keys`` in the order their first quoted occurrences appear in ``text``."""
    return sorted(keys, key=lambda key: text.index(f'"{key}"'))


def test_a_simple_json_queue_keeps_its_configured_key_order_end_to_end(
    api: AdminApi, client, reachable_receiver: Receiver
) -> None:
    body = {
        "name": "ordered",
        "entity_type": "incoming_order_state_changes",
        "transform": {"type": "simple_json", "fields": FIELDS, "drop_empty": False},
        "delivery": {"type": "webhook", "url": reachable_receiver.url, "headers": HEADERS, "secret": SECRET},
    }
    created = api.post("export-queues", body)
    assert created.status_code == 201, created.json()
    queue_id = created.json()["id"]

    read = api.get(f"export-queues/{queue_id}")
    assert read.status_code == 200
    text = read.content.decode()
    transform = read.json()["transform"]
    assert list(transform) == ["type", "fields", "drop_empty"]
    assert list(transform["fields"]) == list(FIELDS)
    assert _keys_in_text(text, list(FIELDS)) == list(FIELDS)
    assert list(read.json()["delivery"]["headers"]) == list(HEADERS)
    assert list(ExportQueue.objects.get(pk=queue_id).transform["fields"]) == list(FIELDS)

    import_orders(client, api.tenant, "WEB-1")
    preview = api.post(f"export-queues/{queue_id}/preview")
    assert preview.status_code == 200, preview.json()
    content = preview.json()["content"]
    element = json.loads(content)[preview.json()["element_key"]]
    assert list(element.items()) == [("zebra_long_key", "WEB-1"), ("a", "Order WEB-1"), ("mm", "created")]
    assert _keys_in_text(content, list(FIELDS)) == list(FIELDS)

    delivery = ExportDelivery.objects.get(queue_id=queue_id)
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    [got] = reachable_receiver.received
    [sent_element] = json.loads(got.body).values()
    assert list(sent_element.items()) == [("zebra_long_key", "WEB-1"), ("a", "Order WEB-1"), ("mm", "created")]
    assert _keys_in_text(got.body.decode(), list(FIELDS)) == list(FIELDS)
    sent = [name for name in got.headers if name in HEADERS]
    assert sent == list(HEADERS)


def test_an_update_keeps_the_new_order(api: AdminApi) -> None:
    queue = ExportQueue.objects.create(
        account=api.tenant.account,
        name="reordered",
        entity_type="incoming_order_state_changes",
        transform={"type": "simple_json", "fields": {"a": "{order.order_identifier}", "zebra_long_key": "x"}},
        delivery={"type": "webhook", "url": "https://erp.example.com/hook", "secret": SECRET},
    )
    transform = {"type": "simple_json", "fields": FIELDS}

    answer = api.patch(f"export-queues/{queue.pk}", {"transform": transform})

    assert answer.status_code == 200, answer.json()
    assert list(answer.json()["transform"]["fields"]) == list(FIELDS)
    assert list(api.get(f"export-queues/{queue.pk}").json()["transform"]["fields"]) == list(FIELDS)


def test_the_admin_and_the_back_office_forms_show_the_configured_order(
    admin_client, tenant: Tenant, sign_in: SignIn
) -> None:
    typed = admin_queue_form(tenant, transform__type="simple_json", transform__fields=FIELDS, delivery__headers=HEADERS)
    saved = admin_client.post(admin_url(ExportQueue, "add"), typed)
    assert saved.status_code == 302
    queue = ExportQueue.objects.get(account=tenant.account)
    assert list(queue.transform["fields"]) == list(FIELDS) and list(queue.delivery["headers"]) == list(HEADERS)

    admin_form = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).context["adminform"].form
    edit = sign_in(tenant.account, "owner").get(f"/backoffice/exports/queues/{queue.pk}/edit/")
    for form in (admin_form, edit.context["form"]):
        assert list(json.loads(form["transform__fields"].value())) == list(FIELDS)
        assert list(json.loads(form["delivery__headers"].value())) == list(HEADERS)


def test_the_column_holds_the_json_text_as_written_with_every_digit(tenant: Tenant) -> None:
    transform = {"type": "csv", "zz": Decimal("12345678901234567.89"), "a": [Decimal("1.10"), None]}
    queue = ExportQueue.objects.create(
        account=tenant.account, name="text", entity_type="sales", transform=transform, delivery={}
    )
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(ExportQueue._meta.db_table)
        cursor.execute(f"SELECT transform FROM {table} WHERE id = %s", [queue.pk])  # noqa: S608
        assert cursor.fetchone()[0] == '{"type": "csv", "zz": 12345678901234567.89, "a": [1.1, null]}'
    assert ExportQueue.objects.get(pk=queue.pk).transform == transform


def test_a_lookup_by_key_is_refused_on_every_database() -> None:
    with pytest.raises(FieldError):
        ExportQueue.objects.filter(transform__type="csv").exists()
