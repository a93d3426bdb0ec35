"""Export queues in tests: a real-time web hook queue of order state changes to a receiver, signed with `SECRET`;
the admin's add form and the back-office's form of one as a browser posts them; an item whose delivery failed once."""

from __future__ import annotations

import base64
import json
from typing import Any

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from tests.support.tenants import Tenant

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


# A queue's own fields as a browser posts them, in the admin's and the back-office's forms alike.
QUEUE_FORM = {
    "name": "orders to erp",
    "entity_type": "incoming_order_state_changes",
    "enabled": "on",
    "trigger": "realtime",
    "daily_at": "",
}


def backoffice_queue_form(url: str = "https://erp.example.com/hook", **fields: Any) -> dict[str, str]:
    """The back-office's queue form as a browser posts it: the queue's fields and the typed web hook (``do``: the
    button pressed)."""
    data: dict[str, Any] = {
        **QUEUE_FORM,
        "concurrency": "",
        "transform__type": "identity",
        "delivery__type": "webhook",
        "delivery__url": url,
        "delivery__headers": {"X-Shop": "acme"},
        "delivery__secret": SECRET,
        "transform__columns": "",
        "transform__fields": "",
        "do": "save",
        **fields,
    }
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items() if v is not None}


def admin_queue_form(tenant: Tenant | None, **fields: Any) -> dict[str, str]:
    """The queue admin's add form as a browser posts it with the typed fields (rows tables as the JSON their script
    writes): an identity web hook to erp.example.com signed with ``SECRET``; ``None`` leaves a field out."""
    data: dict[str, Any] = {
        **QUEUE_FORM,
        "transform__type": "identity",
        "delivery__type": "webhook",
        "delivery__url": "https://erp.example.com/hook",
        "delivery__secret": SECRET,
        "delivery__headers": "{}",
        "transform__columns": "[]",
        "transform__fields": "{}",
        "_save": "Save",
        **fields,
    }
    if tenant is not None:
        data["account"] = str(tenant.account.pk)
    return {k: v if isinstance(v, str) else json.dumps(v) for k, v in data.items() if v is not None}


def exported_item(queue: ExportQueue, key: str, status: str = ExportStatus.FAILURE, **delivery: Any) -> ExportItem:
    """An export item of the queue with a delivery that reached ``status`` after one attempt (``delivery``: more of
    its fields, or others than the defaults)."""
    sent = ExportDelivery.objects.create(
        account=queue.account,
        queue=queue,
        delivery_id=services.new_delivery_id(),
        status=status,
        **{"attempts": 1, "next_attempt_at": "2025-01-15T09:30:00Z", **delivery},
    )
    return ExportItem.objects.create(
        account=queue.account,
        queue=queue,
        entity_type=queue.entity_type,
        object_id=1,
        element_key=key,
        status=status,
        delivery=sent,
    )


def failed_item(queue: ExportQueue, key: str, status: str = ExportStatus.FAILURE) -> ExportItem:
    """``exported_item`` whose one attempt was answered HTTP 500."""
    item = exported_item(queue, key, status, status_code=500)
    assert item.delivery is not None
    ExportAttempt.objects.create(
        account=queue.account,
        delivery=item.delivery,
        number=1,
        ok=False,
        status_code=500,
        error="HTTP 500",
        duration_ms=12,
        started_at="2025-01-15T09:30:00Z",
    )
    return item
