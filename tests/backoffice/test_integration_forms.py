"""Runtime integrations in the back-office: created and changed through the typed form (secrets masked, the
service's checks and its audit), and "Test this integration" against the reference integrator on 127.0.0.1 (a
kind that may move money only after a confirmation POST); owners and managers only, each in their own account."""

from __future__ import annotations

import json
from typing import Any

import pytest

from accounts.models import AuditEntry
from integrations import services
from integrations.models import IntegrationCall, RuntimeIntegration
from tests.support.backoffice import SignIn
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

SECRET = "Bearer back-office-s3cret"
NEW = "/backoffice/integrations/new/"


def edit_url(integration: RuntimeIntegration) -> str:
    return f"/backoffice/integrations/{integration.pk}/edit/"


def tried_at(integration: RuntimeIntegration) -> str:
    return f"/backoffice/integrations/{integration.pk}/test/"


def form(**change: Any) -> dict[str, Any]:
    return {
        "kind": "giftcard_read",
        "enabled": "on",
        "method": "GET",
        "url": "https://erp.example.com/giftcards/{code}",
        "query": '{"currency_code": "{currency_code}"}',
        "headers": json.dumps({"Authorization": SECRET}),
        "body": "null",
        "secret_fields": "",
        "timeout": "5",
        "transform": "",
        **change,
    }


def stored(tenant: Tenant, **change: Any) -> RuntimeIntegration:
    data = {
        "kind": "giftcard_read",
        "url": "https://erp.example.com/giftcards/{code}",
        "query": {"currency_code": "{currency_code}"},
        "headers": {"Authorization": SECRET},
        **change,
    }
    return services.save_runtime_integration(account=tenant.account, data=data)


# --- Configure ----------------------------------------------------------------------------------------------------


def test_a_manager_creates_an_integration_through_the_form_and_it_is_audited_once(tenant, sign_in: SignIn):
    manager = sign_in(tenant.account, "manager")

    answer = manager.post(NEW, form())

    integration = RuntimeIntegration.objects.get(account=tenant.account)
    assert answer.status_code == 302 and answer["Location"] == f"/backoffice/integrations/{integration.pk}/"
    assert integration.headers == {"Authorization": SECRET}
    assert integration.query == {"currency_code": "{currency_code}"}
    [entry] = AuditEntry.objects.filter(account=tenant.account, target_type="runtime_integration")
    assert (entry.action, entry.target_id, entry.actor) == ("created", str(integration.pk), "manager@acme.example")
    assert SECRET not in json.dumps(entry.changes)


def test_the_change_form_masks_secrets_and_a_masked_value_sent_back_keeps_the_secret(tenant, sign_in: SignIn):
    integration = stored(tenant)
    owner = sign_in(tenant.account, "owner")

    page = owner.get(edit_url(integration))
    assert page.status_code == 200
    assert "s3cret" not in page.content.decode() and "********" in page.content.decode()
    masked_headers = page.context["form"]["headers"].value()
    answer = owner.post(edit_url(integration), form(headers=masked_headers, timeout="9"))

    assert answer.status_code == 302
    integration.refresh_from_db()
    assert (integration.headers, str(integration.timeout)) == ({"Authorization": SECRET}, "9.0")
    entry = AuditEntry.objects.filter(target_type="runtime_integration").latest("pk")
    assert entry.action == "changed" and list(entry.changes) == ["timeout"]
    assert AuditEntry.objects.filter(target_type="runtime_integration").count() == 2  # created, changed


def test_a_non_public_url_is_an_error_on_the_url_field(tenant, sign_in: SignIn, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    owner = sign_in(tenant.account, "owner")

    for url in ("https://10.0.0.1/giftcards/{code}", "https://localhost/giftcards/{code}", "https://[::1]/x"):
        answer = owner.post(NEW, form(url=url))
        assert answer.status_code == 400, url
        assert "not a public address" in str(answer.context["form"].errors["url"]), url
    assert not RuntimeIntegration.objects.exists()
    assert not AuditEntry.objects.filter(target_type="runtime_integration").exists()


def test_plain_http_outside_the_allowed_networks_is_an_error_on_the_url_field(tenant, sign_in: SignIn, settings):
    settings.OUTBOUND_ALLOWED_NETWORKS = []
    owner = sign_in(tenant.account, "owner")

    answer = owner.post(NEW, form(url="http://93.184.215.14/giftcards/{code}"))

    assert answer.status_code == 400
    assert "plain http" in str(answer.context["form"].errors["url"])


def test_a_bad_method_is_an_error_on_the_method_field(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")

    answer = owner.post(NEW, form(method="DELETE"))

    assert answer.status_code == 400
    assert list(answer.context["form"].errors) == ["method"]
    assert 'id="id_method"' in answer.content.decode() and "errorlist" in answer.content.decode()
    assert not RuntimeIntegration.objects.exists()


def test_the_service_checks_name_their_field(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")

    unknown = owner.post(NEW, form(url="https://erp.example.com/{barcode}"))
    body_on_get = owner.post(NEW, form(body='{"amount": "{amount}"}'))

    assert "unknown placeholder {barcode}" in str(unknown.context["form"].errors["url"])
    assert "a GET request has no body" in str(body_on_get.context["form"].errors["body"])
    assert not RuntimeIntegration.objects.exists()


def test_a_second_integration_of_a_kind_is_an_error_on_kind(tenant, sign_in: SignIn):
    stored(tenant)
    owner = sign_in(tenant.account, "owner")

    answer = owner.post(NEW, form())

    assert answer.status_code == 400 and "kind" in answer.context["form"].errors
    assert RuntimeIntegration.objects.count() == 1


def test_the_list_and_the_page_link_to_new_change_and_test_for_a_manager_only(tenant, sign_in: SignIn):
    integration = stored(tenant)
    manager = sign_in(tenant.account, "manager")
    viewer = sign_in(tenant.account, "viewer")

    assert NEW in manager.get("/backoffice/integrations/").content.decode()
    detail = manager.get(f"/backoffice/integrations/{integration.pk}/").content.decode()
    assert edit_url(integration) in detail and tried_at(integration) in detail
    assert NEW not in viewer.get("/backoffice/integrations/").content.decode()
    seen = viewer.get(f"/backoffice/integrations/{integration.pk}/").content.decode()
    assert edit_url(integration) not in seen and tried_at(integration) not in seen


# --- Test this integration ----------------------------------------------------------------------------------------


def test_a_valid_answer_shows_its_status_time_and_beginning(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any
):
    reference.add_card("TEST-CARD", amount=50)
    integration = configure("giftcard_read")
    owner = sign_in(tenant.account, "owner")

    answer = owner.get(tried_at(integration))

    assert answer.status_code == 200
    result = answer.context["result"]
    assert (result["ok"], result["status_code"], result["problems"]) == (True, 200, [])
    page = answer.content.decode()
    assert "valid: it matches the spec" in page and "TEST-CARD" in page
    assert [r.path for r in reference.requests] == ["/giftcards/TEST-CARD"]
    assert IntegrationCall.objects.filter(account=tenant.account).count() == 1


def test_an_invalid_answer_shows_each_error_by_field(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any
):
    reference.script["*"] = [(200, {"code": "TEST-CARD", "amount": 50})]
    integration = configure("giftcard_read")
    owner = sign_in(tenant.account, "owner")

    answer = owner.get(tried_at(integration))

    assert answer.status_code == 200 and answer.context["result"]["ok"] is False
    fields = [p["field"] for p in answer.context["result"]["problems"]]
    assert "currency_code" in fields
    page = answer.content.decode()
    assert "not valid" in page and "<code>currency_code</code>" in page
    assert len(reference.requests) == 1


def test_typed_sample_values_are_sent(tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any):
    reference.add_card("GC-5", amount=25)
    integration = configure("giftcard_read")
    owner = sign_in(tenant.account, "owner")

    answer = owner.post(tried_at(integration), {"values": '{"code": "GC-5"}'})

    assert answer.context["result"]["ok"] is True
    assert reference.last().path == "/giftcards/GC-5"
    bad = owner.post(tried_at(integration), {"values": "[1, 2]"})
    assert bad.status_code == 400 and "values" in bad.context["form"].errors
    assert len(reference.requests) == 1


@pytest.mark.parametrize("kind", ["giftcard_pay", "giftcard_activate", "customer_account_pay"])
def test_a_kind_that_may_move_money_is_called_only_after_the_confirmation_post(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any, kind: str
):
    integration = configure(kind)
    owner = sign_in(tenant.account, "owner")

    confirmation = owner.get(tried_at(integration))
    unconfirmed = owner.post(tried_at(integration), {"values": "{}"})

    assert confirmation.status_code == 200 and "result" not in confirmation.context
    assert "may move money on the integrator" in confirmation.content.decode()
    assert 'name="confirm" value="yes"' in confirmation.content.decode()
    assert unconfirmed.status_code == 200 and "result" not in unconfirmed.context
    assert reference.requests == []
    assert not IntegrationCall.objects.exists()

    confirmed = owner.post(tried_at(integration), {"values": "{}", "confirm": "yes"})

    assert confirmed.status_code == 200 and confirmed.context["result"]["status_code"] is not None
    assert len(reference.requests) == 1 and reference.requests[0].method == "POST"


def test_a_confirmed_gift_card_payment_shows_the_integrators_answer(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any
):
    reference.add_card("TEST-CARD", amount=100)
    integration = configure("giftcard_pay")
    owner = sign_in(tenant.account, "manager")

    answer = owner.post(tried_at(integration), {"values": '{"amount": 10}', "confirm": "yes"})

    assert answer.context["result"]["ok"] is True, answer.context["result"]
    assert reference.cards["TEST-CARD"]["amount"] == 90


def test_test_calls_are_rate_limited_per_member(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any, settings
):
    settings.PREVIEW_RATE_LIMIT_PER_KEY = 2
    integration = configure("giftcard_read")
    owner = sign_in(tenant.account, "owner")

    answers = [owner.get(tried_at(integration)) for _ in range(3)]

    assert [a.status_code for a in answers] == [200, 200, 429]
    assert "Too many" in answers[2].content.decode() and int(answers[2]["Retry-After"]) > 0
    assert len(reference.requests) == 2


# --- Who ----------------------------------------------------------------------------------------------------------


def test_a_viewer_may_neither_configure_nor_test(
    tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any
):
    integration = configure("giftcard_read")
    viewer = sign_in(tenant.account, "viewer")

    refused = [
        viewer.get(NEW),
        viewer.post(NEW, form(kind="customer_lookup", url="https://erp.example.com/customers", query="{}")),
        viewer.get(edit_url(integration)),
        viewer.post(edit_url(integration), form(timeout="9")),
        viewer.get(tried_at(integration)),
        viewer.post(tried_at(integration), {"values": "{}", "confirm": "yes"}),
    ]

    assert [a.status_code for a in refused] == [403] * 6
    assert RuntimeIntegration.objects.count() == 1 and RuntimeIntegration.objects.get().timeout == 5
    assert reference.requests == []
    assert not AuditEntry.objects.filter(target_type="runtime_integration").exists()


def test_another_accounts_integration_is_not_found(
    tenant, other_tenant, sign_in: SignIn, reference: ReferenceIntegrator, configure: Any
):
    integration = configure("giftcard_read")
    stranger = sign_in(other_tenant.account, "owner")

    answers = [
        stranger.get(f"/backoffice/integrations/{integration.pk}/"),
        stranger.get(edit_url(integration)),
        stranger.post(edit_url(integration), form(timeout="9")),
        stranger.get(tried_at(integration)),
        stranger.post(tried_at(integration), {"values": "{}", "confirm": "yes"}),
    ]

    assert [a.status_code for a in answers] == [404] * 5
    assert RuntimeIntegration.objects.get().timeout == 5
    assert reference.requests == []
