"""The worked examples of the "Pricing a basket" page (docs/pricing.md), priced through the stored campaigns and
rules (imported as an integrator would, then ``price_basket``): the documentation cannot drift from the engine."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from accounts.models import Market
from campaigns import services
from campaigns.pricing.engine import PricingLine, price_basket
from tests.support.campaigns import campaign, deposit_rule
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db
D = Decimal


def priced(tenant: Tenant, campaigns: list[dict[str, Any]], *lines: PricingLine, market: Market | None = None) -> Any:
    market = market or tenant.market
    services.upsert_campaigns(account=tenant.account, markets=[market], items=campaigns)
    return price_basket(account=tenant.account, market=market, lines=list(lines)).summary


def units(quantity: int, price: str, product: str = "p", **fields: Any) -> PricingLine:
    return PricingLine("l1", product, quantity, D(price), **fields)


PCT = "percentage_discount-count_or_more-single_product"


@pytest.mark.parametrize(
    ("campaigns", "line", "total"),
    [
        ([campaign("c", PCT, product_id="p", percentage=D("0.15"), count=1)], units(3, "9.95"), "25.38"),
        (
            [
                campaign("a", PCT, 2, product_id="p", percentage=D("0.15"), count=1, continue_evaluation=True),
                campaign("b", PCT, 1, product_id="p", percentage=D("0.10"), count=1),
            ],
            units(1, "1.00"),
            "0.76",
        ),
        ([campaign("c", PCT, product_id="p", percentage=D(1) / 3, count=1)], units(3, "10.00"), "20.01"),
        ([campaign("c", PCT, product_id="p", percentage=D("0.15"), count=3)], units(4, "10.00"), "34.00"),
        ([campaign("c", PCT, product_id="p", percentage=D("0.15"), count=3)], units(2, "10.00"), "20.00"),
    ],
    ids=["third-of-9.95", "continued", "a-third-off", "count-reached", "below-count"],
)
def test_percentages(tenant, campaigns, line, total) -> None:
    assert priced(tenant, campaigns, line)["total"] == D(total)


STAIR = "percentage_discount-stair-single_product"
STEPS = [{"count": 2, "percentage": D("0.10")}, {"count": 4, "percentage": D("0.20")}]


@pytest.mark.parametrize(("quantity", "total"), [(3, "27.00"), (5, "40.00")])
def test_stairs(tenant, quantity, total) -> None:
    summary = priced(tenant, [campaign("s", STAIR, product_id="p", steps=STEPS)], units(quantity, "10.00"))
    assert summary["total"] == D(total)


def test_yen_have_no_minor_unit(tenant) -> None:
    yen = Market.objects.create(account=tenant.account, identifier="jp", currency="JPY")
    summary = priced(
        tenant, [campaign("c", PCT, product_id="p", percentage=D("0.15"), count=1)], units(3, "999"), market=yen
    )
    assert summary["total"] == D(2547)


@pytest.mark.parametrize(("goods", "shipping_total"), [("99.99", "39.00"), ("100.00", "0.00")])
def test_free_shipping_at_the_condition(tenant, goods, shipping_total) -> None:
    free = campaign("free", "free_shipping_by_amount", 0, amount_condition=D(100))
    ship = PricingLine("ship", "gls", 1, D("39.00"), is_shipping=True, behavior={"shipping": {}})
    summary = priced(tenant, [free], units(1, goods), ship)
    [shipping_line] = [item for item in summary["line_items"] if item["line_item_id"] == "ship"]
    assert shipping_line["total"] == D(shipping_total)


def test_a_deposit_line_per_bottle_line(tenant) -> None:
    services.upsert_product_rules(
        account=tenant.account, markets=[tenant.market], items=[deposit_rule("pant", "bottle", D("1.50"))]
    )
    summary = priced(tenant, [], units(3, "9.95", tags=("bottle",)))
    [deposit] = [item for item in summary["line_items"] if item["line_item_id"] == "l1-deposit-pant"]
    assert deposit["total"] == D("4.50")
