"""The back-office REST API for exports: queues (CRUD, secrets, preview, bulk retry) and the export log."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from exports.serializers import MASK
from tests.support.api import AdminApi, error_fields, results
from tests.support.imports import import_orders
from tests.support.queues import SECRET, exported_item, make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

QUEUE_FIELDS = {
    "id",
    "name",
    "entity_type",
    "enabled",
    "filters",
    "trigger",
    "daily_at",
    "concurrency",
    "transform",
    "delivery",
    "failing_since",
    "disabled_at",
    "disabled_reason",
    "created_at",
    "updated_at",
}
LOG_FIELDS = {
    "id",
    "queue",
    "queue_name",
    "entity_type",
    "element_key",
    "status",
    "message",
    "attempts",
    "status_code",
    "error",
    "duration_ms",
    "delivery_id",
    "created_at",
    "finished_at",
    "paused_until",
    "pause_reason",
    "attempt_log",
}


def queue_body(**overrides: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "name": "orders to erp",
        "entity_type": "incoming_order_state_changes",
        "trigger": "realtime",
        "transform": {"type": "identity"},
        "delivery": {"type": "webhook", "url": "https://erp.example.com/hook", "headers": {"X-Shop": "acme"}},
    }
    body.update(overrides)
    return body


def stored_delivery(queue_id: int) -> dict[str, Any]:
    return ExportQueue.objects.get(pk=queue_id).delivery


# --- Queues: create, read, update, delete ------------------------------------------------------------------


def test_create_answers_the_queue_with_every_contract_field(api: AdminApi) -> None:
    response = api.post("export-queues", queue_body(daily_at="06:30", trigger="daily"))

    assert response.status_code == 201, response.json()
    body = response.json()
    assert set(body) == QUEUE_FIELDS | {"generated_secret"}
    assert body["trigger"] == "daily" and body["daily_at"] == "06:30"
    assert body["enabled"] is True and body["filters"] == {}
    assert ExportQueue.objects.get(pk=body["id"]).account == api.tenant.account


def test_a_generated_web_hook_secret_is_answered_once_and_never_shown_back(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body()).json()

    secret = created["generated_secret"]
    assert secret.startswith("whsec_")
    assert stored_delivery(created["id"])["secret"] == secret
    assert created["delivery"]["secret"] == MASK
    for response in (api.get(f"export-queues/{created['id']}"), api.get("export-queues")):
        assert secret not in response.content.decode()
        assert "generated_secret" not in response.content.decode()


def test_a_given_secret_is_stored_and_not_answered(api: AdminApi) -> None:
    body = queue_body(delivery={"type": "webhook", "url": "https://erp.example.com/hook", "secret": SECRET})

    response = api.post("export-queues", body)

    assert response.json()["generated_secret"] is None
    assert SECRET not in response.content.decode()
    assert stored_delivery(response.json()["id"])["secret"] == SECRET


def test_the_masked_secret_sent_back_keeps_the_stored_one(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body()).json()
    secret = created["generated_secret"]
    body = {k: created[k] for k in ("name", "entity_type", "trigger", "transform", "delivery")}
    body["delivery"]["url"] = "https://erp.example.com/other"

    response = api.put(f"export-queues/{created['id']}", body)

    assert response.status_code == 200, response.json()
    assert response.json()["generated_secret"] is None
    assert stored_delivery(created["id"]) == {**body["delivery"], "secret": secret, "headers": {"X-Shop": "acme"}}


def test_a_secret_left_out_of_an_update_keeps_the_stored_one(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body()).json()

    api.patch(f"export-queues/{created['id']}", {"delivery": {"type": "webhook", "url": "https://erp.example.com/x"}})

    assert stored_delivery(created["id"])["secret"] == created["generated_secret"]


def test_a_null_secret_generates_a_new_one(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body()).json()
    delivery = {**created["delivery"], "secret": None}

    response = api.patch(f"export-queues/{created['id']}", {"delivery": delivery})

    rotated = response.json()["generated_secret"]
    assert rotated.startswith("whsec_") and rotated != created["generated_secret"]
    assert stored_delivery(created["id"])["secret"] == rotated


def test_passwords_tokens_and_auth_headers_are_masked_and_kept(api: AdminApi) -> None:
    delivery = {
        "type": "webhook",
        "url": "https://erp.example.com/hook",
        "secret": SECRET,
        "headers": {"Authorization": "Bearer header-token", "X-Shop": "acme"},
        "auth": {"type": "basic", "username": "erp", "password": "hunter2"},
    }
    created = api.post("export-queues", queue_body(delivery=delivery)).json()

    shown = created["delivery"]
    assert shown["auth"] == {"type": "basic", "username": MASK, "password": MASK}
    assert shown["headers"] == {"Authorization": MASK, "X-Shop": MASK}
    assert shown["url"] == f"https://erp.example.com/{MASK}"
    assert "hunter2" not in str(created) and "header-token" not in str(created)

    api.patch(f"export-queues/{created['id']}", {"delivery": shown})
    assert stored_delivery(created["id"]) == delivery


def test_put_resets_omitted_optional_fields(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body(enabled=False, filters={"markets": ["dk"]})).json()

    response = api.put(f"export-queues/{created['id']}", queue_body(name="renamed"))

    body = response.json()
    assert (body["name"], body["enabled"], body["filters"]) == ("renamed", True, {})


def test_patch_changes_only_the_given_fields(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body(filters={"markets": ["dk"]})).json()

    body = api.patch(f"export-queues/{created['id']}", {"enabled": False}).json()

    assert (body["enabled"], body["filters"], body["name"]) == (False, {"markets": ["dk"]}, "orders to erp")


def test_delete_removes_the_queue(api: AdminApi) -> None:
    created = api.post("export-queues", queue_body()).json()

    assert api.delete(f"export-queues/{created['id']}").status_code == 204
    assert not ExportQueue.objects.filter(pk=created["id"]).exists()


def test_the_list_shows_only_the_accounts_queues(api: AdminApi, other_tenant: Tenant) -> None:
    make_queue(api.tenant, "https://example.com/a", name="mine")
    make_queue(other_tenant, "https://example.com/b", name="theirs")

    rows = results(api.get("export-queues"))

    assert [r["name"] for r in rows] == ["mine"]
    assert set(rows[0]) == QUEUE_FIELDS
    assert rows[0]["delivery"]["secret"] == MASK and SECRET not in str(rows)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"delivery": {"type": "webhook", "url": "ftp://erp.example.com/hook"}}, "delivery.url"),
        ({"delivery": {"type": "webhook"}}, "delivery.url"),
        ({"delivery": {"type": "webhook", "url": "https://x.example.com", "secret": "nope"}}, "delivery.secret"),
        ({"delivery": {"type": "carrier pigeon"}}, "delivery.type"),
        ({"delivery": "https://erp.example.com"}, "delivery"),
        ({"transform": {"type": "no such transform"}}, "transform.type"),
        ({"filters": {"colours": ["red"]}}, "filters.colours"),
        ({"entity_type": "invoices"}, "entity_type"),
        ({"trigger": "weekly"}, "trigger"),
        ({"daily_at": "25:00"}, "daily_at"),
        ({"name": ""}, "name"),
    ],
)
def test_a_configuration_that_cannot_work_is_refused_naming_the_field(
    api: AdminApi, change: dict[str, Any], field: str
) -> None:
    response = api.post("export-queues", queue_body(**change))

    assert response.status_code == 400
    assert response.json()["status"] == "ERROR"
    assert error_fields(response) == {field}
    assert not ExportQueue.objects.exists()


EMAIL = {"type": "email", "recipients": ["ops@acme.example"]}


@pytest.mark.parametrize(
    ("delivery", "field"),
    [
        ({**EMAIL, "from_name": "Acme\r\nBcc: victim@example.net"}, "delivery.from_name"),
        ({**EMAIL, "from_name": "ceo@bank.example"}, "delivery.from_name"),
        ({**EMAIL, "reply_to": "erp@acme.example\r\nBcc: victim@example.net"}, "delivery.reply_to"),
        ({**EMAIL, "recipients": [f"r{i}@acme.example" for i in range(11)]}, "delivery.recipients"),
    ],
)
def test_an_email_sender_that_could_inject_or_spoof_is_refused_naming_the_field(
    api: AdminApi, delivery: dict[str, Any], field: str
) -> None:
    response = api.post("export-queues", queue_body(delivery=delivery))

    assert response.status_code == 400
    assert error_fields(response) == {field}
    assert not ExportQueue.objects.exists()


def test_an_update_is_validated_by_the_service_too(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": {"type": "webhook", "url": "gopher://x"}})

    assert response.status_code == 400
    assert error_fields(response) == {"delivery.url"}


@pytest.mark.parametrize("concurrency", [0, 65, "many", 2.5])
def test_a_queues_concurrency_outside_1_to_the_maximum_is_refused_naming_it(
    api: AdminApi, concurrency: Any, settings: Any
) -> None:
    settings.EXPORT_QUEUE_CONCURRENCY_MAX = 64
    response = api.post("export-queues", queue_body(concurrency=concurrency))

    assert response.status_code == 400
    assert error_fields(response) == {"concurrency"}
    assert not ExportQueue.objects.exists()


def test_a_queues_concurrency_is_stored_answered_and_reset_to_the_default_with_null(api: AdminApi) -> None:
    response = api.post("export-queues", queue_body(concurrency=4))
    assert response.status_code == 201, response.json()
    queue_id = response.json()["id"]
    assert response.json()["concurrency"] == ExportQueue.objects.get(pk=queue_id).concurrency == 4

    response = api.patch(f"export-queues/{queue_id}", {"concurrency": None})

    assert response.status_code == 200, response.json()
    assert response.json()["concurrency"] is ExportQueue.objects.get(pk=queue_id).concurrency is None
    assert services.queue_concurrency(ExportQueue.objects.get(pk=queue_id)) == 16  # EXPORT_QUEUE_CONCURRENCY


def test_a_duplicate_name_is_refused_naming_the_name(api: AdminApi) -> None:
    make_queue(api.tenant, "https://example.com/a", name="orders to erp")

    response = api.post("export-queues", queue_body())

    assert response.status_code == 400
    assert error_fields(response) == {"name"}


def test_another_accounts_queue_is_404_everywhere(api: AdminApi, other_tenant: Tenant) -> None:
    theirs = make_queue(other_tenant, "https://example.com/b")
    path = f"export-queues/{theirs.pk}"

    assert api.get(path).status_code == 404
    assert api.patch(path, {"enabled": False}).status_code == 404
    assert api.put(path, queue_body()).status_code == 404
    assert api.delete(path).status_code == 404
    assert api.post(f"{path}/preview").status_code == 404
    assert api.post(f"{path}/retry").status_code == 404
    assert ExportQueue.objects.get(pk=theirs.pk).enabled is True


def test_a_non_numeric_id_is_404(api: AdminApi) -> None:
    assert api.get("export-queues/abc").status_code == 404
    assert api.get("export-logs/99999999999999999999").status_code == 404


def test_a_key_without_the_admin_scope_is_refused(api: AdminApi) -> None:
    response = api.client.get(f"/api/v1/export-queues/?{api.tenant.query(api.tenant.imports_key)}")

    assert response.status_code == 403


# --- Preview -------------------------------------------------------------------------------------------------


def test_preview_renders_the_newest_stored_entity(api: AdminApi, client) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    import_orders(client, api.tenant, "WEB-1", "WEB-2")

    response = api.post(f"export-queues/{queue.pk}/preview")

    assert response.status_code == 200, response.json()
    body = response.json()
    assert set(body) == {"element_key", "content_type", "extension", "content"}
    assert body["element_key"].startswith("WEB-2:")
    assert (body["content_type"], body["extension"]) == ("application/json", "json")
    assert '"order_identifier":"WEB-2"' in body["content"]


def test_preview_renders_the_entity_asked_for(api: AdminApi, client) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    import_orders(client, api.tenant, "WEB-1", "WEB-2")
    first = ExportItem.objects.get(element_key__startswith="WEB-1:")

    response = api.post(f"export-queues/{queue.pk}/preview", {"object_id": first.object_id})

    assert response.json()["element_key"] == first.element_key


def test_preview_without_a_stored_entity_is_400(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")

    response = api.post(f"export-queues/{queue.pk}/preview")

    assert response.status_code == 400
    assert error_fields(response) == {"object_id"}


def test_preview_does_not_render_another_accounts_entity(api: AdminApi, other_tenant: Tenant, client) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    make_queue(other_tenant, "https://example.com/b")
    import_orders(client, other_tenant, "THEIRS-1")
    theirs = ExportItem.objects.get()

    response = api.post(f"export-queues/{queue.pk}/preview", {"object_id": theirs.object_id})

    assert response.status_code == 400
    assert "THEIRS-1" not in response.content.decode()


# --- Retry ---------------------------------------------------------------------------------------------------


def test_retry_of_a_failed_item_hands_it_to_a_new_delivery(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    failed = exported_item(queue, "k-1")
    old_delivery = failed.delivery

    response = api.post(f"export-logs/{failed.pk}/retry")

    assert response.status_code == 200
    assert response.json() == {"retried": 1}
    failed.refresh_from_db()
    assert failed.status == ExportStatus.PENDING
    assert failed.delivery != old_delivery and failed.delivery is not None
    assert failed.delivery.status == ExportStatus.PENDING


def test_retry_of_a_delivered_item_replays_it(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    delivered = exported_item(queue, "k-1", ExportStatus.SUCCESS)

    assert api.post(f"export-logs/{delivered.pk}/retry").json() == {"retried": 1}
    assert ExportItem.objects.get(pk=delivered.pk).status == ExportStatus.PENDING


def test_retry_of_a_pending_item_is_a_conflict(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    pending = exported_item(queue, "k-1", ExportStatus.PENDING)

    response = api.post(f"export-logs/{pending.pk}/retry")

    assert response.status_code == 409
    assert ExportDelivery.objects.count() == 1


def test_retry_of_another_accounts_item_is_404(api: AdminApi, other_tenant: Tenant) -> None:
    theirs = exported_item(make_queue(other_tenant, "https://example.com/b"), "k-1")

    assert api.post(f"export-logs/{theirs.pk}/retry").status_code == 404
    assert ExportItem.objects.get(pk=theirs.pk).status == ExportStatus.FAILURE


def test_bulk_retry_resends_the_queues_failed_items_only(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    other_queue = make_queue(api.tenant, "https://example.com/b", name="other")
    failed = [exported_item(queue, "f-1"), exported_item(queue, "f-2")]
    delivered = exported_item(queue, "s-1", ExportStatus.SUCCESS)
    elsewhere = exported_item(other_queue, "f-3")

    response = api.post(f"export-queues/{queue.pk}/retry")

    assert response.json() == {"retried": 2}
    statuses = dict(ExportItem.objects.values_list("element_key", "status"))
    assert statuses == {"f-1": "pending", "f-2": "pending", "s-1": "success", "f-3": "failure"}
    assert {failed[0].pk, failed[1].pk, delivered.pk, elsewhere.pk} == set(
        ExportItem.objects.values_list("pk", flat=True)
    )


def test_bulk_retry_by_ids_replays_those_items_of_the_queue(api: AdminApi, other_tenant: Tenant) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    delivered = exported_item(queue, "s-1", ExportStatus.SUCCESS)
    failed = exported_item(queue, "f-1")
    pending = exported_item(queue, "p-1", ExportStatus.PENDING)
    theirs = exported_item(make_queue(other_tenant, "https://example.com/b"), "t-1")

    response = api.post(f"export-queues/{queue.pk}/retry", {"ids": [delivered.pk, pending.pk, theirs.pk]})

    assert response.json() == {"retried": 1}
    statuses = dict(ExportItem.objects.values_list("element_key", "status"))
    assert statuses == {"s-1": "pending", "f-1": "failure", "p-1": "pending", "t-1": "failure"}
    assert ExportItem.objects.get(pk=failed.pk).delivery == failed.delivery


def test_bulk_retry_refuses_an_unknown_status(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")

    response = api.post(f"export-queues/{queue.pk}/retry", {"status": "all"})

    assert response.status_code == 400
    assert error_fields(response) == {"status"}


# --- The export log ------------------------------------------------------------------------------------------


def test_the_export_log_shows_the_delivery_outcome_and_attempts(
    api: AdminApi, client, receiver, allow_loopback
) -> None:
    queue = make_queue(api.tenant, receiver.url)
    import_orders(client, api.tenant, "WEB-1")
    exported = ExportItem.objects.get()
    receiver.script = [500]
    assert services.deliver(delivery_pk=exported.delivery_id) == ExportStatus.FAILURE
    exported.refresh_from_db()

    (row,) = results(api.get("export-logs"))

    assert set(row) == LOG_FIELDS
    assert row["id"] == exported.pk
    assert (row["queue"], row["queue_name"], row["element_key"]) == (queue.pk, queue.name, exported.element_key)
    assert (row["status"], row["status_code"], row["attempts"]) == ("failure", 500, 1)
    assert row["error"].startswith("HTTP 500") and row["message"].startswith("HTTP 500")
    assert row["delivery_id"] == exported.delivery.delivery_id
    assert row["finished_at"] is not None and row["duration_ms"] is not None
    detail = api.get(f"export-logs/{exported.pk}").json()
    assert set(detail) == LOG_FIELDS
    (attempt,) = detail["attempt_log"]
    assert set(attempt) == {"number", "ok", "status_code", "error", "duration_ms", "started_at", "sent", "answer"}
    assert (attempt["number"], attempt["ok"], attempt["status_code"]) == (1, False, 500)
    assert attempt["sent"].startswith("POST http://127.0.0.1:") and attempt["answer"] == "ok"


def test_a_cron_item_waiting_for_its_window_has_no_delivery_yet(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a", trigger="hourly")
    ExportItem.objects.create(
        account=api.tenant.account, queue=queue, entity_type=queue.entity_type, object_id=1, element_key="k"
    )

    (row,) = results(api.get("export-logs"))

    assert (row["status"], row["attempts"], row["delivery_id"], row["attempt_log"]) == ("pending", 0, None, [])


def test_the_export_log_is_newest_first_and_filters(api: AdminApi, other_tenant: Tenant) -> None:
    orders = make_queue(api.tenant, "https://example.com/a", name="orders")
    outgoing = make_queue(api.tenant, "https://example.com/b", name="outgoing", entity_type="outgoing_orders")
    exported_item(orders, "o-1", ExportStatus.SUCCESS)
    exported_item(orders, "o-2")
    exported_item(outgoing, "g-1", ExportStatus.SKIPPED)
    exported_item(make_queue(other_tenant, "https://example.com/c"), "theirs")

    def keys(**params: Any) -> list[str]:
        return [row["element_key"] for row in results(api.get("export-logs", **params))]

    assert keys() == ["g-1", "o-2", "o-1"]
    assert keys(queue=orders.pk) == ["o-2", "o-1"]
    assert keys(status="failure") == ["o-2"]
    assert keys(entity_type="outgoing_orders") == ["g-1"]
    assert keys(element_key="o-1") == ["o-1"]
    assert keys(queue=orders.pk, status="success") == ["o-1"]


def test_the_export_log_refuses_an_unknown_filter_value(api: AdminApi) -> None:
    response = api.get("export-logs", status="lost")

    assert response.status_code == 400
    assert error_fields(response) == {"status"}


def test_the_export_log_is_paginated(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    for n in range(5):
        exported_item(queue, f"k-{n}")

    page = api.get("export-logs", limit="2", offset="2").json()

    assert page["count"] == 5
    assert [row["element_key"] for row in page["results"]] == ["k-2", "k-1"]
    assert page["next"] and page["previous"]


def test_another_accounts_log_entry_is_404(api: AdminApi, other_tenant: Tenant) -> None:
    theirs = exported_item(make_queue(other_tenant, "https://example.com/b"), "theirs")

    assert api.get(f"export-logs/{theirs.pk}").status_code == 404


def test_the_export_log_costs_the_same_queries_for_many_rows(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://example.com/a")
    other = make_queue(api.tenant, "https://example.com/b", name="other")

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert api.get("export-logs").status_code == 200
        return len(captured)

    exported_item(queue, "k-0")
    queries()  # the key's first use of the day writes last_used_at
    few = queries()
    for n in range(1, 8):
        row = exported_item(queue if n % 2 else other, f"k-{n}")
        ExportAttempt.objects.create(
            account=queue.account, delivery=row.delivery, number=1, ok=False, duration_ms=5, started_at=row.created_at
        )
    assert queries() == few


def test_a_transform_is_previewed_before_any_queue_is_saved(api: AdminApi, client) -> None:
    import_orders(client, api.tenant, "WEB-1")  # no queue yet: nothing has entered exports
    body = {
        "entity_type": "incoming_order_state_changes",
        "transform": {"type": "csv", "columns": [{"header": "Order", "path": "order.order_identifier"}]},
    }

    response = api.post("export-queues/preview", body)

    assert response.status_code == 200, response.json()
    assert response.json()["content"].splitlines() == ["Order", "WEB-1"]
    assert not ExportQueue.objects.exists()


def test_previewing_a_transform_that_cannot_work_names_the_field(api: AdminApi, client) -> None:
    import_orders(client, api.tenant, "WEB-1")
    body = {"entity_type": "incoming_order_state_changes", "transform": {"type": "csv", "columns": [{"path": "[["}]}}

    response = api.post("export-queues/preview", body)

    assert response.status_code == 400
    assert {f.split("[")[0] for f in error_fields(response)} == {"transform.columns"}
