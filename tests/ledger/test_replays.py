"""Posts a sender repeats because it lost the answer record nothing twice: stock events and newsletter
signups carry an optional ``identifier`` of the sender's."""

from __future__ import annotations

import pytest

from ledger.models import NewsletterSignup, StockEvent
from tests.support.stock import event, level

pytestmark = pytest.mark.django_db


def test_a_repeated_stock_event_moves_stock_once_and_answers_the_stored_event(pos, tenant):
    first = pos.post("stock-events", event("received", adjustment=5, identifier="rcv-1"))
    again = pos.post("stock-events", event("received", adjustment=5, identifier="rcv-1"))
    assert first.status_code == again.status_code == 201
    assert again.json()["stock_events"] == first.json()["stock_events"]
    assert StockEvent.objects.filter(identifier="rcv-1").count() == 1
    assert level(tenant) == 5


def test_a_batch_with_one_new_and_one_known_event_applies_only_the_new_one(pos, tenant):
    pos.post("stock-events", event("received", adjustment=5, identifier="rcv-1"))
    body = [event("received", adjustment=5, identifier="rcv-1"), event("received", adjustment=2, identifier="rcv-2")]
    answer = pos.post("stock-events", body).json()
    assert [e["adjustment"] for e in answer["stock_events"]] == [5, 2]
    assert level(tenant) == 7


def test_an_identifier_twice_in_one_request_is_recorded_once(pos, tenant):
    body = [event("received", adjustment=5, identifier="rcv-1"), event("received", adjustment=5, identifier="rcv-1")]
    answer = pos.post("stock-events", body).json()
    assert len({e["id"] for e in answer["stock_events"]}) == 1
    assert level(tenant) == 5


def test_events_without_identifiers_are_never_taken_for_replays(pos, tenant):
    pos.post("stock-events", [event("received", adjustment=1), event("received", adjustment=1)])
    pos.post("stock-events", event("received", adjustment=1))
    assert level(tenant) == 3


def test_identifiers_are_per_account(pos, tenant, other_tenant, client):
    from tests.support.api import PosApi

    pos.post("stock-events", event("received", adjustment=5, identifier="rcv-1"))
    assert PosApi(client, other_tenant).post("stock-events", event("received", identifier="rcv-1")).status_code == 201
    assert StockEvent.objects.filter(identifier="rcv-1").count() == 2


def test_a_repeated_imported_reset_applies_once(client, tenant):
    import json

    body = json.dumps(
        {
            "stock_events": [
                {"product_id": "1001", "stock_location_id": "shop-1", "adjustment": 4, "identifier": "erp-7"}
            ]
        }
    )
    for _ in range(2):
        response = client.post(f"/imports/stock_events?{tenant.query()}", body, content_type="application/json")
        assert response.status_code == 200, response.json()
    assert level(tenant) == 4


def test_a_repeated_signup_answers_the_stored_one_with_200(pos):
    first = pos.post("newsletter-signups", {"email": "jane@example.com", "identifier": "app-1"})
    again = pos.post("newsletter-signups", {"email": "jane@example.com", "identifier": "app-1"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert NewsletterSignup.objects.count() == 1


def test_signups_without_identifier_are_each_an_event(pos):
    pos.post("newsletter-signups", {"email": "jane@example.com"})
    pos.post("newsletter-signups", {"email": "jane@example.com"})
    assert NewsletterSignup.objects.count() == 2


def test_a_repeated_close_answers_the_same_statement_with_200(pos, tenant, register):
    from ledger.models import RegisterCloseStatement

    body = {"counted": [{"payment_type_identifier": "cash", "counted": 0}], "identifier": "close-1"}
    pos.post("registers/reg-1/open", {"cash_total_at_open": 0})
    first = pos.post("registers/reg-1/close", body)
    again = pos.post("registers/reg-1/close", body)
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["id"] == first.json()["id"]
    assert RegisterCloseStatement.objects.count() == 1


def test_a_close_without_identifier_of_a_closed_register_is_still_a_conflict(pos, tenant, register):
    body = {"counted": [{"payment_type_identifier": "cash", "counted": 0}]}
    pos.post("registers/reg-1/open", {"cash_total_at_open": 0})
    assert pos.post("registers/reg-1/close", body).status_code == 201
    assert pos.post("registers/reg-1/close", body).status_code == 409
