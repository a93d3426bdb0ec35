"""POST/DELETE /imports/discount_campaigns and /imports/product_rules (spec: Discount campaign, Product rule)."""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest

from campaigns.models import Campaign, ProductRule
from campaigns.pricing.registry import CAMPAIGN_TYPES, check_campaign
from core.nodes import Report
from imports.models import ImportItem, ImportKind, ImportStatus
from tests.factories import MarketFactory
from tests.support.campaigns import deposit_rule
from tests.support.imports import as_posted, post

pytestmark = pytest.mark.django_db

COMMON = {"name": "Internal", "display_name": "Shown", "priority": 10}
VALID: dict[str, dict[str, Any]] = {
    "percentage_discount-count_or_more-single_product": {"product_id": "p1", "percentage": 0.15, "count": 3},
    "percentage_discount-count_or_more-multiple_products": {"product_ids": ["p1", "p2"], "percentage": 0.1, "count": 2},
    "percentage_discount-tag": {"tag": "summer", "percentage": 0.2},
    "percentage_discount-count_or_more-tag": {"tag": "summer", "percentage": 0.2, "count": 2},
    "new_price_discount-single_product": {"product_id": "p1", "new_price_per_item": 10},
    "new_price_discount-count_or_more-single_product": {
        "product_id": "p1",
        "count": 2,
        "new_price_per_item_if_cheaper": {"dk": 10},
    },
    "new_price_discount-stair-single_product": {
        "product_id": "p1",
        "steps": [{"count": 5, "new_price_per_item": 8}, {"count": 2, "new_price_per_item_if_cheaper": 9}],
    },
    "percentage_discount-stair-single_product": {
        "product_id": "p1",
        "steps": [{"count": 2, "percentage": 0.1}, {"count": 4, "percentage": 0.2}],
    },
    "percentage_discount-stair-tag": {"tag": "t", "steps": [{"count": 2, "percentage": 0.1}]},
    "amount_discount-stair-tag": {"tag": "t", "steps": [{"count": 2, "amount_per_item": 5}]},
    "free_shipping_by_amount": {"amount_condition": 499},
}


def campaign(kind: str, identifier: str = "c1", **overrides: Any) -> dict[str, Any]:
    return {"id": identifier, "type": kind, **COMMON, **VALID[kind], **overrides}


def campaign_errors(item: dict[str, Any], markets: tuple[str, ...] = ("dk",)) -> list[tuple[str, str]]:
    report = Report(markets=markets)
    check_campaign(as_posted(item), "", report)
    return [(e["field"], e["code"]) for e in report.errors]


def test_every_campaign_type_of_the_spec_is_covered():
    assert set(VALID) == set(CAMPAIGN_TYPES)


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_valid_campaign_of_each_type_is_stored(tenant, client, kind):
    r = post(client, tenant, "discount_campaigns", {"campaigns": [campaign(kind)]})
    assert r.status_code == 200, r.json()
    assert r.json() == {"status": "OK", "message": "Import of 1 campaign(s) completed", "markets": ["dk"]}
    stored = Campaign.objects.get()
    assert (stored.market, stored.type, stored.priority) == (tenant.market, kind, Decimal(10))


@pytest.mark.parametrize("char", list("./#$*[]"))
def test_campaign_ids_with_a_forbidden_character_are_refused(char):
    assert campaign_errors(campaign("percentage_discount-tag", f"a{char}b")) == [("id", "invalid")]


@pytest.mark.parametrize(
    ("item", "expected"),
    [
        (campaign("percentage_discount-tag", percentage=1.5), ("percentage", "out_of_range")),
        (campaign("percentage_discount-tag", percentage=-0.1), ("percentage", "out_of_range")),
        (campaign("percentage_discount-count_or_more-tag", count=0), ("count", "out_of_range")),
        (campaign("percentage_discount-count_or_more-tag", count=1.5), ("count", "invalid_type")),
        (campaign("percentage_discount-count_or_more-multiple_products", product_ids=[]), ("product_ids", "empty")),
        (campaign("percentage_discount-tag", priority="high"), ("priority", "invalid_type")),
        (campaign("percentage_discount-tag", members_only="yes"), ("members_only", "invalid_type")),
        ({**campaign("percentage_discount-tag"), "type": "bogus"}, ("type", "invalid_choice")),
        ({"id": "c1", **COMMON}, ("type", "required")),
        (
            campaign("new_price_discount-single_product", new_price_per_item_if_cheaper=9),
            ("new_price_per_item", "exactly_one"),
        ),
        (
            {k: v for k, v in campaign("new_price_discount-single_product").items() if k != "new_price_per_item"},
            ("new_price_per_item", "exactly_one"),
        ),
        (
            campaign("new_price_discount-stair-single_product", steps=[{"count": 2}]),
            ("steps[0].new_price_per_item", "exactly_one"),
        ),
        (
            campaign(
                "new_price_discount-stair-single_product",
                steps=[{"count": 2, "new_price_per_item": 9}, {"count": 2, "new_price_per_item": 8}],
            ),
            ("steps[1].count", "duplicate"),
        ),
        (campaign("percentage_discount-stair-tag", steps=[]), ("steps", "empty")),
        (
            campaign("percentage_discount-stair-tag", steps=[{"count": -1, "percentage": 0.1}]),
            ("steps[0].count", "out_of_range"),
        ),
        (
            campaign("amount_discount-stair-tag", steps=[{"count": 2, "amount_per_item": 0}]),
            ("steps[0].amount_per_item", "out_of_range"),
        ),
        (campaign("free_shipping_by_amount", amount_condition=-1), ("amount_condition", "out_of_range")),
        (
            campaign("new_price_discount-single_product", new_price_per_item={"se": 10}),
            ("new_price_per_item.dk", "missing_market"),
        ),
    ],
)
def test_campaign_field_rules_name_the_field(item, expected):
    assert expected in campaign_errors(item)


def test_a_whole_count_written_as_a_fraction_is_stored_as_the_integer(tenant, client):
    # JSON Schema's "integer" (the published schema) is any number with a zero fractional part.
    body = json.dumps({"campaigns": [campaign("percentage_discount-count_or_more-tag", count=3.0)]})
    assert '"count": 3.0' in body
    r = post(client, tenant, "discount_campaigns", None, raw=body.encode())

    assert r.status_code == 200, r.json()
    count = Campaign.objects.get().definition["count"]
    assert (count, type(count)) == (3, int)


@pytest.mark.parametrize(
    ("literal", "code"),
    [("3.5", "invalid_type"), ("true", "invalid_type"), ('"3"', "invalid_type"), ("1e400000", "number_out_of_range")],
)
def test_a_count_that_is_not_a_whole_number_is_refused(tenant, client, literal, code):
    body = json.dumps({"campaigns": [campaign("percentage_discount-count_or_more-tag", count=7)]})
    r = post(client, tenant, "discount_campaigns", None, raw=body.replace('"count": 7', f'"count": {literal}').encode())

    assert r.status_code == 400, r.json()
    assert [(e["field"], e["code"]) for e in r.json()["failed"][0]["errors"]] == [("count", code)]
    assert not Campaign.objects.exists()


def test_a_market_price_object_must_price_every_listed_market():
    item = campaign("new_price_discount-single_product", new_price_per_item={"dk": 10})
    assert campaign_errors(item, ("dk", "se")) == [("new_price_per_item.se", "missing_market")]
    assert campaign_errors(item, ("dk",)) == []


def test_campaigns_go_to_every_listed_market(tenant, client):
    MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    r = post(
        client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag")]}, markets="dk,se"
    )
    assert r.json()["markets"] == ["dk", "se"]
    assert sorted(Campaign.objects.values_list("market__identifier", flat=True)) == ["dk", "se"]


def test_markets_default_to_dk(tenant, client):
    post(client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag")]})
    assert Campaign.objects.get().market.identifier == "dk"


def test_an_unknown_market_refuses_the_whole_request(tenant, client):
    r = post(
        client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag")]}, markets="dk,no"
    )
    assert r.status_code == 400
    assert r.json()["errors"][0] == {"field": "markets", "message": "unknown market(s): no", "code": "unknown"}
    assert not Campaign.objects.exists()


def test_posting_a_campaign_id_again_overwrites_it(tenant, client):
    post(client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag")]})
    post(client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag", percentage=0.5)]})
    stored = Campaign.objects.get()
    assert stored.definition["percentage"] == Decimal("0.5")


def test_bad_campaigns_are_reported_and_good_ones_stored(tenant, client):
    r = post(
        client,
        tenant,
        "discount_campaigns",
        {
            "campaigns": [
                campaign("percentage_discount-tag", "good"),
                campaign("percentage_discount-tag", "bad", percentage=2),
            ]
        },
    )
    assert r.status_code == 207
    assert r.json()["failed"][0]["id"] == "bad"
    assert list(Campaign.objects.values_list("campaign_id", flat=True)) == ["good"]
    assert ImportItem.objects.get(identifier="bad").status == ImportStatus.REJECTED
    assert ImportItem.objects.get(identifier="good").status == ImportStatus.SUCCESS


def test_a_campaign_id_twice_in_one_request_keeps_the_first(tenant, client):
    r = post(
        client,
        tenant,
        "discount_campaigns",
        {
            "campaigns": [
                campaign("percentage_discount-tag", "c"),
                campaign("percentage_discount-tag", "c", percentage=0.9),
            ]
        },
    )
    assert r.status_code == 207
    assert Campaign.objects.get().definition["percentage"] == Decimal("0.2")


def delete(client, tenant, path, body=None, **params):
    data = json.dumps(body) if body is not None else ""
    return client.generic("DELETE", f"/imports/{path}?{tenant.query(**params)}", data, content_type="application/json")


@pytest.mark.parametrize("style", ["query", "array", "object"])
def test_delete_takes_ids_from_the_query_or_the_body(tenant, client, style):
    post(
        client,
        tenant,
        "discount_campaigns",
        {
            "campaigns": [
                campaign("percentage_discount-tag", "a"),
                campaign("percentage_discount-tag", "b"),
            ]
        },
    )
    if style == "query":
        r = delete(client, tenant, "discount_campaigns", ids="a,zzz")
    elif style == "array":
        r = delete(client, tenant, "discount_campaigns", ["a", "zzz"])
    else:
        r = delete(client, tenant, "discount_campaigns", {"ids": ["a", "zzz"]})
    assert r.status_code == 200
    assert r.json() == {
        "status": "OK",
        "message": "Deleted 1 campaign(s) from market(s) dk; 1 not found",
        "markets": ["dk"],
        "deleted": ["a"],
        "not_found": ["zzz"],
    }
    assert list(Campaign.objects.values_list("campaign_id", flat=True)) == ["b"]
    assert ImportItem.objects.filter(kind=ImportKind.DISCOUNT_CAMPAIGN_DELETION).count() == 2


def test_delete_only_touches_the_listed_markets(tenant, client):
    MarketFactory(account=tenant.account, identifier="se", currency="SEK")
    post(
        client, tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag", "a")]}, markets="dk,se"
    )
    delete(client, tenant, "discount_campaigns", ["a"], markets="se")
    assert list(Campaign.objects.values_list("market__identifier", flat=True)) == ["dk"]


def test_delete_without_ids_is_refused(tenant, client):
    r = delete(client, tenant, "discount_campaigns")
    assert r.status_code == 400
    assert r.json()["errors"][0]["field"] == "ids"


def test_delete_with_a_body_of_the_wrong_shape_is_refused(tenant, client):
    r = delete(client, tenant, "discount_campaigns", [1, 2])
    assert r.status_code == 400


def test_delete_does_not_touch_another_accounts_campaigns(tenant, other_tenant, client):
    post(client, other_tenant, "discount_campaigns", {"campaigns": [campaign("percentage_discount-tag", "a")]})
    r = delete(client, tenant, "discount_campaigns", ["a"])
    assert r.json()["not_found"] == ["a"]
    assert Campaign.objects.count() == 1


RULE = deposit_rule("pant-a", "pant-a", 1.0, name="Pant A", display_name={"da": "Pant A"}, product_group="deposits")


def test_product_rules_are_stored_and_overwritten_by_id(tenant, client):
    r = post(client, tenant, "product_rules", {"product_rules": [RULE]})
    assert r.json() == {"status": "OK", "message": "Import of 1 product rule(s) completed", "markets": ["dk"]}
    post(client, tenant, "product_rules", {"product_rules": [{**RULE, "price": 2.0}]})
    rule = ProductRule.objects.get()
    assert (rule.rule_id, rule.tag, rule.price) == ("pant-a", "pant-a", Decimal("2.0"))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"type": "bottle_deposit"}, "type"),
        ({"display_name": 5}, "display_name"),
        ({"price": {"se": 1}}, "price.dk"),
        ({"price": -1}, "price"),
        ({"tag": ""}, "tag"),
    ],
)
def test_product_rule_field_rules_name_the_field(tenant, client, change, field):
    r = post(client, tenant, "product_rules", {"product_rules": [{**RULE, **change}]})
    assert r.status_code == 400
    assert r.json()["failed"][0]["errors"][0]["field"] == field


def test_an_empty_product_rule_list_is_accepted(tenant, client):
    r = post(client, tenant, "product_rules", {"product_rules": []})
    assert r.status_code == 200
    assert r.json()["message"] == "Import of 0 product rule(s) completed"


def test_product_rules_can_be_deleted(tenant, client):
    post(client, tenant, "product_rules", {"product_rules": [RULE]})
    r = delete(client, tenant, "product_rules", ["pant-a"])
    assert r.json()["deleted"] == ["pant-a"]
    assert not ProductRule.objects.exists()
