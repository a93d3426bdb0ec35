"""Whole queues, configured as staff would, delivering a stored entity: transform and delivery together."""

from __future__ import annotations

import email

import pytest

from exports import services
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from tests.support.api import AdminApi
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.servers import FTP_PASSWORD, FTP_USER

pytestmark = pytest.mark.django_db


def test_an_hourly_csv_over_ftp_carries_every_waiting_order_in_one_file(tenant, client, allow_loopback, ftp_server):
    make_queue(
        tenant,
        "unused",
        trigger="hourly",
        transform={
            "type": "csv",
            "rows": "entity",
            "columns": [
                {"header": "Order", "path": "order.order_identifier"},
                {"header": "State", "path": "state.order_state"},
                {"header": "Currency", "path": "order.basket.currency"},
            ],
        },
        delivery={
            "type": "ftp",
            "host": "127.0.0.1",
            "port": ftp_server.port,
            "username": FTP_USER,
            "password": FTP_PASSWORD,
            "path": "exports/{queue_id}/{delivery_id}.{ext}",
        },
    )
    import_orders(client, tenant, "web-1", "web-2")
    assert services.run_cron() == 1
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    [uploaded] = (ftp_server.root / "exports").rglob("*.csv")
    assert uploaded.name == f"{delivery.delivery_id}.csv"
    assert uploaded.read_text().splitlines() == ["Order;State;Currency", "web-1;created;DKK", "web-2;created;DKK"]
    assert set(ExportItem.objects.values_list("status", flat=True)) == {ExportStatus.SUCCESS}


def test_a_handlebars_html_mail_reaches_the_recipients(tenant, client, smtp_server):
    make_queue(
        tenant,
        "unused",
        transform={
            "type": "handlebars",
            "content_type": "text/html",
            "template": "{{#each elements}}<p>{{order.order_identifier}} is {{state.order_state}}</p>{{/each}}",
        },
        delivery={"type": "email", "recipients": ["ops@example.com", "erp@example.com"]},
    )
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    [envelope] = smtp_server.recorder.envelopes
    assert sorted(envelope.rcpt_tos) == ["erp@example.com", "ops@example.com"]
    message = email.message_from_bytes(envelope.content)
    assert message["X-Delivery-Id"] == delivery.delivery_id
    [attachment] = [part for part in message.walk() if part.get_filename()]
    assert attachment.get_content_type() == "text/html"
    assert attachment.get_payload(decode=True) == b"<p>web-1 is created</p>"


def test_a_stored_queue_sending_as_someone_else_still_saves_and_now_sends_from_the_deployment(
    tenant, client, smtp_server, settings
):
    settings.EXPORT_EMAIL_FROM = "Retail exports <exports@operator.example>"
    queue = make_queue(
        tenant,
        "unused",
        name="legacy",
        delivery={"type": "email", "recipients": ["ops@example.com"], "from_email": "ceo@bank.example"},
    )
    queue.delivery = {k: v for k, v in queue.delivery.items() if k in ("type", "recipients", "from_email")}
    queue.save(update_fields=["delivery"])

    # Saved again through the API (the service validates the whole stored configuration).
    response = AdminApi(client, tenant).patch(f"export-queues/{queue.pk}", {"name": "legacy, renamed"})
    assert response.status_code == 200, response.json()
    assert ExportQueue.objects.get().delivery["from_email"] == "ceo@bank.example"

    import_orders(client, tenant, "web-1")
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SUCCESS
    [envelope] = smtp_server.recorder.envelopes
    assert envelope.mail_from == "exports@operator.example"
    message = email.message_from_bytes(envelope.content)
    assert message["From"] == "Retail exports <exports@operator.example>"
    assert message["Reply-To"] == "ceo@bank.example"


def test_a_voided_skip_rule_marks_items_skipped_not_failed(tenant, client, allow_loopback, ftp_server):
    make_queue(
        tenant,
        "unused",
        transform={"type": "identity", "skip_if": {"path": "state.order_state", "equals": "created"}},
        delivery={
            "type": "ftp",
            "host": "127.0.0.1",
            "port": ftp_server.port,
            "username": FTP_USER,
            "password": FTP_PASSWORD,
        },
    )
    import_orders(client, tenant, "web-1")
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SKIPPED
    item = ExportItem.objects.get()
    assert item.status == ExportStatus.SKIPPED
    assert "created" in item.message
    assert not list(ftp_server.root.rglob("*.json"))
