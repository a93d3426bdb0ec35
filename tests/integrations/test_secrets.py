"""Secrets of a runtime integration are known by declaration, not by name: every header value (but a few public
headers), the URL's own query values, and the places declared in ``secret_fields`` (a query value under ``k``, a
body value under ``card.pin``, the URL's path). They are masked on every read, kept when sent back masked (for
the same destination, while still declared) and never written to an error, the call log or a log line."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from core.secrets import suggest
from integrations import services
from integrations.errors import IntegrationFailed
from integrations.models import IntegrationCall, RuntimeIntegration
from integrations.runtime import call
from tests.support.api import AdminApi, error_fields, results
from tests.support.reference_server import Received, ReferenceIntegrator
from tests.support.tenants import Tenant

MASK = "********"
K = "kq-7Zx9Secret-01"  # a query value under a name that says nothing
PIN = "pin-8Qw2Secret-02"
HEADER = "hdr-5Rt4Secret-03"  # under X-Anything
PATH_TOKEN = "path-3Yu6Secret-04"
URL_TOKEN = "urlq-9Io1Secret-05"
ALL = (K, PIN, HEADER, PATH_TOKEN, URL_TOKEN)


def configuration(reference: ReferenceIntegrator) -> dict[str, Any]:
    return {
        "kind": "giftcard_pay",
        "method": "POST",
        "url": f"{reference.url}/hooks/{PATH_TOKEN}/giftcards/{{code}}/pay?token={URL_TOKEN}&shop={{shop_id}}",
        "query": {"k": K, "currency": "{currency_code}"},
        "headers": {"X-Anything": HEADER, "Accept": "application/json"},
        "body": {"amount": "{amount}", "card": {"pin": PIN, "code": "{code}"}},
        "secret_fields": ["query.k", "body.card.pin", "url.path"],
        "timeout": "2",
    }


@pytest.fixture
def stored(api: AdminApi, reference: ReferenceIntegrator, allow_loopback: None) -> RuntimeIntegration:
    response = api.post("runtime-integrations", configuration(reference))
    assert response.status_code == 201, response.json()
    return RuntimeIntegration.objects.get()


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in ALL:
            assert secret not in text


# --- reads ---------------------------------------------------------------------------------------------------


def test_every_read_masks_declared_and_implicit_secrets(
    api: AdminApi, reference: ReferenceIntegrator, stored: RuntimeIntegration
) -> None:
    for response in (api.get(f"runtime-integrations/{stored.pk}"), api.get("runtime-integrations")):
        assert_no_secret(response.content.decode())
    body = api.get(f"runtime-integrations/{stored.pk}").json()
    assert body["url"] == f"{reference.url}/{MASK}?token={MASK}&shop={{shop_id}}"
    assert body["query"] == {"k": MASK, "currency": "{currency_code}"}
    assert body["headers"] == {"X-Anything": MASK, "Accept": "application/json"}
    assert body["body"] == {"amount": "{amount}", "card": {"pin": MASK, "code": "{code}"}}
    assert body["secret_fields"] == ["query.k", "body.card.pin", "url.path"]


def test_the_create_answer_masks_too(api: AdminApi, reference: ReferenceIntegrator, allow_loopback: None) -> None:
    response = api.post("runtime-integrations", configuration(reference))

    assert response.status_code == 201
    assert_no_secret(response.content.decode())


def test_the_admin_change_form_masks_and_saving_it_back_keeps_every_secret(
    admin_client: Client, tenant: Tenant, stored: RuntimeIntegration
) -> None:
    url = reverse("admin:integrations_runtimeintegration_change", args=[stored.pk])
    page = admin_client.get(url)
    assert_no_secret(page.content.decode())
    assert_no_secret(admin_client.get(reverse("admin:integrations_runtimeintegration_changelist")).content.decode())
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if name != "account"}
    data = {k: "on" if v is True else v for k, v in data.items() if v not in (None, False)}
    before = {name: getattr(stored, name) for name in ("url", "query", "headers", "body", "secret_fields")}

    response = admin_client.post(url, data)

    assert response.status_code == 302, response.context["adminform"].form.errors
    stored.refresh_from_db()
    assert {name: getattr(stored, name) for name in before} == before


# --- writes --------------------------------------------------------------------------------------------------


def test_what_was_read_put_back_keeps_every_secret(api: AdminApi, stored: RuntimeIntegration) -> None:
    before = {name: getattr(stored, name) for name in ("url", "query", "headers", "body", "secret_fields")}
    read = api.get(f"runtime-integrations/{stored.pk}").json()
    assert (read["query"]["k"], read["body"]["card"]["pin"], read["headers"]["X-Anything"]) == (MASK, MASK, MASK)

    response = api.put(f"runtime-integrations/{stored.pk}", {**read, "timeout": "3"})

    assert response.status_code == 200, response.json()
    stored.refresh_from_db()
    assert {name: getattr(stored, name) for name in before} == before
    assert str(stored.timeout) == "3.0"


def test_a_secret_declared_public_is_not_revealed_by_sending_its_mask_back(
    api: AdminApi, stored: RuntimeIntegration
) -> None:
    read = api.get(f"runtime-integrations/{stored.pk}").json()

    response = api.put(f"runtime-integrations/{stored.pk}", {**read, "secret_fields": []})

    assert response.status_code == 400
    assert error_fields(response) == {"url", "query.k", "body.card.pin"}
    assert RuntimeIntegration.objects.get().secret_fields == ["query.k", "body.card.pin", "url.path"]


def test_a_secret_declared_public_without_sending_its_place_is_refused_too(
    api: AdminApi, stored: RuntimeIntegration
) -> None:
    response = api.patch(f"runtime-integrations/{stored.pk}", {"secret_fields": ["url.path"]})

    assert response.status_code == 400
    assert error_fields(response) == {"query.k", "body.card.pin"}
    assert_no_secret(api.get(f"runtime-integrations/{stored.pk}").content.decode())

    # Given again (so known to the client), a value may be declared public.
    response = api.patch(
        f"runtime-integrations/{stored.pk}", {"secret_fields": ["query.k", "url.path"], "body": {"card": {"pin": "1"}}}
    )
    assert response.status_code == 200, response.json()
    assert response.json()["body"] == {"card": {"pin": "1"}}


def test_a_new_host_does_not_get_the_stored_secrets(
    api: AdminApi, reference: ReferenceIntegrator, stored: RuntimeIntegration
) -> None:
    read = api.get(f"runtime-integrations/{stored.pk}").json()
    moved = read["url"].replace("http://127.0.0.1", "https://collector.example")

    for response in (
        api.put(f"runtime-integrations/{stored.pk}", {**read, "url": moved}),
        api.patch(f"runtime-integrations/{stored.pk}", {"url": moved.replace(f"/{MASK}", "/giftcards/{code}")}),
    ):
        assert response.status_code == 400
        assert {"headers.X-Anything", "query.k", "body.card.pin", "url"} <= error_fields(response)
    assert RuntimeIntegration.objects.get().url.startswith("http://127.0.0.1")

    # Given again, the secrets go to the new host.
    again = {**read, **{k: v for k, v in configuration(reference).items() if k != "url"}}
    response = api.put(f"runtime-integrations/{stored.pk}", {**again, "url": "https://collector.example/pay"})
    assert response.status_code == 200, response.json()
    assert RuntimeIntegration.objects.get().headers["X-Anything"] == HEADER


def test_a_declared_place_must_exist(api: AdminApi, reference: ReferenceIntegrator, allow_loopback: None) -> None:
    response = api.post("runtime-integrations", {**configuration(reference), "secret_fields": ["query.key", "pin"]})

    assert response.status_code == 400
    assert error_fields(response) == {"secret_fields[0]", "secret_fields[1]"}


def test_without_a_declaration_secret_looking_names_are_suggested_and_kept(
    api: AdminApi, reference: ReferenceIntegrator, allow_loopback: None
) -> None:
    config = {**configuration(reference), "body": {"pin": PIN, "shipping": "{shop_id}"}}
    del config["secret_fields"]
    created = api.post("runtime-integrations", {**config, "query": {"k": K, "apikey": "a-key-1234"}}).json()

    assert created["secret_fields"] == ["query.apikey", "body.pin"]
    assert created["query"] == {"k": K, "apikey": MASK}  # "k" says nothing: only a declaration makes it secret

    # A later change without a declaration keeps the stored one and suggests for the new names only.
    changed = api.patch(
        f"runtime-integrations/{created['id']}", {"query": {"k": MASK, "apikey": MASK, "token": "t-5678"}}
    )
    assert changed.status_code == 400  # "k" was never secret: its mask is not a stored secret
    changed = api.patch(f"runtime-integrations/{created['id']}", {"query": {"k": K, "apikey": MASK, "token": "t"}})
    assert changed.json()["secret_fields"] == ["query.apikey", "body.pin", "query.token"]
    assert RuntimeIntegration.objects.get().query["apikey"] == "a-key-1234"


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        ({"apikey": 1, "api_key": 1, "accessToken": 1, "client-secret": 1, "pin": 1}, 5),
        ({"k": 1, "shipping": 1, "keyword": 1, "author": 1, "q": 1, "shop": 1}, 0),
    ],
)
def test_the_suggestion_reads_words_not_substrings(names: dict[str, int], expected: int) -> None:
    assert len(suggest(names, None)) == expected


# --- errors, the call log and logs ---------------------------------------------------------------------------


def echo(request: Received) -> Any:
    """A careless integrator: its error message repeats everything it got."""
    return 401, {"error": f"denied {request.path} {request.query} {request.headers} {request.raw!r}"}


def test_no_secret_reaches_an_error_the_call_log_the_test_answer_or_a_log_line(
    api: AdminApi,
    tenant: Tenant,
    reference: ReferenceIntegrator,
    stored: RuntimeIntegration,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    reference.always["*"] = echo
    values = {"code": "GC1", "amount": 5, "currency_code": "DKK", "shop_id": "s-1"}

    with pytest.raises(IntegrationFailed) as caught:
        call(account=tenant.account, kind="giftcard_pay", values=values)
    tested = api.post(f"runtime-integrations/{stored.pk}/test", {"values": values})

    got = reference.last()
    assert got.headers["x-anything"] == HEADER and got.query["k"] == K and PATH_TOKEN in got.path  # all were sent
    assert json.loads(got.raw)["card"]["pin"] == PIN and got.query["token"] == URL_TOKEN
    assert caught.value.message.startswith("the integrator answered HTTP 401: denied")
    calls = [json.dumps(row, default=str) for row in IntegrationCall.objects.values()]
    assert len(calls) == 2
    listed = api.get("runtime-integration-calls")
    assert len(results(listed)) == 2
    assert_no_secret(caught.value.message, str(caught.value.answer), tested.content.decode(), *calls)
    assert_no_secret(listed.content.decode(), caplog.text)
    assert "urllib3.connectionpool" in caplog.text  # the debug line of the request was there, redacted


def test_stored_configurations_get_declared_what_their_names_masked_before(tenant: Tenant) -> None:
    from importlib import import_module

    from django.apps import apps

    migration = import_module("integrations.migrations.0002_secret_fields")
    old = RuntimeIntegration.objects.create(
        account=tenant.account,
        kind="giftcard_pay",
        method="POST",
        url="https://erp.example.com/pay",
        query={"apikey": "a", "shop": "{shop_id}"},
        body={"card": {"pin": "1234", "code": "{code}"}, "lines": [{"auth_code": "x"}], "amount": "{amount}"},
    )

    migration.declare_what_was_masked(apps, None)

    old.refresh_from_db()
    assert old.secret_fields == ["query.apikey", "body.card.pin", "body.lines[0].auth_code"]
    assert services.masked(old)["body"]["card"]["pin"] == MASK
