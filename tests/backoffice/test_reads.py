"""The back-office's read pages: the import log, sales and checkouts, runtime integrations. Each lists only the
member's account, filters, and answers 404 for another account's object."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from backoffice import documents
from imports.models import ImportItem
from integrations.models import IntegrationCall, RuntimeIntegration
from integrations.services import save_runtime_integration
from ledger.models import Checkout, Sale
from tests.factories import ImportItemFactory, IntegrationFactory, RegisterFactory, StockLocationFactory
from tests.support.api import PosApi
from tests.support.backoffice import SignIn, page_text
from tests.support.checkouts import checkout_body
from tests.support.imports import materialise_pending, order, post
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db


def test_the_import_log_lists_filters_and_shows_an_items_errors_and_payload(
    tenant: Tenant, other_tenant: Tenant, client: Any, sign_in: SignIn
) -> None:
    bad = order("web-bad")
    bad["basket"]["line_items"][0]["price"] = -5
    post(client, tenant, "incoming_orders", {"orders": [order("web-good"), bad]}, stock_location="shop-1")
    materialise_pending(tenant)
    post(client, other_tenant, "incoming_orders", {"orders": [order("globex-order")]}, stock_location="shop-1")
    erp = IntegrationFactory(account=tenant.account, identifier="erp")
    ImportItemFactory(account=tenant.account, integration=erp, identifier="erp-item")
    viewer = sign_in(tenant.account, "viewer")

    listed = page_text(viewer.get("/backoffice/imports/"))
    rejected = page_text(viewer.get("/backoffice/imports/", {"status": "rejected"}))
    by_identifier = page_text(viewer.get("/backoffice/imports/", {"identifier": "web-good"}))
    by_integration = page_text(viewer.get("/backoffice/imports/", {"integration": "erp"}))
    by_kind = page_text(viewer.get("/backoffice/imports/", {"kind": "external_order"}))

    assert all(i in listed for i in ("web-good", "web-bad", "erp-item")) and "globex-order" not in listed
    assert "web-bad" in rejected and "web-good" not in rejected
    assert "web-good" in by_identifier and "web-bad" not in by_identifier
    assert "erp-item" in by_integration and "web-good" not in by_integration
    assert "web-good" not in by_kind and "erp-item" not in by_kind

    item = ImportItem.objects.get(account=tenant.account, identifier="web-bad")
    page = page_text(viewer.get(f"/backoffice/imports/{item.pk}/"))
    assert "basket.line_items[0].price" in page and "must be positive" in page and "out_of_range" in page
    assert "T-shirt" in page  # the payload
    theirs = ImportItem.objects.get(account=other_tenant.account)
    assert viewer.get(f"/backoffice/imports/{theirs.pk}/").status_code == 404


def test_a_large_payload_is_shown_in_short(tenant: Tenant, sign_in: SignIn) -> None:
    lines = [{"n": n, "text": "x" * 1000} for n in range(1000)]
    item = ImportItemFactory(account=tenant.account, integration=tenant.integration, payload={"lines": lines})
    viewer = sign_in(tenant.account, "viewer")

    page = page_text(viewer.get(f"/backoffice/imports/{item.pk}/"))

    assert len(page) < 3 * documents.MAX_CHARS and documents.MORE in page
    assert "x" * (documents.MAX_TEXT + 1) not in page


def _sell(tenant: Tenant, client: Any, identifier: str, *, register: str = "reg-1", warn: bool = False) -> None:
    body = checkout_body(identifier=identifier, register_id=register, lines=[("p-1", "tops", 1, "250.00")])
    if warn:  # total_discounts not base_price less sub_total: stored as sent, with a warning
        basket = body["sales"][0]["basket"]
        basket["line_items"][0].update(base_price=200, retail_price=200)
        basket.update(base_price=200, total_discounts=0)
    assert PosApi(client, tenant).post("checkouts", body).status_code == 201


@pytest.fixture
def sold(tenant: Tenant, other_tenant: Tenant, client: Any) -> None:
    """Tenant: co-warn (a warning) and co-plain at reg-1 in shop-1, co-two at reg-2 in shop-2; other tenant: its
    own checkout."""
    RegisterFactory(account=tenant.account, stock_location=tenant.stock_location, identifier="reg-1")
    shop_2 = StockLocationFactory(account=tenant.account, market=tenant.market, identifier="shop-2")
    RegisterFactory(account=tenant.account, stock_location=shop_2, identifier="reg-2")
    RegisterFactory(account=other_tenant.account, stock_location=other_tenant.stock_location, identifier="reg-1")
    _sell(tenant, client, "co-warn", warn=True)
    _sell(tenant, client, "co-plain")
    _sell(tenant, client, "co-two", register="reg-2")
    _sell(other_tenant, client, "globex-co", warn=True)


@pytest.mark.usefixtures("sold")
def test_sales_list_filter_by_warnings_and_shop_and_show_one_sale(
    tenant: Tenant, other_tenant: Tenant, sign_in: SignIn
) -> None:
    viewer = sign_in(tenant.account, "viewer")

    listed = page_text(viewer.get("/backoffice/sales/"))
    warned = page_text(viewer.get("/backoffice/sales/", {"warnings": "1"}))
    in_shop_2 = page_text(viewer.get("/backoffice/sales/", {"shop": "shop-2"}))

    assert all(s in listed for s in ("co-warn-s1", "co-plain-s1", "co-two-s1")) and "globex-co" not in listed
    assert "250.00 DKK" in listed
    assert "co-warn-s1" in warned and "co-plain-s1" not in warned and "co-two-s1" not in warned
    assert "co-two-s1" in in_shop_2 and "co-warn-s1" not in in_shop_2

    sale = Sale.objects.get(account=tenant.account, identifier="co-warn-s1")
    page = page_text(viewer.get(f"/backoffice/sales/{sale.pk}/"))
    assert "sales[0].basket.total_discounts" in page and "total_discounts_mismatch" in page
    assert "base_price" in page  # the document
    theirs = Sale.objects.get(account=other_tenant.account)
    assert viewer.get(f"/backoffice/sales/{theirs.pk}/").status_code == 404
    assert f"/backoffice/sales/{sale.pk}/" in page_text(viewer.get("/backoffice/"))


@pytest.mark.usefixtures("sold")
def test_checkouts_list_filter_and_show_one_checkout(tenant: Tenant, other_tenant: Tenant, sign_in: SignIn) -> None:
    viewer = sign_in(tenant.account, "viewer")

    listed = page_text(viewer.get("/backoffice/checkouts/"))
    warned = page_text(viewer.get("/backoffice/checkouts/", {"warnings": "1"}))
    in_shop_2 = page_text(viewer.get("/backoffice/checkouts/", {"shop": "shop-2"}))

    assert all(c in listed for c in ("co-warn", "co-plain", "co-two")) and "globex-co" not in listed
    assert "co-warn" in warned and "co-plain" not in warned
    assert "co-two" in in_shop_2 and "co-plain" not in in_shop_2

    checkout = Checkout.objects.get(account=tenant.account, identifier="co-warn")
    page = page_text(viewer.get(f"/backoffice/checkouts/{checkout.pk}/"))
    assert "total_discounts_mismatch" in page and f"/backoffice/sales/{checkout.sales.get().pk}/" in page
    theirs = Checkout.objects.get(account=other_tenant.account)
    assert viewer.get(f"/backoffice/checkouts/{theirs.pk}/").status_code == 404


def _integration(tenant: Tenant, host: str) -> RuntimeIntegration:
    return save_runtime_integration(
        account=tenant.account,
        data={
            "kind": "product_search",
            "method": "GET",
            "url": f"https://{host}/search?apikey=url-secret-{host}&q={{search_term}}",
            "headers": {"Authorization": f"Bearer header-secret-{host}"},
        },
    )


def _call(
    integration: RuntimeIntegration, *, ok: bool, ms: int, error: str = "", ago: timedelta | None = None
) -> IntegrationCall:
    return IntegrationCall.objects.create(
        account=integration.account,
        integration=integration,
        kind=integration.kind,
        ok=ok,
        status_code=200 if ok else 503,
        duration_ms=ms,
        error=error,
        created_at=timezone.now() - (ago or timedelta(minutes=5)),
    )


def test_runtime_integrations_show_their_calls_and_never_a_secret(
    tenant: Tenant, other_tenant: Tenant, sign_in: SignIn
) -> None:
    mine = _integration(tenant, "erp.acme.example")
    theirs = _integration(other_tenant, "erp.globex.example")
    _call(mine, ok=True, ms=4321, ago=timedelta(days=2))  # not in the last 24 hours
    _call(mine, ok=True, ms=120)
    _call(mine, ok=False, ms=917, error="HTTP 503 from the ERP")
    _call(theirs, ok=False, ms=50, error="globex failure")
    viewer = sign_in(tenant.account, "viewer")

    listed = page_text(viewer.get("/backoffice/integrations/"))
    page = page_text(viewer.get(f"/backoffice/integrations/{mine.pk}/"))

    assert "erp.acme.example" in listed and "erp.globex.example" not in listed
    assert "917 ms" in listed and "4321 ms" not in listed  # the slowest of the last 24 hours
    assert "HTTP 503 from the ERP" in page and "4321 ms" in page and "globex failure" not in page
    for shown in (listed, page):
        assert "url-secret" not in shown and "header-secret" not in shown
    assert viewer.get(f"/backoffice/integrations/{theirs.pk}/").status_code == 404
    assert f"/backoffice/integrations/{mine.pk}/" in page_text(viewer.get("/backoffice/"))
