"""Runtime integrations can be aimed at no private address, leak no secret, and serve one account only."""

from __future__ import annotations

import json
import logging
from decimal import Decimal
from typing import Any

import pytest
from django.urls import reverse

from integrations.errors import IntegrationFailed, NotConfigured
from integrations.models import IntegrationCall, RuntimeIntegration
from integrations.runtime import call
from tests.support.api import AdminApi, error_fields, results
from tests.support.rebinding import LOOPBACK, NAME, PUBLIC, Network, record_connections
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

SECRET = "Bearer sk_live_9f8e7d6c5b4a"
QUERY_SECRET = "q-secret-4711xyz"
MASK = "********"


@pytest.fixture
def connections(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every TCP connection the guard opens."""
    return record_connections(monkeypatch)


def _integration(tenant: Tenant, url: str) -> RuntimeIntegration:
    return RuntimeIntegration.objects.create(account=tenant.account, kind="product_search", url=url, timeout=1)


# --- SSRF ---------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "https://10.0.0.1/search",
        "http://10.0.0.1/search",
        "https://169.254.169.254/latest/meta-data/",
        "https://[::1]/search",
        "https://localhost/search",  # a DNS name resolving to 127.0.0.1
        "https://192.168.1.10:8443/search",
        "https://100.64.0.1/search",
    ],
)
def test_a_private_destination_is_refused_without_connecting(
    tenant: Tenant, connections: list[Any], settings: Any, url: str
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    _integration(tenant, url)

    with pytest.raises(IntegrationFailed, match="address is refused"):
        call(account=tenant.account, kind="product_search", values={})

    assert connections == []
    assert IntegrationCall.objects.get().ok is False


@pytest.mark.parametrize("host", ["[::127.0.0.1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::]", "[fec0::1]"])
def test_an_ipv6_form_of_a_listening_loopback_server_is_refused_without_connecting(
    tenant: Tenant, reference: ReferenceIntegrator, connections: list[Any], settings: Any, host: str
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    port = reference.url.rsplit(":", 1)[1]
    # https: plain http would be refused by its own rule before any address is judged.
    _integration(tenant, f"https://{host}:{port}/products/search")

    with pytest.raises(IntegrationFailed, match="address is refused"):
        call(account=tenant.account, kind="product_search", values={})

    assert connections == []
    assert reference.requests == []


def test_the_ipv4_mapped_form_of_an_allowed_address_is_called_over_plain_http(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    # OUTBOUND_ALLOWED_NETWORKS is 127.0.0.1/32 (configure): ::ffff:127.0.0.1 is that address.
    configure("product_search", url=reference.url.replace("127.0.0.1", "[::ffff:127.0.0.1]") + "/products/search")

    result = call(account=tenant.account, kind="product_search", values={"search_term": "shirt"})

    assert result.status_code == 200
    assert reference.last().path == "/products/search"


def test_loopback_outside_the_allowed_networks_is_refused(
    tenant: Tenant, reference: ReferenceIntegrator, settings: Any
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["10.9.0.0/16"]
    _integration(tenant, reference.url.replace("127.0.0.1", "localhost") + "/products/search")

    with pytest.raises(IntegrationFailed, match="refused"):
        call(account=tenant.account, kind="product_search", values={})

    assert reference.requests == []


def test_a_redirect_to_loopback_is_not_followed(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, connections: list[Any]
) -> None:
    reference.script["*"] = [("redirect", "http://127.0.0.1:1/admin"), ("redirect", "http://169.254.169.254/")]
    configure("product_search")

    with pytest.raises(IntegrationFailed, match="redirect"):
        call(account=tenant.account, kind="product_search", values={})

    assert len(reference.requests) == 1
    assert [port for _, port in connections] == [int(reference.url.rsplit(":", 1)[1])]


def test_a_placeholder_cannot_choose_the_host(api: AdminApi) -> None:
    response = api.post(
        "runtime-integrations", {"kind": "giftcard_read", "url": "https://{code}/giftcards", "method": "GET"}
    )

    assert response.status_code == 400


def test_a_path_value_cannot_climb_out_of_the_path(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any
) -> None:
    configure("giftcard_read", path="/api/giftcards/{code}")

    with pytest.raises(IntegrationFailed):
        call(account=tenant.account, kind="giftcard_read", values={"code": "../../admin"})

    assert reference.last().path == "/api/giftcards/..%2F..%2Fadmin"


# --- secrets ------------------------------------------------------------------------------------------------


@pytest.fixture
def secret_integration(tenant: Tenant, configure: Any) -> RuntimeIntegration:
    integration = configure(
        "customer_account_pay",
        headers={"Authorization": SECRET, "Accept": "application/json"},
        query={"apikey": QUERY_SECRET, "shop": "{shop_id}"},
    )
    integration.secret_fields = ["query.apikey"]
    integration.save(update_fields=["secret_fields"])
    return integration


def test_secrets_never_reach_the_call_log_or_the_logs(
    tenant: Tenant,
    reference: ReferenceIntegrator,
    secret_integration: RuntimeIntegration,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # An integrator that echoes the credentials it got in its error message.
    reference.script["*"] = [(401, {"error": f"token {SECRET} / key {QUERY_SECRET} not valid"})]
    caplog.set_level(logging.DEBUG)

    with pytest.raises(IntegrationFailed) as caught:
        call(account=tenant.account, kind="customer_account_pay", values={"customer_id": "c-1", "amount": 5})

    assert reference.last().headers["authorization"] == SECRET  # it was sent
    logged = IntegrationCall.objects.get()
    for text in (logged.error, caught.value.message, caplog.text):
        assert "sk_live_9f8e7d6c5b4a" not in text
        assert QUERY_SECRET not in text
    assert logged.error.startswith("the integrator answered HTTP 401")


def test_secrets_read_back_masked(api: AdminApi, secret_integration: RuntimeIntegration) -> None:
    for body in (
        api.get(f"runtime-integrations/{secret_integration.pk}").json(),
        results(api.get("runtime-integrations"))[0],
    ):
        assert body["headers"] == {"Authorization": MASK, "Accept": "application/json"}
        assert body["query"]["apikey"] == MASK
        assert body["query"]["shop"] == "{shop_id}"


def test_a_masked_secret_sent_back_keeps_the_stored_one(api: AdminApi, secret_integration: RuntimeIntegration) -> None:
    read = api.get(f"runtime-integrations/{secret_integration.pk}").json()

    response = api.put(f"runtime-integrations/{secret_integration.pk}", {**read, "timeout": "7"})

    assert response.status_code == 200, response.json()
    stored = RuntimeIntegration.objects.get()
    assert stored.headers["Authorization"] == SECRET
    assert stored.query["apikey"] == QUERY_SECRET
    assert stored.timeout == Decimal("7")


def test_a_new_secret_replaces_the_stored_one(api: AdminApi, secret_integration: RuntimeIntegration) -> None:
    api.patch(f"runtime-integrations/{secret_integration.pk}", {"headers": {"Authorization": "Bearer new-one"}})

    assert RuntimeIntegration.objects.get().headers == {"Authorization": "Bearer new-one"}


@pytest.mark.parametrize("method", ["patch", "put"])
def test_a_masked_value_under_a_new_header_name_is_refused_naming_it(
    api: AdminApi, secret_integration: RuntimeIntegration, method: str
) -> None:
    read = api.get(f"runtime-integrations/{secret_integration.pk}").json()
    before = RuntimeIntegration.objects.values("headers", "query").get()

    alone = getattr(api, method)(f"runtime-integrations/{secret_integration.pk}", {**read, "headers": {"X-New": MASK}})
    beside = getattr(api, method)(
        f"runtime-integrations/{secret_integration.pk}", {**read, "headers": {**read["headers"], "X-New": MASK}}
    )

    for response in (alone, beside):
        assert response.status_code == 400 and error_fields(response) == {"headers.X-New"}
    assert RuntimeIntegration.objects.values("headers", "query").get() == before  # nothing dropped


def test_a_masked_value_at_a_new_query_or_body_place_is_refused_naming_it(
    api: AdminApi, secret_integration: RuntimeIntegration
) -> None:
    path = f"runtime-integrations/{secret_integration.pk}"
    read = api.get(path).json()

    query = api.patch(path, {"query": {**read["query"], "key2": MASK}})
    body = api.patch(path, {"method": "POST", "body": {"pin": MASK, "amount": "{amount}"}})

    assert query.status_code == 400 and error_fields(query) == {"query.key2"}
    assert body.status_code == 400 and error_fields(body) == {"body.pin"}


def test_the_admin_form_refuses_a_masked_value_under_a_new_header_name(
    admin_client: Any, secret_integration: RuntimeIntegration
) -> None:
    url = reverse("admin:integrations_runtimeintegration_change", args=[secret_integration.pk])
    data = {
        "kind": secret_integration.kind,
        "enabled": "on",
        "method": secret_integration.method,
        "url": secret_integration.url,
        "query": json.dumps({"apikey": MASK, "shop": "{shop_id}"}),
        "headers": json.dumps({"Authorization": MASK, "X-New": MASK}),
        "body": json.dumps(secret_integration.body),
        "timeout": "5",
        "transform": "",
    }

    response = admin_client.post(url, data)

    assert response.status_code == 200, "the form was saved"
    errors = str(response.context["adminform"].form.errors)
    assert "X-New" in errors and "is masked" in errors
    assert RuntimeIntegration.objects.get().headers == secret_integration.headers


def test_a_mask_on_create_is_refused_naming_its_place(api: AdminApi) -> None:
    response = api.post(
        "runtime-integrations",
        {"kind": "product_search", "url": "https://x.example.com/s", "headers": {"Authorization": MASK}},
    )

    assert response.status_code == 400 and error_fields(response) == {"headers.Authorization"}
    assert not RuntimeIntegration.objects.exists()


# --- one account --------------------------------------------------------------------------------------------


@pytest.fixture
def foreign(other_tenant: Tenant, configure: Any) -> RuntimeIntegration:
    return configure("product_search", account=other_tenant.account, headers={"Authorization": SECRET})


def test_another_accounts_integration_is_a_404_to_read_change_delete_or_test(
    api: AdminApi, foreign: RuntimeIntegration, reference: ReferenceIntegrator
) -> None:
    path = f"runtime-integrations/{foreign.pk}"

    assert api.get(path).status_code == 404
    assert api.patch(path, {"enabled": False}).status_code == 404
    assert api.delete(path).status_code == 404
    assert api.post(f"{path}/test", {}).status_code == 404
    assert results(api.get("runtime-integrations")) == []
    assert reference.requests == []
    assert RuntimeIntegration.objects.get().enabled is True


def test_an_account_never_calls_another_accounts_integration(
    tenant: Tenant, foreign: RuntimeIntegration, reference: ReferenceIntegrator
) -> None:
    with pytest.raises(NotConfigured):
        call(account=tenant.account, kind="product_search", values={})
    with pytest.raises(NotConfigured):
        call(account=tenant.account, kind="product_search", values={}, integration=foreign)

    assert reference.requests == []


def test_another_accounts_call_log_is_not_listed(
    api: AdminApi, other_tenant: Tenant, foreign: RuntimeIntegration
) -> None:
    call(account=other_tenant.account, kind="product_search", values={})
    other_call = IntegrationCall.objects.get()

    assert results(api.get("runtime-integration-calls")) == []
    assert api.get(f"runtime-integration-calls/{other_call.pk}").status_code == 404


def test_a_name_rebound_to_a_public_address_is_called_over_plain_http_only_at_the_address_judged(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # OUTBOUND_ALLOWED_NETWORKS is 127.0.0.1/32 (configure). Loopback at the first look-up, public at the next:
    # there is one look-up, and the call goes to the address the plain-http rule was judged on.
    network = Network(monkeypatch, [LOOPBACK, PUBLIC])
    configure("product_search", url=reference.url.replace(LOOPBACK, NAME) + "/products/search")

    result = call(account=tenant.account, kind="product_search", values={"search_term": "shirt"})

    assert result.status_code == 200
    assert (network.lookups, network.connected) == ([LOOPBACK], [LOOPBACK])


def test_a_name_resolving_to_a_public_address_gets_no_plain_http_call(
    tenant: Tenant, reference: ReferenceIntegrator, configure: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    network = Network(monkeypatch, [PUBLIC, LOOPBACK])
    configure("product_search", url=reference.url.replace(LOOPBACK, NAME) + "/products/search")

    with pytest.raises(IntegrationFailed, match="address is refused: plain http is only allowed inside"):
        call(account=tenant.account, kind="product_search", values={"search_term": "shirt"})

    assert (network.lookups, network.connected) == ([PUBLIC], [])
    assert reference.requests == []
