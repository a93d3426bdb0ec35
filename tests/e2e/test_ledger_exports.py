"""Every exportable entity reaches a queue configured for its type, end to end: HTTP requests to a live
server create them, a real Celery worker delivers them to a real web hook receiver (spec: Events)."""

from __future__ import annotations

import json
from typing import Any

import pytest
import requests
from standardwebhooks import Webhook

from core.outbox import EntityType
from exports.models import ExportItem, ExportStatus
from orders.models import IncomingOrder, OutgoingOrder
from tests.factories import RegisterFactory
from tests.support.checkouts import checkout_body
from tests.support.imports import batch, post_orders
from tests.support.queues import SECRET, make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant
from tests.support.waiting import wait_until
from tests.support.workers import CeleryWorkerProcess

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]


def call(live_server: Any, tenant: Tenant, key: str, path: str, body: Any) -> requests.Response:
    response = requests.post(
        f"{live_server.url}/api/v1/{path}?{tenant.query(key)}",
        data=json.dumps(body, default=str),
        headers={"Content-Type": "application/json", "Connection": "close"},
        timeout=30,
    )
    assert response.status_code in (200, 201), (path, response.status_code, response.text)
    return response


def test_every_entity_type_is_delivered_by_the_worker_to_the_queue_of_its_type(
    live_server: Any, tenant: Tenant, reachable_receiver: Receiver, celery_worker_process: CeleryWorkerProcess
) -> None:
    for entity_type in EntityType.values:
        make_queue(tenant, f"{reachable_receiver.url}/{entity_type}", name=entity_type, entity_type=entity_type)
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")

    # Product edit event (back office), newsletter signup, checkout -> sale -> stock event (POS).
    call(live_server, tenant, tenant.admin_key, "products", {"id": "p-1", "name": "T-shirt", "retail_price": 100})
    call(live_server, tenant, tenant.pos_key, "pos/newsletter-signups", {"email": "jane@example.com"})
    checkout = checkout_body(identifier="co-e2e", lines=[("p-1", "tops", 2, "100.00")])
    call(live_server, tenant, tenant.pos_key, "pos/checkouts", checkout)
    # Outgoing order to an external system; an imported incoming order moved on by the shop.
    order = {"order_identifier": "out-1", "basket": checkout["sales"][0]["basket"]}
    call(
        live_server,
        tenant,
        tenant.pos_key,
        "pos/outgoing-orders",
        {"stock_location": "shop-1", "destination": "external", "order": order},
    )
    assert post_orders(live_server, tenant, batch("in", 1)).status_code == 200
    wait_until(
        lambda: IncomingOrder.objects.filter(order_identifier="in-0").exists(),
        60,
        message="the worker to materialise the imported order",
    )
    call(live_server, tenant, tenant.pos_key, "pos/incoming-orders/shop-1/in-0/state", {"state": "processing"})
    # The register closes: its statement.
    call(live_server, tenant, tenant.pos_key, "pos/registers/reg-1/close", CLOSE_BODY)

    def delivered() -> set[str]:
        return {r.path.rsplit("/", 1)[-1].split("?")[0] for r in reachable_receiver.received}

    wait_until(lambda: delivered() == set(EntityType.values), 90, message="one delivery of every entity type")
    wait_until(
        lambda: not ExportItem.objects.filter(account=tenant.account).exclude(status=ExportStatus.SUCCESS).exists(),
        60,
        message="every export item logged as a success",
    )
    keys: dict[str, set[str]] = {}
    for got in reachable_receiver.received:
        Webhook(SECRET).verify(got.body, got.headers)
        [(key, _entity)] = json.loads(got.body).items()  # real time: exactly one element per export
        keys.setdefault(got.path.rsplit("/", 1)[-1], set()).add(key)
    assert keys["checkouts"] == {"co-e2e"}
    assert keys["sales"] == {"co-e2e-s1"}
    assert keys["register_close_statements"] == {"reg-1:1"}
    assert keys["outgoing_orders"] == {f"out-1:{OutgoingOrder.objects.get().pk}"}
    assert {k.split(":")[0] for k in keys["incoming_order_state_changes"]} == {"in-0"}
    assert len(keys["incoming_order_state_changes"]) == 2  # created (import) and processing (shop)
    assert {k.split(":")[0] for k in keys["product_edit_events"]} == {"p-1"}
    assert len(keys["newsletter_signups"]) == 1
    assert len(keys["stock_events"]) == 1


CLOSE_BODY: dict[str, Any] = {"counted": [{"payment_type_identifier": "cash", "currency_code": "DKK", "counted": 0}]}
