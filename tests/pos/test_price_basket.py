"""The admin's "Price a basket" page: staff price a basket with the market's campaigns and
product rules and see which campaigns fired on which units and why others did not. Nothing is stored."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.http import HttpResponse
from django.test import Client
from django.urls import reverse

from campaigns.models import Campaign
from tests.factories import ProductRuleFactory
from tests.support.admin import admin_url
from tests.support.campaigns import JEANS_10, TSHIRTS_15, stored_campaign
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

PAGE = "admin:campaigns_campaign_price_basket"


def submit(client: Client, tenant: Tenant, lines: Any, **fields: str) -> HttpResponse:
    data = {
        "account": tenant.account.identifier,
        "market": "dk",
        "customer": "",
        "line_items": lines if isinstance(lines, str) else json.dumps(lines),
        **fields,
    }
    return client.post(reverse(PAGE), data)


THREE_TSHIRTS = [{"line_item_id": "li-1", "id": "tshirt", "quantity": 3, "unit_price": 9.95}]


def test_the_campaign_list_links_to_the_page(admin_client: Client, tenant: Tenant) -> None:
    response = admin_client.get(admin_url(Campaign, "changelist"))

    assert reverse(PAGE) in response.content.decode()


def test_the_page_shows_a_form_with_an_example_basket(admin_client: Client, tenant: Tenant) -> None:
    response = admin_client.get(reverse(PAGE))

    assert response.status_code == 200
    assert "line_item_id" in response.content.decode()
    assert "priced-lines" not in response.content.decode()


def test_a_basket_shows_its_priced_lines_and_totals(admin_client: Client, tenant: Tenant) -> None:
    stored_campaign(tenant, TSHIRTS_15)

    response = submit(admin_client, tenant, THREE_TSHIRTS)

    assert response.status_code == 200
    assert response.context["summary"]["total"] == Decimal("25.38")
    [row] = response.context["lines"]
    assert [(d["campaign_id"], str(d["amount"]), d["units"]) for d in row["discounts"]] == [
        ("tshirts-15", "4.47", "all units")
    ]
    html = response.content.decode()
    assert 'class="basket-total">25.38<' in html


def test_the_explanation_shows_what_fired_on_which_units_and_why_not(admin_client: Client, tenant: Tenant) -> None:
    stored_campaign(tenant, TSHIRTS_15)
    stored_campaign(tenant, JEANS_10)
    lines = [*THREE_TSHIRTS, {"line_item_id": "j", "id": "jeans", "quantity": 1, "unit_price": 500}]

    response = submit(admin_client, tenant, lines)

    rows = {row["campaign_id"]: row for row in response.context["explanation"]}
    assert rows["tshirts-15"]["fired"] is True
    assert rows["tshirts-15"]["changed_units"] == ["li-1 units 1, 2, 3: 9.95 → 8.46"]
    assert rows["jeans-10"]["fired"] is False
    assert rows["jeans-10"]["reason"] in response.content.decode()


def test_a_members_only_campaign_fires_with_a_customer_identifier(admin_client: Client, tenant: Tenant) -> None:
    stored_campaign(tenant, {**TSHIRTS_15, "members_only": True})

    anonymous = submit(admin_client, tenant, THREE_TSHIRTS)
    member = submit(admin_client, tenant, THREE_TSHIRTS, customer="C-42")

    assert anonymous.context["summary"]["total"] == Decimal("29.85")
    assert member.context["summary"]["total"] == Decimal("25.38")


def test_a_rule_without_a_price_for_the_market_shows_a_warning(admin_client: Client, tenant: Tenant) -> None:
    rule = {"id": "bottle", "type": "container_deposit", "name": "B", "display_name": "Pant", "tag": "bottle"}
    ProductRuleFactory(
        account=tenant.account,
        market=tenant.market,
        rule_id="bottle",
        tag="bottle",
        price={"se": 1},
        definition={**rule, "price": {"se": 1}},
    )

    response = submit(admin_client, tenant, THREE_TSHIRTS)

    assert "Product rule &#x27;bottle&#x27;" in response.content.decode()


def test_invalid_json_is_shown_on_the_form(admin_client: Client, tenant: Tenant) -> None:
    response = submit(admin_client, tenant, '[{"line_item_id": ')

    assert response.status_code == 200
    assert "not valid JSON" in response.content.decode()


@pytest.mark.parametrize(
    ("lines", "fields", "shown"),
    [
        ([{"line_item_id": "li-1", "id": "nope", "quantity": 1}], {}, "line_items[0].unit_price"),
        ([{"line_item_id": "li-1", "quantity": 2.5, "unit_price": 1}], {}, "line_items[0].quantity"),
        ([], {}, "must not be empty"),
        ({"line_item_id": "li-1"}, {}, "must be an array"),
        (THREE_TSHIRTS, {"market": "xx"}, "no market"),
    ],
)
def test_a_refused_basket_shows_the_error_on_the_page(
    admin_client: Client, tenant: Tenant, lines: Any, fields: dict[str, str], shown: str
) -> None:
    response = submit(admin_client, tenant, lines, **fields)

    assert response.status_code == 200
    assert "summary" not in response.context
    assert shown in response.content.decode()


def test_an_unknown_account_is_a_form_error(admin_client: Client, tenant: Tenant) -> None:
    response = submit(admin_client, tenant, THREE_TSHIRTS, account="nobody")

    assert response.status_code == 200
    assert response.context["form"].errors["account"]


def test_the_market_is_looked_up_in_the_chosen_account(admin_client: Client, tenant: Tenant, other_tenant) -> None:
    stored_campaign(tenant, TSHIRTS_15)

    response = submit(admin_client, tenant, THREE_TSHIRTS, account=other_tenant.account.identifier)

    # The other account has its own dk market, without the campaign.
    assert response.context["summary"]["total"] == Decimal("29.85")


def test_the_page_needs_a_staff_user(client: Client, tenant: Tenant) -> None:
    user = User.objects.create_user("clerk", password="pw", is_staff=False)
    client.force_login(user)

    response = client.get(reverse(PAGE))

    assert response.status_code == 302
    assert "/login/" in response["Location"]


def test_staff_without_view_permission_on_campaigns_are_refused(client: Client, tenant: Tenant) -> None:
    user = User.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(user)

    assert client.get(reverse(PAGE)).status_code == 403


def test_baskets_priced_count_as_try_outs_of_the_operator_in_the_account(
    admin_client: Client, tenant: Tenant, settings: Any
) -> None:
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    stored_campaign(tenant, TSHIRTS_15)

    answers = [submit(admin_client, tenant, THREE_TSHIRTS) for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert "summary" not in answers[2].context
    assert "Too many baskets priced" in answers[2].content.decode()
