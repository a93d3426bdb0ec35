"""``integrations.runtime.call`` against the reference integrator on 127.0.0.1 (spec: Endpoints B), plus
``responses`` unit tests of what it sends on an https URL."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
import requests
import responses

from integrations import runtime
from integrations.errors import IntegrationFailed, IntegrationTimeout, NotConfigured
from integrations.kinds import KINDS
from integrations.models import IntegrationCall, RuntimeIntegration
from integrations.runtime import call
from tests.support.ports import free_port
from tests.support.reference_server import DEFAULTS, PRODUCTS, ReferenceIntegrator
from tests.support.tenants import Tenant

SEARCH = {"search_term": "sweater", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 20}
PAY = {"code": "GC-1", "id": "id-GC-1", "amount": Decimal("12.50"), "currency_code": "DKK", "sale_id": "s-9"}


# --- requests and answers ---------------------------------------------------------------------------------


def test_product_search_returns_the_parsed_answer_with_decimal_prices(tenant: Tenant, configure: Any) -> None:
    configure("product_search")

    result = call(account=tenant.account, kind="product_search", values=SEARCH)

    assert result.status_code == 200
    assert [p["id"] for p in result.data] == [p["id"] for p in PRODUCTS]
    assert result.data[0]["retail_price"] == Decimal("499.95")
    assert isinstance(result.data[0]["retail_price"], Decimal)


def test_query_templates_are_rendered_with_the_values(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("product_search", query={"q": "{search_term}", "where": "{market}/{shop_id}", "fixed": "1"})

    call(account=tenant.account, kind="product_search", values={**SEARCH, "search_term": "blå trøje & co"})

    assert reference.last().query == {"q": "blå trøje & co", "where": "dk/shop-1", "fixed": "1"}


def test_a_value_in_the_url_path_is_percent_encoded(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("giftcard_read")

    with pytest.raises(IntegrationFailed):  # no such card: the point is the path that arrived
        call(account=tenant.account, kind="giftcard_read", values={"code": "../a/b c?x=1"})

    assert reference.last().path == "/giftcards/..%2Fa%2Fb%20c%3Fx%3D1"


def test_a_body_string_that_is_one_placeholder_keeps_the_value_type(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.add_card("GC-1", amount=100)
    configure("giftcard_pay", body={"amount": "{amount}", "note": "sale {sale_id} of {amount}", "n": 3, "x": None})

    call(account=tenant.account, kind="giftcard_pay", values=PAY)

    sent = reference.last().body
    assert sent == {"amount": Decimal("12.50"), "note": "sale s-9 of 12.50", "n": 3, "x": None}
    assert reference.last().headers["content-type"] == "application/json"


def test_a_missing_value_renders_as_an_empty_string(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("product_search", query={"q": "{search_term}", "limit": "{limit}"})

    call(account=tenant.account, kind="product_search", values={"search_term": "x"})

    assert reference.last().query == {"q": "x", "limit": ""}


def test_headers_are_sent_with_their_templates_rendered(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("customer_lookup", headers={"Authorization": "Bearer k-123", "X-Shop": "{shop_id}"})

    call(account=tenant.account, kind="customer_lookup", values={"search_term": "j", "shop_id": "shop-1"})

    assert reference.last().headers["authorization"] == "Bearer k-123"
    assert reference.last().headers["x-shop"] == "shop-1"


def test_every_kind_gets_a_json_answer_from_the_reference_defaults(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.add_card("GC-1", amount=100, status=1)
    values: dict[str, Any] = {**SEARCH, "barcode": "123", "customer_id": "c-1", **PAY}
    for kind in KINDS:
        configure(kind)
        result = call(account=tenant.account, kind=kind, values=values)
        assert result.status_code == 200, kind
        assert result.data, kind
    assert len(reference.requests) == len(KINDS) == len(DEFAULTS)


def test_the_transform_reshapes_the_answer(tenant: Tenant, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["/products/search"] = [
        (200, {"hits": [{"sku": "a", "price": 10.5}, {"sku": "b", "price": 99}]}),
    ]
    configure("product_search", transform="hits[].{id: sku, retail_price: price}")

    result = call(account=tenant.account, kind="product_search", values=SEARCH)

    assert result.data == [{"id": "a", "retail_price": Decimal("10.5")}, {"id": "b", "retail_price": 99}]


def test_transform_functions_take_decimal_numbers(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("product_search", transform="max_by(@, &retail_price).id")

    assert call(account=tenant.account, kind="product_search", values=SEARCH).data == "web-1"


def test_a_transform_that_fails_on_the_answer_is_a_failed_call(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["/products/search"] = [(200, {"items": "not a list"})]
    configure("product_search", transform="sum(items)")

    with pytest.raises(IntegrationFailed, match="transform"):
        call(account=tenant.account, kind="product_search", values=SEARCH)


# --- configuration ------------------------------------------------------------------------------------------


def test_a_kind_without_configuration_is_not_configured(tenant: Tenant) -> None:
    with pytest.raises(NotConfigured) as caught:
        call(account=tenant.account, kind="giftcard_pay", values=PAY)

    assert caught.value.status_code == 404
    assert "gift card pay" in caught.value.message


def test_a_disabled_integration_is_not_configured(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("product_search", enabled=False)

    with pytest.raises(NotConfigured):
        call(account=tenant.account, kind="product_search", values=SEARCH)
    assert reference.requests == []


def test_the_session_is_kept_per_configuration_and_rebuilt_when_it_changes(tenant: Tenant, configure: Any) -> None:
    integration = configure("product_search")
    first = runtime.session_for(integration)
    assert runtime.session_for(RuntimeIntegration.objects.get(pk=integration.pk)) is first

    integration.timeout = Decimal("2")
    integration.save()

    assert runtime.session_for(integration) is not first


def test_a_process_keeps_the_most_recently_used_sessions_and_closes_the_others(
    tenant: Tenant, configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "MAX_SESSIONS", 2)
    monkeypatch.setattr(runtime, "_sessions", type(runtime._sessions)())
    search, lookup, customers = (configure(kind) for kind in ("product_search", "product_lookup", "customer_lookup"))
    closed: list[Any] = []
    first = runtime.session_for(search)
    second = runtime.session_for(lookup)
    for session in (first, second):
        monkeypatch.setattr(session, "close", lambda session=session: closed.append(session))
    assert runtime.session_for(search) is first  # used again: now the most recent

    runtime.session_for(customers)

    assert closed == [second]  # the least recently used went, and was closed
    assert list(runtime._sessions) == [search.pk, customers.pk]
    assert runtime.session_for(search) is first


def test_calls_reuse_the_kept_alive_connection(tenant: Tenant, reference: ReferenceIntegrator, configure: Any) -> None:
    configure("product_search")
    ports = []
    for _ in range(3):
        call(account=tenant.account, kind="product_search", values=SEARCH)
        ports.append(reference.last().client_port)

    assert len(set(ports)) == 1


# --- failures -----------------------------------------------------------------------------------------------


def test_a_non_2xx_answer_fails_with_the_upstream_status_and_its_message(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["/giftcards/{code}/pay"] = [(402, {"error": "insufficient balance"})]
    configure("giftcard_pay")

    with pytest.raises(IntegrationFailed) as caught:
        call(account=tenant.account, kind="giftcard_pay", values=PAY)

    assert caught.value.status_code == 502
    assert caught.value.upstream_status == 402
    assert caught.value.message == "the integrator answered HTTP 402: insufficient balance"
    assert caught.value.answer == {"error": "insufficient balance"}  # type: ignore[attr-defined]


def test_a_503_with_a_text_body_fails(tenant: Tenant, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["*"] = [(503, "Service Unavailable")]
    configure("product_search")

    with pytest.raises(IntegrationFailed, match=r"HTTP 503$"):
        call(account=tenant.account, kind="product_search", values=SEARCH)


def test_an_html_answer_fails_as_not_json(tenant: Tenant, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["*"] = [("html", "<html><body>Login</body></html>")]
    configure("product_search")

    with pytest.raises(IntegrationFailed, match=r"not JSON \(HTML\)") as caught:
        call(account=tenant.account, kind="product_search", values=SEARCH)
    assert caught.value.upstream_status == 200


@pytest.mark.parametrize("garbage", [b'{"amount": 1', b"", b"NaN", b'{"amount": Infinity}', b"\xff\xfe"])
def test_a_garbage_answer_fails(tenant: Tenant, reference: ReferenceIntegrator, configure: Any, garbage: bytes) -> None:
    reference.script["*"] = [("garbage", garbage)]
    configure("customer_account_read")

    with pytest.raises(IntegrationFailed, match="not JSON"):
        call(account=tenant.account, kind="customer_account_read", values={"customer_id": "c-1"})


def test_an_answer_larger_than_the_limit_fails(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime, "MAX_ANSWER_BYTES", 1000)
    reference.script["*"] = [(200, [{"id": str(i)} for i in range(200)])]
    configure("product_search")

    with pytest.raises(IntegrationFailed, match="larger than"):
        call(account=tenant.account, kind="product_search", values=SEARCH)


def test_a_connection_closed_without_an_answer_fails(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["*"] = [("close", None)]
    configure("product_search")

    with pytest.raises(IntegrationFailed, match="closed the connection"):
        call(account=tenant.account, kind="product_search", values=SEARCH)


def test_a_refused_connection_fails(tenant: Tenant, configure: Any) -> None:
    configure("product_search", url=f"http://127.0.0.1:{free_port()}/search")

    with pytest.raises(IntegrationFailed, match="refused the connection") as caught:
        call(account=tenant.account, kind="product_search", values=SEARCH)
    assert caught.value.upstream_status is None


def test_a_slow_integrator_times_out_within_the_configured_timeout(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["*"] = [("sleep", 3.0)]
    configure("giftcard_read", timeout="0.3")

    # The answer would come after 3 s: a timeout raised is the configured 0.3 s at work.
    with pytest.raises(IntegrationTimeout) as caught:
        call(account=tenant.account, kind="giftcard_read", values={"code": "GC-1"})

    assert caught.value.status_code == 504
    assert caught.value.message == "the integrator did not answer within 0.3 s"


def test_a_redirect_is_a_failure_and_is_not_followed(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["*"] = [("redirect", f"{reference.url}/products/search")]
    configure("product_search", path="/old-search")

    with pytest.raises(IntegrationFailed, match="redirect") as caught:
        call(account=tenant.account, kind="product_search", values=SEARCH)

    assert caught.value.upstream_status == 302
    assert [r.path for r in reference.requests] == ["/old-search"]


# --- the call log -------------------------------------------------------------------------------------------


def test_a_successful_call_is_logged_once(tenant: Tenant, configure: Any) -> None:
    integration = configure("product_search")

    result = call(account=tenant.account, kind="product_search", values=SEARCH)

    logged = IntegrationCall.objects.get()
    assert (logged.account_id, logged.integration_id, logged.kind) == (
        tenant.account.pk,
        integration.pk,
        "product_search",
    )
    assert (logged.ok, logged.status_code, logged.error) == (True, 200, "")
    assert logged.duration_ms == result.duration_ms


def test_a_failed_call_is_logged_with_its_status_and_error(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    reference.script["*"] = [(500, {"message": "boom"})]
    configure("product_search")

    with pytest.raises(IntegrationFailed):
        call(account=tenant.account, kind="product_search", values=SEARCH)

    logged = IntegrationCall.objects.get()
    assert (logged.ok, logged.status_code, logged.error) == (False, 500, "the integrator answered HTTP 500: boom")


def test_a_timeout_is_logged_without_a_status(tenant: Tenant, reference: ReferenceIntegrator, configure: Any) -> None:
    reference.script["*"] = [("sleep", 2.0)]
    configure("product_search", timeout="0.2")

    with pytest.raises(IntegrationTimeout):
        call(account=tenant.account, kind="product_search", values=SEARCH)

    logged = IntegrationCall.objects.get()
    assert (logged.ok, logged.status_code) == (False, None)
    assert "did not answer" in logged.error


# --- responses: what goes out on an https URL ---------------------------------------------------------------


@pytest.fixture
def erp(tenant: Tenant) -> RuntimeIntegration:
    return RuntimeIntegration.objects.create(
        account=tenant.account,
        kind="customer_account_pay",
        method="POST",
        url="https://erp.example.com/accounts/{customer_id}/pay",
        headers={"Authorization": "Bearer t0k3n-value"},
        body={"amount": "{amount}", "currency": "{currency_code}"},
        timeout=Decimal("2.5"),
    )


@responses.activate
def test_an_https_call_verifies_tls_with_the_configured_timeout_and_no_redirects(
    tenant: Tenant, erp: RuntimeIntegration
) -> None:
    responses.post("https://erp.example.com/accounts/c%201/pay", json={"amount": 12.5})

    result = call(
        account=tenant.account,
        kind="customer_account_pay",
        values={"customer_id": "c 1", "amount": Decimal("12.5"), "currency_code": "DKK"},
    )

    assert result.data == {"amount": Decimal("12.5")}
    sent = responses.calls[0].request
    assert sent.body == b'{"amount": 12.5, "currency": "DKK"}'
    assert sent.headers["Authorization"] == "Bearer t0k3n-value"
    assert sent.req_kwargs["verify"] is True
    assert sent.req_kwargs["timeout"] == (2.5, 2.5)


@responses.activate
def test_an_unverifiable_certificate_fails(tenant: Tenant, erp: RuntimeIntegration) -> None:
    responses.post(
        "https://erp.example.com/accounts/c-1/pay", body=requests.exceptions.SSLError("certificate verify failed")
    )

    with pytest.raises(IntegrationFailed, match="TLS certificate"):
        call(account=tenant.account, kind="customer_account_pay", values={"customer_id": "c-1"})


@responses.activate
def test_a_connect_timeout_is_a_timeout(tenant: Tenant, erp: RuntimeIntegration) -> None:
    responses.post("https://erp.example.com/accounts/c-1/pay", body=requests.exceptions.ConnectTimeout())

    with pytest.raises(IntegrationTimeout, match=r"2\.5 s"):
        call(account=tenant.account, kind="customer_account_pay", values={"customer_id": "c-1"})
