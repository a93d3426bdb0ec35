"""Price a basket in the back-office: any member types a basket and sees its lines priced with the market's
campaigns, the discounts and why each campaign fired or not. Nothing is stored; another account's market is not
one to choose."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from django.conf import settings
from django.test import Client

from accounts.models import AuditEntry
from ledger.models import Product
from tests.factories import MarketFactory
from tests.support.backoffice import SignIn
from tests.support.campaigns import JEANS_10, TSHIRTS_15, stored_campaign

pytestmark = pytest.mark.django_db

PAGE = "/backoffice/pricing/"


def price(client: Client, *lines: tuple[str, int, str], market: str = "dk", customer: str = "") -> Any:
    """GET the page with the basket's lines (product id, quantity, unit price) in the form's fields."""
    data: dict[str, Any] = {
        "market": market,
        "customer": customer,
        "line-TOTAL_FORMS": str(len(lines) + 1),
        "line-INITIAL_FORMS": "0",
        "line-MIN_NUM_FORMS": "0",
        "line-MAX_NUM_FORMS": "50",
    }
    for i, (product, quantity, unit_price) in enumerate([*lines, ("", 1, "")]):
        data.update(
            {
                f"line-{i}-product": product,
                f"line-{i}-quantity": str(quantity),
                f"line-{i}-unit_price": unit_price,
                f"line-{i}-tags": "",
            }
        )
    return client.get(PAGE, data)


def test_every_member_finds_the_empty_form_in_the_navigation(tenant, sign_in: SignIn):
    viewer = sign_in(tenant.account, "viewer")

    dashboard = viewer.get("/backoffice/").content.decode()
    page = viewer.get(PAGE)

    assert f'href="{PAGE}"' in dashboard
    assert page.status_code == 200 and "priced" not in page.context
    assert 'name="line-0-product"' in page.content.decode() and '<option value="dk"' in page.content.decode()


def test_a_basket_with_a_campaign_shows_the_discount_and_why(tenant, sign_in: SignIn):
    stored_campaign(tenant, TSHIRTS_15)
    stored_campaign(tenant, JEANS_10)
    viewer = sign_in(tenant.account, "viewer")
    before = AuditEntry.objects.count()

    answer = price(viewer, ("tshirt", 3, "9.95"), ("jeans", 1, "500"))

    assert answer.status_code == 200
    priced = answer.context["priced"]
    assert priced.summary["total"] == Decimal("525.38")
    assert priced.summary["total_discounts"] == Decimal("4.47")
    tshirts = next(row for row in priced.lines if row["line"]["id"] == "tshirt")
    assert [(d["campaign_id"], str(d["amount"]), d["units"]) for d in tshirts["discounts"]] == [
        ("tshirts-15", "4.47", "all units")
    ]
    why = {entry["campaign_id"]: entry for entry in priced.explanation}
    assert why["tshirts-15"]["fired"] is True and why["jeans-10"]["fired"] is False
    page = answer.content.decode()
    assert 'class="basket-total">525.38<' in page
    assert "15% on 3 (tshirts-15): \u22124.47 on all units" in page
    assert "1 units 1, 2, 3: 9.95 → 8.46" in page
    assert why["jeans-10"]["reason"] in page
    assert AuditEntry.objects.count() == before


def test_a_blank_unit_price_is_the_products_retail_price(tenant, sign_in: SignIn):
    Product.objects.create(account=tenant.account, product_id="mug", name="Mug", retail_price={"dk": Decimal("40")})
    member = sign_in(tenant.account, "manager")

    answer = price(member, ("mug", 2, ""))

    assert answer.status_code == 200 and answer.context["priced"].summary["total"] == Decimal("80.00")


def test_a_line_without_a_price_is_an_error_on_its_unit_price(tenant, sign_in: SignIn):
    member = sign_in(tenant.account, "owner")

    answer = price(member, ("tshirt", 1, "10"), ("unknown-product", 1, ""))

    assert answer.status_code == 400
    second = answer.context["formset"].forms[1]
    assert "is not known to the service" in str(second.errors["unit_price"])
    assert "priced" not in answer.context


def test_bad_input_is_an_error_on_its_field(tenant, sign_in: SignIn):
    member = sign_in(tenant.account, "owner")

    negative = price(member, ("tshirt", 0, "-1"))
    empty = price(member)
    unsent = member.get(PAGE, {"market": "dk", "line-TOTAL_FORMS": "3", "line-INITIAL_FORMS": "0"})

    assert negative.status_code == 400
    line = negative.context["formset"].forms[0]
    assert set(line.errors) == {"quantity", "unit_price"}
    assert empty.status_code == 400 and "at least one line" in str(empty.context["form"].non_field_errors())
    assert unsent.status_code == 400 and "at least one line" in str(unsent.context["form"].non_field_errors())
    assert not any(line.errors for line in unsent.context["formset"].forms)


def test_another_accounts_market_is_not_one_to_choose(tenant, other_tenant, sign_in: SignIn):
    MarketFactory(account=other_tenant.account, identifier="se", currency="SEK")
    member = sign_in(tenant.account, "owner")

    answer = price(member, ("tshirt", 1, "10"), market="se")

    assert answer.status_code == 400 and "market" in answer.context["form"].errors
    assert "se (SEK)" not in answer.content.decode()


def test_baskets_priced_count_as_try_outs_of_the_member(tenant, sign_in: SignIn, settings):
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    stored_campaign(tenant, TSHIRTS_15)
    member = sign_in(tenant.account, "viewer")

    answers = [price(member, ("tshirt", 1, "10")) for _ in range(3)]
    refused = price(member)  # a form refused before pricing counts nothing and still says what is wrong

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert int(answers[2]["Retry-After"]) > 0 and "priced" not in answers[2].context
    assert "Too many baskets priced" in str(answers[2].context["form"].non_field_errors())
    assert refused.status_code == 400


def test_the_url_of_a_priced_basket_in_the_docs_prices_it(tenant, sign_in: SignIn):
    stored_campaign(tenant, TSHIRTS_15)
    member = sign_in(tenant.account, "viewer")
    documented = next(
        line.strip()
        for line in (settings.BASE_DIR / "docs" / "backoffice.md").read_text().splitlines()
        if line.strip().startswith("/backoffice/pricing/?")
    )

    answer = member.get(documented)

    assert answer.status_code == 200 and answer.context["priced"].summary["total"] == Decimal("25.38")
