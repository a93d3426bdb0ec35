"""Previews (API and admin) and deliveries render through the same bounded path: a template that amplifies its
output is stopped while it renders, wherever it runs. Time runs on a fake clock: no wall time."""

from __future__ import annotations

import pytest

from exports import services
from exports.models import ExportDelivery, ExportItem, ExportQueue, ExportStatus
from tests.support.admin import admin_url
from tests.support.api import AdminApi, error_fields
from tests.support.clocks import FakeClock
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

AMPLIFYING = {"type": "handlebars", "template": "{{{@root}}}" * 200}


@pytest.fixture
def fake_clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    # Only the transforms read this clock; the deadline passes at the seventh reading.
    clock = FakeClock()
    monkeypatch.setattr("exports.transforms.common.time", clock)
    monkeypatch.setattr("exports.transforms.common.RENDER_TIMEOUT_SECONDS", 5.0)
    return clock


def test_a_preview_stops_an_amplifying_template_while_it_renders(api: AdminApi, client, fake_clock: FakeClock) -> None:
    import_orders(client, api.tenant, "WEB-1")

    body = {"entity_type": "incoming_order_state_changes", "transform": AMPLIFYING}
    response = api.post("export-queues/preview", body)

    assert response.status_code == 400
    assert error_fields(response) == {"transform"}
    assert "longer than 5 seconds" in response.content.decode()
    assert fake_clock.readings <= 7


def test_a_stored_queues_preview_in_the_admin_stops_it_too(admin_client, tenant: Tenant, client, fake_clock) -> None:
    queue = make_queue(tenant, "https://example.com/a", transform=AMPLIFYING)
    import_orders(client, tenant, "WEB-1")

    page = admin_client.get(admin_url(ExportQueue, "preview", queue.pk)).content.decode()

    assert "longer than 5 seconds" in page
    assert "preview-output" not in page


def test_a_delivery_stops_it_and_sends_nothing(tenant: Tenant, client, allow_loopback, receiver, fake_clock) -> None:
    make_queue(tenant, receiver.url, transform=AMPLIFYING)
    import_orders(client, tenant, "WEB-1")

    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.FAILURE

    assert receiver.received == []
    assert "longer than 5 seconds" in ExportItem.objects.get().message
