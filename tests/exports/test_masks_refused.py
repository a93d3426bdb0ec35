"""A masked secret that keeps nothing (sent under a new header name, a new auth value, a new query parameter, a
password where none is stored, a signing secret on create) is refused with a 400 naming the field, by the REST
API and the admin form alike: nothing is dropped silently, nothing is stored as a secret."""

from __future__ import annotations

import json
from typing import Any

import pytest

from exports.models import ExportQueue
from tests.support.admin import admin_url
from tests.support.api import AdminApi, error_fields
from tests.support.queues import SECRET, make_queue

pytestmark = pytest.mark.django_db

MASK = "********"
HOOK = {
    "type": "webhook",
    "url": "https://erp.example.com/hooks/orders",
    "headers": {"X-Shop": "shop-Secret-1", "Accept": "application/json"},
    "secret": SECRET,
}


@pytest.fixture
def queue(tenant) -> ExportQueue:
    return make_queue(tenant, HOOK["url"], delivery={"headers": HOOK["headers"]})


def _read(api: AdminApi, queue: ExportQueue) -> dict[str, Any]:
    body = api.get(f"export-queues/{queue.pk}").json()
    return {k: body[k] for k in ("name", "entity_type", "trigger", "transform", "delivery")}


@pytest.mark.parametrize("method", ["patch", "put"])
def test_a_masked_value_under_a_new_header_name_is_refused_naming_it(
    api: AdminApi, queue: ExportQueue, method: str
) -> None:
    body = _read(api, queue)
    alone = {**body["delivery"], "headers": {"X-New": MASK}}
    beside = {**body["delivery"], "headers": {**body["delivery"]["headers"], "X-New": MASK}}

    answers = [getattr(api, method)(f"export-queues/{queue.pk}", {**body, "delivery": d}) for d in (alone, beside)]

    for response in answers:
        assert response.status_code == 400, response.json()
        assert error_fields(response) == {"delivery.headers.X-New"}
    assert ExportQueue.objects.get().delivery == queue.delivery  # no header dropped


def test_a_masked_value_moved_to_another_header_name_is_refused(api: AdminApi, queue: ExportQueue) -> None:
    delivery = {**_read(api, queue)["delivery"], "headers": {"X-Renamed": MASK}}

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": delivery})

    assert response.status_code == 400 and error_fields(response) == {"delivery.headers.X-Renamed"}


def test_a_masked_header_on_create_is_refused(api: AdminApi) -> None:
    body = {
        "name": "new",
        "entity_type": "sales",
        "transform": {"type": "identity"},
        "delivery": {**HOOK, "headers": {"X-Token": MASK}},
    }

    response = api.post("export-queues", body)

    assert response.status_code == 400 and error_fields(response) == {"delivery.headers.X-Token"}
    assert not ExportQueue.objects.exists()


def test_a_masked_signing_secret_with_none_stored_is_refused(api: AdminApi) -> None:
    body = {"name": "new", "entity_type": "sales", "transform": {"type": "identity"}, "delivery": {**HOOK}}
    body["delivery"]["secret"] = MASK

    response = api.post("export-queues", body)
    generated = api.post("export-queues", {**body, "delivery": {k: v for k, v in HOOK.items() if k != "secret"}})

    assert response.status_code == 400 and error_fields(response) == {"delivery.secret"}
    assert generated.status_code == 201 and generated.json()["generated_secret"].startswith("whsec_")


def test_a_masked_auth_value_of_another_kind_is_refused(api: AdminApi, queue: ExportQueue) -> None:
    delivery = {**_read(api, queue)["delivery"], "auth": {"type": "bearer", "token": MASK}}

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": delivery})

    assert response.status_code == 400 and error_fields(response) == {"delivery.auth.token"}
    assert "auth" not in ExportQueue.objects.get().delivery


def test_a_masked_query_value_under_a_new_name_is_refused(api: AdminApi, queue: ExportQueue) -> None:
    delivery = {**_read(api, queue)["delivery"], "url": "https://erp.example.com/hooks/orders?sig=" + MASK}

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": delivery})

    assert response.status_code == 400 and error_fields(response) == {"delivery.url"}


@pytest.mark.parametrize(
    ("kind", "field"), [("ftp", "password"), ("sftp", "password"), ("sftp", "private_key")], ids=str
)
def test_a_masked_password_with_none_stored_is_refused(api: AdminApi, kind: str, field: str) -> None:
    delivery = {"type": kind, "host": "files.example.com", "username": "u", field: MASK}
    body = {"name": "files", "entity_type": "sales", "transform": {"type": "identity"}, "delivery": delivery}

    response = api.post("export-queues", body)

    assert response.status_code == 400 and error_fields(response) == {f"delivery.{field}"}


def test_the_admin_form_refuses_a_masked_value_under_a_new_header_name(admin_client, queue: ExportQueue) -> None:
    data = {
        "name": queue.name,
        "entity_type": queue.entity_type,
        "enabled": "on",
        "trigger": "realtime",
        "daily_at": "",
        "transform__type": "identity",
        "transform__columns": "[]",
        "transform__fields": "{}",
        "delivery__type": "webhook",
        "delivery__url": HOOK["url"],
        "delivery__secret": MASK,
        "delivery__headers": json.dumps({"X-Shop": MASK, "X-New": MASK}),
        "_save": "Save",
    }

    response = admin_client.post(admin_url(ExportQueue, "change", queue.pk), data)

    assert response.status_code == 200, "the form was saved"
    errors = json.dumps({k: [str(e) for e in v] for k, v in response.context["adminform"].form.errors.items()})
    assert "X-New" in errors and "is masked" in errors
    assert ExportQueue.objects.get().delivery == queue.delivery
