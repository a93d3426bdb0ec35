"""An account with something on every back-office page, made through the service's own endpoints: orders and a
rejected one through the import API, their exports delivered to a real receiver on 127.0.0.1 (delivered, failed
for good, waiting for a retry), sales with and without a warning through the POS API in a register day that is then
closed (its statement); and members who sign in with a password. The browser tests and ``bench/screenshots.py``
show it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from decimal import Decimal

from rest_framework.test import APIClient

from accounts import services as account_services
from accounts.models import Register
from exports import services as export_services
from exports.models import ExportItem, ExportQueue
from imports.models import ImportItem
from ledger.models import RegisterCloseStatement, Sale
from ledger.services.registers import close_register, open_register
from tests.support.api import PosApi
from tests.support.checkouts import checkout_body
from tests.support.imports import materialise_pending, order
from tests.support.queues import make_queue
from tests.support.receivers import Receiver
from tests.support.tenants import Tenant

# How the receiver answers the orders' deliveries, in order: two delivered, a 400 (failed for good), two 503s
# (retryable: each waits for its next attempt), a 422 (failed for good).
ANSWERS: list[int | str] = [
    200,
    200,
    "say:400:customer_email is required",
    "say:503:down for maintenance until 06:00",
    "say:503:down for maintenance until 06:00",
    "say:422:unknown product 1001",
]
ORDERS = ["web-10041", "web-10042", "web-10043", "web-10044", "web-10045", "web-10046"]


@dataclass
class Showcase:
    queue: ExportQueue
    delivered: list[ExportItem]
    failed: list[ExportItem]
    waiting: list[ExportItem]
    rejected_import: ImportItem
    warned_sale: Sale
    statement: RegisterCloseStatement


def sign_in_member(tenant: Tenant, *, email: str, password: str, role: str = "owner") -> None:
    """A person who signs in with ``email`` and ``password``, a member of the tenant's account."""
    account_services.add_member(account=tenant.account, email=email, role=role, password=password)


def fill(tenant: Tenant, receiver: Receiver) -> Showcase:
    """The tenant's showcase; ``receiver`` answers the export deliveries (``OUTBOUND_ALLOWED_NETWORKS`` must allow
    127.0.0.1)."""
    client = APIClient()
    queue = make_queue(tenant, receiver.url, name="Orders to the ERP")
    bad = order("web-10047")
    bad["basket"]["line_items"][0]["price"] = -5  # rejected: its errors are the import item's page
    body = json.dumps({"orders": [*(order(identifier) for identifier in ORDERS), bad]})
    query = tenant.query(stock_location=tenant.stock_location.identifier)
    answer = client.generic("POST", f"/imports/incoming_orders?{query}", body, content_type="application/json")
    assert answer.status_code < 300, answer.content
    materialise_pending(tenant)

    items = list(ExportItem.objects.filter(queue=queue).order_by("pk"))
    receiver.script.extend(ANSWERS)
    for item in items:
        assert item.delivery_id is not None
        export_services.deliver(delivery_pk=item.delivery_id)
    for item in items:
        item.refresh_from_db()

    Register.objects.get_or_create(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    open_register(account=tenant.account, register_identifier="reg-1")
    pos = PosApi(client, tenant)
    for identifier, warn in (("co-20001", True), ("co-20002", False), ("co-20003", True)):
        sale = checkout_body(identifier=identifier, lines=[("p-1", "tops", 1, "250.00")])
        if warn:  # total_discounts not base_price less sub_total: stored as sent, with a warning
            basket = sale["sales"][0]["basket"]
            basket["line_items"][0].update(base_price=200, retail_price=200)
            basket.update(base_price=200, total_discounts=0)
        answer = pos.post("checkouts", sale)
        assert answer.status_code == 201, answer.content
    counted = [{"payment_type_identifier": "cash", "counted": Decimal("0.00")}]
    statement = close_register(account=tenant.account, register_identifier="reg-1", counted=counted)

    return Showcase(
        queue=queue,
        delivered=[i for i in items if i.status == "success"],
        failed=[i for i in items if i.status == "failure"],
        waiting=[i for i in items if i.status == "pending"],
        rejected_import=ImportItem.objects.get(account=tenant.account, identifier="web-10047"),
        warned_sale=Sale.objects.get(account=tenant.account, identifier="co-20001-s1"),
        statement=statement,
    )
