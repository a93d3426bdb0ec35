"""Page links (``next``, ``previous``) keep the query but never a credential: links get logged, cached and shared."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from rest_framework.test import APIClient

from tests.factories import IncomingOrderFactory
from tests.support.tenants import Tenant


def _page(client: APIClient, tenant: Tenant, **params: str) -> dict:
    for n in range(5):
        IncomingOrderFactory(account=tenant.account, stock_location=tenant.stock_location, order_identifier=f"o-{n}")
    response = client.get("/api/v1/incoming-orders/", tenant.params(tenant.admin_key, **params))
    assert response.status_code == 200
    return response.json()


def _query(link: str) -> dict[str, list[str]]:
    return parse_qs(urlsplit(link).query)


def test_page_links_carry_no_key_but_keep_account_integration_and_filters(client, tenant) -> None:
    body = _page(client, tenant, stock_location="shop-1", limit="2", offset="2", accountkey="legacy-secret")

    for link in (body["next"], body["previous"]):
        assert "apikey" not in _query(link) and "accountkey" not in _query(link)
        assert tenant.admin_key not in link and "legacy-secret" not in link
        assert _query(link)["account"] == [tenant.account.identifier]
        assert _query(link)["integration"] == [tenant.integration.identifier]
        assert _query(link)["stock_location"] == ["shop-1"]
    assert (_query(body["next"])["limit"], _query(body["next"])["offset"]) == (["2"], ["4"])
    # The client sends its key again (here in the header) to follow a link.
    following = client.get(body["next"], HTTP_AUTHORIZATION=f"Bearer {tenant.admin_key}")
    assert [o["order_identifier"] for o in following.json()["results"]] == ["o-0"]
