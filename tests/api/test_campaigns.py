from __future__ import annotations

from decimal import Decimal

import pytest

from tests.factories import CampaignFactory, MarketFactory, ProductRuleFactory
from tests.support.api import AdminApi, error_fields, results
from tests.support.tenants import Tenant

FACTORIES = {"campaigns": CampaignFactory, "product-rules": ProductRuleFactory}
ID_FIELD = {"campaigns": "campaign_id", "product-rules": "rule_id"}


def _row(resource: str, tenant: Tenant, spec_id: str, **fields: object) -> object:
    fields.setdefault("market", tenant.market)
    return FACTORIES[resource](account=tenant.account, **{ID_FIELD[resource]: spec_id}, **fields)


def _ids(api: AdminApi, resource: str, **params: str) -> list[str]:
    return [row["id"] for row in results(api.get(resource, **params))]


@pytest.mark.parametrize("resource", FACTORIES)
def test_list_shows_only_the_rows_of_the_account(api: AdminApi, other_tenant: Tenant, resource: str) -> None:
    _row(resource, api.tenant, "mine")
    _row(resource, other_tenant, "theirs")

    assert _ids(api, resource) == ["mine"]


@pytest.mark.parametrize("resource", FACTORIES)
def test_a_row_of_another_account_is_404(api: AdminApi, other_tenant: Tenant, resource: str) -> None:
    theirs = _row(resource, other_tenant, "theirs")

    assert api.get(f"{resource}/{theirs.pk}").status_code == 404


@pytest.mark.parametrize("resource", FACTORIES)
def test_filter_by_market_identifier(api: AdminApi, resource: str) -> None:
    sweden = MarketFactory(account=api.tenant.account, identifier="se", currency="SEK")
    _row(resource, api.tenant, "in-dk")
    _row(resource, api.tenant, "in-se", market=sweden)

    assert _ids(api, resource, market="se") == ["in-se"]


@pytest.mark.parametrize("resource", FACTORIES)
def test_the_same_id_in_two_markets_is_two_rows_addressed_by_pk(api: AdminApi, resource: str) -> None:
    sweden = MarketFactory(account=api.tenant.account, identifier="se", currency="SEK")
    in_dk = _row(resource, api.tenant, "shared")
    in_se = _row(resource, api.tenant, "shared", market=sweden)

    assert api.get(f"{resource}/{in_dk.pk}").json()["market"] == "dk"
    assert api.get(f"{resource}/{in_se.pk}").json()["market"] == "se"


@pytest.mark.parametrize("resource", FACTORIES)
def test_list_is_paginated(api: AdminApi, resource: str) -> None:
    for n in range(3):
        _row(resource, api.tenant, f"row-{n}")

    body = api.get(resource, limit="2").json()

    assert body["count"] == 3
    assert len(body["results"]) == 2
    assert body["next"] is not None


def test_filter_campaigns_by_type(api: AdminApi) -> None:
    _row("campaigns", api.tenant, "by-tag", type="percentage_discount-tag")
    _row("campaigns", api.tenant, "free-shipping", type="free_shipping_by_amount")

    assert _ids(api, "campaigns", type="free_shipping_by_amount") == ["free-shipping"]


def test_campaigns_are_listed_highest_priority_first(api: AdminApi) -> None:
    _row("campaigns", api.tenant, "low", priority=1)
    _row("campaigns", api.tenant, "high", priority=10)

    assert _ids(api, "campaigns") == ["high", "low"]


def test_a_campaign_has_the_fields_of_the_spec(api: AdminApi) -> None:
    definition = {"id": "tag-10", "type": "percentage_discount-tag", "tag": "sale", "percentage": Decimal("0.1")}
    campaign = _row(
        "campaigns",
        api.tenant,
        "tag-10",
        type="percentage_discount-tag",
        name="Sale",
        display_name="10% off",
        priority=Decimal("2.5"),
        members_only=True,
        definition=definition,
    )

    body = api.get(f"campaigns/{campaign.pk}").json()

    assert body == {
        "pk": campaign.pk,
        "id": "tag-10",
        "market": "dk",
        "type": "percentage_discount-tag",
        "name": "Sale",
        "display_name": "10% off",
        "priority": 2.5,
        "members_only": True,
        "continue_evaluation": False,
        "definition": {"id": "tag-10", "type": "percentage_discount-tag", "tag": "sale", "percentage": 0.1},
        "created_at": body["created_at"],
        "updated_at": body["updated_at"],
    }


def test_a_product_rule_has_the_fields_of_the_spec(api: AdminApi) -> None:
    rule = _row(
        "product-rules",
        api.tenant,
        "deposit-can",
        type="container_deposit",
        name="Can deposit",
        display_name={"da": "Pant"},
        tag="can",
        product_group="deposits",
        price={"dk": 1},
    )

    body = api.get(f"product-rules/{rule.pk}").json()

    assert {k: v for k, v in body.items() if k not in ("created_at", "updated_at", "definition")} == {
        "pk": rule.pk,
        "id": "deposit-can",
        "market": "dk",
        "type": "container_deposit",
        "name": "Can deposit",
        "display_name": {"da": "Pant"},
        "tag": "can",
        "product_group": "deposits",
        "price": {"dk": 1},
    }


def test_product_rules_have_no_type_filter(api: AdminApi) -> None:
    _row("product-rules", api.tenant, "deposit-can")

    assert _ids(api, "product-rules", type="anything") == ["deposit-can"]


def test_a_too_long_market_filter_is_400(api: AdminApi) -> None:
    response = api.get("campaigns", market="x" * 40)

    assert response.status_code == 400
    assert error_fields(response) == {"market"}
