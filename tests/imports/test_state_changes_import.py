"""POST /imports/outgoing_order_state_changes and the decided transition rules (spec: Order states)."""

from __future__ import annotations

import pytest

from imports.models import ImportItem, ImportStatus
from orders.models import OrderState
from tests.factories import OutgoingOrderFactory
from tests.support.imports import materialise_pending, post

pytestmark = pytest.mark.django_db


def change(state: str, identifier: str = "out-1", **extra: object) -> dict[str, object]:
    return {"stock_location": "shop-1", "order_identifier": identifier, "state": state, **extra}


@pytest.fixture
def outgoing(tenant):
    return OutgoingOrderFactory(account=tenant.account, stock_location=tenant.stock_location, order_identifier="out-1")


def test_a_state_change_is_queued_then_applied_with_history(tenant, client, outgoing):
    cashier = {"display_name": "AB", "identifier": "c-7", "full_name": "Anne Berg"}
    r = post(client, tenant, "outgoing_order_state_changes", [change("processing", comment="picking", cashier=cashier)])
    assert r.status_code == 200
    assert r.json() == {"status": "OK", "message": "Import of 1 outgoing order state change(s) initiated"}
    outgoing.refresh_from_db()
    assert outgoing.state == OrderState.CREATED  # queued, not yet applied
    materialise_pending(tenant)
    outgoing.refresh_from_db()
    assert outgoing.state == OrderState.PROCESSING
    last = outgoing.state_changes.last()
    assert (last.previous_state, last.state, last.comment, last.cashier) == (
        "created",
        "processing",
        "picking",
        cashier,
    )


def test_changes_in_one_batch_apply_in_order(tenant, client, outgoing):
    post(client, tenant, "outgoing_order_state_changes", [change("processing"), change("ready"), change("completed")])
    materialise_pending(tenant)
    outgoing.refresh_from_db()
    assert outgoing.state == OrderState.COMPLETED
    assert [c.state for c in outgoing.state_changes.order_by("id")] == ["processing", "ready", "completed"]


def test_a_refused_transition_fails_in_the_import_log(tenant, client, outgoing):
    post(client, tenant, "outgoing_order_state_changes", [change("cancelled"), change("processing")])
    materialise_pending(tenant)
    outgoing.refresh_from_db()
    assert outgoing.state == OrderState.CANCELLED
    failed = ImportItem.objects.get(status=ImportStatus.FAILURE)
    assert failed.index == 1
    assert failed.message == "an order in state 'cancelled' cannot move to 'processing'"


def test_an_unknown_order_fails_in_the_import_log(tenant, client):
    post(client, tenant, "outgoing_order_state_changes", [change("ready", "nope")])
    materialise_pending(tenant)
    item = ImportItem.objects.get()
    assert item.status == ImportStatus.FAILURE
    assert "no outgoing order 'nope'" in item.message


def test_an_unknown_stock_location_is_refused_in_the_request(tenant, client, outgoing):
    r = post(client, tenant, "outgoing_order_state_changes", [{**change("ready"), "stock_location": "nowhere"}])
    assert r.status_code == 400
    assert r.json()["failed"][0]["errors"][0] == {
        "field": "stock_location",
        "message": "unknown stock location 'nowhere'",
        "code": "unknown",
    }


def test_the_body_must_be_an_array(tenant, client):
    r = post(client, tenant, "outgoing_order_state_changes", change("ready"))
    assert r.status_code == 400
    assert r.json()["errors"][0]["code"] == "invalid_type"


def test_an_order_of_another_account_is_not_found(tenant, other_tenant, client):
    OutgoingOrderFactory(
        account=other_tenant.account, stock_location=other_tenant.stock_location, order_identifier="out-1"
    )
    post(client, tenant, "outgoing_order_state_changes", [change("ready")])
    materialise_pending(tenant)
    assert ImportItem.objects.get().status == ImportStatus.FAILURE
