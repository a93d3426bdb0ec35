"""A runtime integration's query parameters, headers and body template keep the order of their keys as configured,
on every database: through the API and the back-office form and back, and on the wire to the integrator
(PostgreSQL's jsonb would store an object's keys shorter first, then bytewise)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pytest
from django.core.exceptions import FieldError
from django.db import connection

from integrations.models import RuntimeIntegration
from tests.support.api import AdminApi, PosApi, results
from tests.support.backoffice import SignIn
from tests.support.integrations import SHIPPING_REQUEST
from tests.support.reference_server import ReferenceIntegrator
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# Neither in jsonb's order (shorter first, then bytewise) nor in bytewise order, at every level.
QUERY = {"zebra_long": "{shop_id}", "a": "{market}", "mm": "{currency_code}"}
HEADERS = {"X-Zeta-Long-Name": "z", "X-A": "a", "X-Mm": "m"}
BODY = {"zebra_long_key": "{shop_id}", "a": "{currency_code}", "mm": {"zz_city": "{city}", "b": "{market}"}}
# The body the template gives for SALE's shop and address, as the integrator receives it.
SENT_BODY = '{"zebra_long_key": "shop-1", "a": "DKK", "mm": {"zz_city": "København", "b": "dk"}}'
SALE = SHIPPING_REQUEST


def _configuration(url: str) -> dict[str, Any]:
    return {"kind": "shipping_options", "method": "POST", "url": url, "query": QUERY, "headers": HEADERS, "body": BODY}


def _assert_in_order(config: Mapping[str, Any]) -> None:
    assert list(config["query"]) == list(QUERY)
    assert list(config["headers"]) == list(HEADERS)
    assert list(config["body"]) == list(BODY) and list(config["body"]["mm"]) == list(BODY["mm"])


def test_the_configured_order_goes_out_to_the_integrator_and_reads_back(
    api: AdminApi, pos: PosApi, reference: ReferenceIntegrator, allow_loopback: None, sign_in: SignIn
) -> None:
    created = api.post("runtime-integrations", _configuration(reference.url + "/shipping-options"))
    assert created.status_code == 201, created.json()
    _assert_in_order(created.json())
    pk = created.json()["id"]

    answer = pos.post("shipping-options", SALE)

    assert answer.status_code == 200, answer.json()
    sent = reference.last("/shipping-options")
    assert sent.raw.decode() == SENT_BODY
    assert list(sent.query.items()) == [("zebra_long", "shop-1"), ("a", "dk"), ("mm", "DKK")]
    names = [name.lower() for name in HEADERS]
    assert [(name, value) for name, value in sent.headers.items() if name in names] == list(
        zip(names, HEADERS.values(), strict=True)
    )

    read = api.get(f"runtime-integrations/{pk}")
    assert read.status_code == 200
    _assert_in_order(read.json())
    _assert_in_order(results(api.get("runtime-integrations"))[0])
    _assert_in_order(RuntimeIntegration.objects.values("query", "headers", "body").get(pk=pk))

    page = sign_in(api.tenant.account, "owner").get(f"/backoffice/integrations/{pk}/edit/")
    assert page.status_code == 200
    form = page.context["form"]
    _assert_in_order({name: json.loads(form[name].value()) for name in ("query", "headers", "body")})


def test_the_back_office_form_saves_the_order_it_is_given(tenant: Tenant, sign_in: SignIn) -> None:
    owner = sign_in(tenant.account, "owner")
    typed = {
        **_configuration("https://erp.example.com/shipping-options"),
        "enabled": "on",
        "secret_fields": "",
        "timeout": "5",
        "transform": "",
    }
    typed.update({name: json.dumps(typed[name]) for name in ("query", "headers", "body")})

    answer = owner.post("/backoffice/integrations/new/", typed)

    assert answer.status_code == 302, answer.context["form"].errors
    _assert_in_order(RuntimeIntegration.objects.values("query", "headers", "body").get(account=tenant.account))


def test_an_update_keeps_the_new_order(api: AdminApi) -> None:
    configuration = _configuration("https://erp.example.com/shipping-options")
    reordered = {name: dict(sorted(configuration[name].items())) for name in ("query", "headers")}
    pk = api.post("runtime-integrations", {**configuration, **reordered}).json()["id"]

    answer = api.patch(f"runtime-integrations/{pk}", {"query": QUERY, "headers": HEADERS})

    assert answer.status_code == 200, answer.json()
    _assert_in_order(answer.json())
    _assert_in_order(api.get(f"runtime-integrations/{pk}").json())


def _column(integration: RuntimeIntegration, name: str) -> Any:
    with connection.cursor() as cursor:
        table = connection.ops.quote_name(RuntimeIntegration._meta.db_table)
        cursor.execute(f"SELECT {connection.ops.quote_name(name)} FROM {table} WHERE id = %s", [integration.pk])  # noqa: S608
        return cursor.fetchone()[0]


def test_the_columns_hold_the_json_text_as_written_and_no_body_is_null(tenant: Tenant) -> None:
    body = {"zz": Decimal("12345678901234567.89"), "a": [Decimal("1.10"), None]}
    integration = RuntimeIntegration.objects.create(
        account=tenant.account, kind="giftcard_pay", url="https://erp.example.com/pay", query=QUERY, body=body
    )
    assert _column(integration, "body") == '{"zz": 12345678901234567.89, "a": [1.1, null]}'
    assert _column(integration, "query") == json.dumps(QUERY)
    assert _column(integration, "headers") == "{}"
    assert RuntimeIntegration.objects.get(pk=integration.pk).body == body

    without = RuntimeIntegration.objects.create(account=tenant.account, kind="giftcard_read", url="https://e.example")
    assert _column(without, "body") is None
    assert RuntimeIntegration.objects.get(pk=without.pk).body is None
    assert list(RuntimeIntegration.objects.filter(body__isnull=True)) == [without]


@pytest.mark.parametrize("lookup", ["query__a", "headers__Authorization", "body__amount"])
def test_a_lookup_by_key_is_refused_on_every_database(lookup: str) -> None:
    with pytest.raises(FieldError):
        RuntimeIntegration.objects.filter(**{lookup: "x"}).exists()
