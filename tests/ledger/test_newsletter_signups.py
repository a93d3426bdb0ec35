"""Newsletter signups: POST /api/v1/pos/newsletter-signups, the exported event, the admin read list."""

from __future__ import annotations

import time
from decimal import Decimal

import pytest

from exports.models import ExportItem, ExportQueue
from ledger.models import NewsletterSignup
from tests.factories import RegisterFactory, StockLocationFactory
from tests.support.api import AdminApi, error_fields, results

pytestmark = pytest.mark.django_db


def test_a_signup_is_stored_and_answered_with_201(pos) -> None:
    response = pos.post("newsletter-signups", {"email": "jane@example.com"})

    assert response.status_code == 201
    body = response.json()
    assert body["email"] == "jane@example.com"
    assert body["document"]["email"] == "jane@example.com"
    assert abs(body["document"]["timestamp"] - time.time()) < 60
    assert NewsletterSignup.objects.get().email == "jane@example.com"


def test_a_register_gives_the_source_and_stock_location(pos, tenant, register) -> None:
    register.name = "Till 1"
    register.save()

    body = pos.post("newsletter-signups", {"email": "jane@example.com", "register_id": "reg-1"}).json()

    assert body["stock_location"] == "shop-1"
    assert body["register"] == "reg-1"
    assert body["document"]["source"] == {
        "market_id": "dk",
        "shop_id": "shop-1",
        "shop_name": tenant.stock_location.name,
        "register_id": "reg-1",
        "register_name": "Till 1",
    }


def test_a_shop_alone_gives_a_source_without_register(pos, tenant) -> None:
    body = pos.post("newsletter-signups", {"email": "jane@example.com", "shop_id": "shop-1"}).json()

    assert body["register"] is None
    assert set(body["document"]["source"]) == {"market_id", "shop_id", "shop_name"}


def test_the_document_keeps_the_given_names_and_timestamp(pos) -> None:
    signup = {"email": "j@example.com", "first_name": "Jane", "last_name": "Doe", "name": "", "timestamp": 1736933400.5}

    pos.post("newsletter-signups", signup)

    assert NewsletterSignup.objects.get().document == {
        "email": "j@example.com",
        "first_name": "Jane",
        "last_name": "Doe",
        "timestamp": Decimal("1736933400.5"),
    }


def test_the_address_is_trimmed_and_its_domain_lower_cased(pos) -> None:
    body = pos.post("newsletter-signups", {"email": "  Jane.Doe@Example.COM "}).json()

    assert body["email"] == "Jane.Doe@example.com"


def test_the_same_address_twice_is_two_events(pos) -> None:
    pos.post("newsletter-signups", {"email": "jane@example.com"})
    pos.post("newsletter-signups", {"email": "jane@example.com"})

    assert NewsletterSignup.objects.count() == 2


def test_a_signup_is_enqueued_with_its_stock_location(pos, tenant, register) -> None:
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name="signups",
        entity_type="newsletter_signups",
        trigger="daily",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://crm.example.com/hook"},
        filters={"stock_locations": ["shop-1"]},
    )
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")

    pos.post("newsletter-signups", {"email": "a@example.com", "register_id": "reg-1"})
    pos.post("newsletter-signups", {"email": "b@example.com", "shop_id": "shop-2"})

    first = NewsletterSignup.objects.get(email="a@example.com")
    assert [(i.object_id, i.element_key) for i in ExportItem.objects.filter(queue=queue)] == [
        (first.pk, f"signup-{first.pk}")
    ]


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "email"),
        ({"email": None}, "email"),
        ({"email": 42}, "email"),
        ({"email": "not-an-address"}, "email"),
        ({"email": "a@b"}, "email"),
        ({"email": "x" * 320 + "@example.com"}, "email"),
        ({"email": "a@example.com", "first_name": ["Jane"]}, "first_name"),
        ({"email": "a@example.com", "timestamp": "now"}, "timestamp"),
        ({"email": "a@example.com", "timestamp": -1}, "timestamp"),
        ({"email": "a@example.com", "timestamp": 1_000}, "timestamp"),
        ({"email": "a@example.com", "timestamp": time.time() + 3 * 86400}, "timestamp"),
        ({"email": "a@example.com", "register_id": "nope"}, "register_id"),
        ({"email": "a@example.com", "shop_id": "nope"}, "shop_id"),
        ({"email": "a@example.com", "register_id": 1}, "register_id"),
    ],
)
def test_invalid_fields_are_refused_by_name(pos, body, field) -> None:
    response = pos.post("newsletter-signups", body)

    assert response.status_code == 400
    assert field in error_fields(response)
    assert not NewsletterSignup.objects.exists()


def test_a_register_of_another_shop_than_the_given_one_is_refused(pos, tenant, register) -> None:
    StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")

    response = pos.post("newsletter-signups", {"email": "a@example.com", "register_id": "reg-1", "shop_id": "shop-2"})

    assert error_fields(response) == {"shop_id"}


def test_a_register_of_another_account_is_unknown(pos, other_tenant) -> None:
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-9")

    response = pos.post("newsletter-signups", {"email": "a@example.com", "register_id": "reg-9"})

    assert error_fields(response) == {"register_id"}


@pytest.mark.parametrize("data", ['{"email": "a@example.com"', "[]", "null", ""])
def test_a_body_that_is_not_a_json_object_is_refused(pos, data) -> None:
    response = pos.post("newsletter-signups", data)

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"


def test_unknown_fields_are_ignored(pos) -> None:
    response = pos.post("newsletter-signups", {"email": "a@example.com", "consent": True, "phone": "+45"})

    assert response.status_code == 201
    assert set(response.json()["document"]) == {"email", "timestamp"}


def test_unicode_names_are_kept(pos) -> None:
    response = pos.post("newsletter-signups", {"email": "soren@exämple.dk", "name": "Søren Ærø 😀"})

    assert response.status_code == 201
    assert response.json()["document"]["name"] == "Søren Ærø 😀"


def test_an_admin_key_cannot_post_a_signup(pos, tenant) -> None:
    url = f"/api/v1/pos/newsletter-signups?{tenant.query(tenant.admin_key)}"

    response = pos.client.post(url, {"email": "a@example.com"}, format="json")

    assert response.status_code == 403


def test_the_admin_list_is_newest_first_and_filters_by_email(api, pos, other_tenant) -> None:
    pos.post("newsletter-signups", {"email": "a@example.com"})
    pos.post("newsletter-signups", {"email": "b@example.com", "shop_id": "shop-1"})
    AdminApi(api.client, other_tenant)  # another account's signups never show
    NewsletterSignup.objects.create(account=other_tenant.account, email="a@example.com", document={})

    assert [s["email"] for s in results(api.get("newsletter-signups"))] == ["b@example.com", "a@example.com"]
    assert [s["email"] for s in results(api.get("newsletter-signups", email="A@example.com"))] == ["a@example.com"]
    assert [s["email"] for s in results(api.get("newsletter-signups", stock_location="shop-1"))] == ["b@example.com"]


def test_a_pos_key_cannot_read_the_signup_list(api, tenant) -> None:
    url = f"/api/v1/newsletter-signups/?{tenant.query(tenant.pos_key)}"

    assert api.client.get(url).status_code == 403
