"""Export queues in tests: a real-time web hook queue of order state changes to a receiver, signed with `SECRET`."""

from __future__ import annotations

import base64
from typing import Any

from exports.models import ExportQueue
from tests.conftest import Tenant

SECRET = "whsec_" + base64.b64encode(b"0123456789abcdef0123456789abcdef").decode()


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
