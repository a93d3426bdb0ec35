"""Cron batches are streamed: items read in pages, rendered into a temporary file, uploaded from it."""

from __future__ import annotations

import io
import json

import pytest
from rest_framework.test import APIClient

from exports import services
from exports.models import ExportDelivery, ExportItem, ExportStatus
from exports.services import attempts
from exports.transforms import REGISTRY as TRANSFORMS
from exports.transforms.base import Element, Rendered
from ledger.models import Expense, Sale
from tests.factories import RegisterFactory
from tests.support.api import PosApi
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.register_day import register_day
from tests.support.servers import FTP_PASSWORD, FTP_USER

pytestmark = pytest.mark.django_db

CSV = {
    "type": "csv",
    "rows": "entity",
    "columns": [
        {"header": "Order", "path": "order.order_identifier"},
        {"header": "State", "path": "state.order_state"},
    ],
}


def ftp(ftp_server) -> dict:
    return {
        "type": "ftp",
        "host": "127.0.0.1",
        "port": ftp_server.port,
        "username": FTP_USER,
        "password": FTP_PASSWORD,
        "path": "exports/{delivery_id}.{ext}",
    }


def test_a_batch_larger_than_a_page_arrives_whole_and_in_order(tenant, client, allow_loopback, ftp_server, monkeypatch):
    monkeypatch.setattr(attempts, "STREAM_PAGE", 2)
    monkeypatch.setattr(attempts, "STREAM_SPOOL_BYTES", 16)  # the render moves to a real temporary file
    make_queue(tenant, "unused", trigger="hourly", transform=CSV, delivery=ftp(ftp_server))
    import_orders(client, tenant, *(f"web-{n}" for n in range(7)))
    assert services.run_cron() == 1
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SUCCESS
    [uploaded] = (ftp_server.root / "exports").glob("*.csv")
    assert uploaded.read_text().splitlines() == ["Order;State", *(f"web-{n};created" for n in range(7))]
    assert set(ExportItem.objects.values_list("status", flat=True)) == {ExportStatus.SUCCESS}


def test_skipped_elements_of_a_streamed_batch_are_logged_as_skipped(
    tenant, client, allow_loopback, ftp_server, monkeypatch
):
    monkeypatch.setattr(attempts, "STREAM_PAGE", 2)
    transform = {**CSV, "skip_if": {"path": "order.order_identifier", "equals": "web-3"}}
    make_queue(tenant, "unused", trigger="hourly", transform=transform, delivery=ftp(ftp_server))
    import_orders(client, tenant, *(f"web-{n}" for n in range(5)))
    services.run_cron()
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SUCCESS
    statuses = dict(ExportItem.objects.values_list("element_key", "status"))
    assert sorted(key.split(":")[0] for key, status in statuses.items() if status == ExportStatus.SKIPPED) == ["web-3"]
    [uploaded] = (ftp_server.root / "exports").glob("*.csv")
    assert "web-3" not in uploaded.read_text()


def test_a_streamed_batch_whose_every_element_is_skipped_is_skipped_and_sends_nothing(
    tenant, client, allow_loopback, ftp_server
):
    transform = {**CSV, "skip_if": {"path": "state.order_state", "equals": "created"}}
    make_queue(tenant, "unused", trigger="hourly", transform=transform, delivery=ftp(ftp_server))
    import_orders(client, tenant, "web-1", "web-2")
    services.run_cron()
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SKIPPED
    assert not (ftp_server.root / "exports").exists()
    assert set(ExportItem.objects.values_list("status", flat=True)) == {ExportStatus.SKIPPED}


def test_a_failed_streamed_upload_marks_every_item_failed_with_the_error(tenant, client, allow_loopback, ftp_server):
    make_queue(tenant, "unused", trigger="hourly", transform=CSV, delivery={**ftp(ftp_server), "password": "wrong"})
    import_orders(client, tenant, "web-1", "web-2")
    services.run_cron()
    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.FAILURE
    messages = set(ExportItem.objects.values_list("status", "message"))
    assert len(messages) == 1
    status, message = messages.pop()
    assert status == ExportStatus.FAILURE and "login failed" in message and "wrong" not in message


ELEMENTS = [
    Element(f"k{n}", {"identifier": f"s{n}", "base_currency_code": "DKK", "summary": {"total": n}}) for n in range(5)
]


@pytest.mark.made_up_entities
@pytest.mark.parametrize(
    "config",
    [
        {"type": "identity"},
        {"type": "csv", "rows": "entity", "columns": [{"header": "Id", "path": "identifier"}], "bom": True},
        {"type": "csv", "rows": "entity", "columns": [{"header": "T", "path": "summary.total", "format": "money"}]},
    ],
)
def test_a_streamed_render_writes_exactly_what_the_in_memory_render_returns(config, context_for_render):
    transform = TRANSFORMS[config["type"]]
    in_memory = transform.render(ELEMENTS, context_for_render, config)
    out = io.BytesIO(b"left alone")
    out.seek(0, io.SEEK_END)
    streamed = transform.render_to(iter(ELEMENTS), context_for_render, config, out)
    assert out.getvalue() == b"left alone" + in_memory.content
    assert (streamed.content_type, streamed.extension) == (in_memory.content_type, in_memory.extension)
    if config["type"] == "identity":
        assert list(json.loads(in_memory.content)) == [f"k{n}" for n in range(5)]


def test_a_template_transform_streams_through_the_in_memory_render(context_for_render):
    config = {"type": "mustache", "template": "{{#elements}}{{identifier}} {{/elements}}"}
    out = io.BytesIO()
    rendered = TRANSFORMS["mustache"].render_to(iter(ELEMENTS), context_for_render, config, out)
    assert rendered.open().read() == b"s0 s1 s2 s3 s4 "


def test_a_file_backed_output_is_read_whole_for_web_hooks_and_e_mail():
    rendered = Rendered(b"", "text/csv", "csv", file=io.BytesIO(b"a;b\r\n"))
    assert rendered.body() == b"a;b\r\n"
    assert rendered.open().read() == b"a;b\r\n"


@pytest.fixture
def context_for_render():
    from datetime import UTC, datetime

    from exports.transforms.base import RenderContext

    return RenderContext(
        queue={"id": 1, "name": "q", "entity_type": "sales", "trigger": "daily"},
        account={"identifier": "acme", "name": "Acme"},
        now=datetime(2026, 11, 22, 12, 0, tzinfo=UTC),
        delivery_id="msg_1",
    )


def test_a_streamed_batch_of_sales_is_the_csv_of_their_whole_documents(
    tenant, allow_loopback, ftp_server, monkeypatch, context_for_render
):
    monkeypatch.setattr(attempts, "STREAM_PAGE", 2)
    transform = {
        "type": "csv",
        "rows": "entity",
        "columns": [
            {"header": "Sale", "path": "identifier"},
            {"header": "Total", "path": "summary.total", "format": "money"},
            {"header": "Type", "derived": "type"},
            {"header": "Customer", "path": "summary.customer"},
        ],
        "skip_voided": True,
    }
    make_queue(tenant, "unused", entity_type="sales", trigger="hourly", transform=transform, delivery=ftp(ftp_server))
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    Expense.objects.create(account=tenant.account, expense_id="coffee", name={"en": "Coffee"})
    pos = PosApi(APIClient(), tenant)
    for body in register_day():
        assert pos.post("checkouts", body).status_code == 201
    services.run_cron()

    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.SUCCESS

    sales = Sale.objects.order_by("pk")
    whole = [Element(sale.identifier, sale.document) for sale in sales]
    [uploaded] = (ftp_server.root / "exports").glob("*.csv")
    assert uploaded.read_bytes() == TRANSFORMS["csv"].render(whole, context_for_render, transform).content
    assert ExportItem.objects.filter(status=ExportStatus.SKIPPED).count() == 1  # the voided sale
