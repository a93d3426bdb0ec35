from __future__ import annotations

import base64
from collections.abc import Iterator
from typing import Any

import pytest

from exports.models import ExportQueue
from tests.conftest import Tenant
from tests.support.receivers import Receiver, running_receiver

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


@pytest.fixture
def allow_loopback(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


def make_queue(tenant: Tenant, url: str, **fields: Any) -> ExportQueue:
    delivery = {"type": "webhook", "url": url, "headers": {"X-Shop": "acme"}, "secret": SECRET, "read_timeout": 2}
    delivery.update(fields.pop("delivery", {}))
    defaults: dict[str, Any] = {
        "name": fields.pop("name", "orders to webshop"),
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "identity"},
        "delivery": delivery,
    }
    defaults.update(fields)
    return ExportQueue.objects.create(account=tenant.account, **defaults)
