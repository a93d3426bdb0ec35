"""The audit trail records every kind of change of ``accounts.audit.KINDS``, whoever makes it: export queues,
export items sent again, runtime integrations, products and expenses, by a key, a person or the system."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts import audit
from accounts.models import ApiKey, AuditEntry
from accounts.services import add_member
from core.secrets import MASK as READ_MASK
from exports import circuit, replay, services
from exports.deliveries.base import DeliveryResult
from exports.models import ExportItem, ExportQueue, ExportStatus
from integrations.models import RuntimeIntegration
from tests.support.admin import admin_url
from tests.support.api import AdminApi, results
from tests.support.queues import SECRET, exported_item, make_queue
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

HOOK = {"type": "webhook", "url": "https://erp.example.com/hook", "headers": {"Authorization": "Bearer tok-1"}}


@pytest.fixture
def owner(tenant: Tenant) -> Client:
    """The tenant's owner, signed in to the back-office."""
    membership, _ = add_member(account=tenant.account, email="owner@acme.example", role="owner")
    signed_in = Client()
    signed_in.force_login(membership.user)
    return signed_in


def only(tenant: Tenant, target_type: str, action: str | None = None) -> AuditEntry:
    """The one entry of ``target_type`` (and ``action``), checked to be a registered kind."""
    found = AuditEntry.objects.filter(account=tenant.account, target_type=target_type)
    [entry] = found.filter(action=action) if action else found
    assert entry.action in audit.KINDS[entry.target_type].actions
    return entry


def key_label(tenant: Tenant) -> str:
    key = ApiKey.objects.get(account=tenant.account, scopes=["admin"])
    return f"key {key.prefix}… ({tenant.integration.identifier})"


def failed_item(queue: ExportQueue, key: str) -> ExportItem:
    return exported_item(queue, key, ExportStatus.FAILURE, next_attempt_at=timezone.now())


# --- Export queues ------------------------------------------------------------------------------------------


def test_a_queue_created_with_a_key_is_recorded_with_the_key_and_its_secrets_masked(api: AdminApi) -> None:
    body = {"name": "to erp", "entity_type": "incoming_order_state_changes", "delivery": HOOK}
    response = api.post("export-queues", body)
    assert response.status_code == 201, response.json()
    generated = response.json()["generated_secret"]

    [listed] = results(api.get("audit-log", target_type="export_queue"))
    assert (listed["actor_kind"], listed["actor"], listed["action"], listed["target_id"], listed["target"]) == (
        "api_key",
        key_label(api.tenant),
        "created",
        str(response.json()["id"]),
        "to erp",
    )
    changes = listed["changes"]
    assert changes["name"] == [None, "to erp"]
    assert changes["delivery.url"] == [None, f"https://erp.example.com/{READ_MASK}"]  # a web hook's path is secret
    assert changes["delivery.secret"] == [None, audit.MASK]
    assert changes["delivery.headers.Authorization"] == [None, audit.MASK]
    assert ExportQueue.objects.get().delivery["secret"] == generated
    assert generated not in str(changes) and "tok-1" not in str(changes)


def test_a_changed_secret_shows_as_changed_without_its_value(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://erp.example.com/hook", delivery={"headers": {"X-Token": "old-header"}})
    delivery = {**queue.delivery, "secret": "whsec_" + "n" * 40, "headers": {"X-Token": "new-header"}}

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": delivery, "name": "renamed"})
    assert response.status_code == 200, response.json()

    entry = only(api.tenant, "export_queue")
    assert (entry.actor_kind, entry.action, entry.target_id) == ("api_key", "changed", str(queue.pk))
    assert entry.changes == {
        "delivery.headers.X-Token": [audit.MASK, audit.MASK],
        "delivery.secret": [audit.MASK, audit.MASK],
        "name": ["orders to webshop", "renamed"],
    }
    text = str(entry.changes)
    assert SECRET not in text and "nnnn" not in text and "old-header" not in text and "new-header" not in text


def test_a_custom_header_no_name_tells_is_masked_as_the_delivery_masks_it(tenant: Tenant) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")  # headers {"X-Shop": "acme"}
    services.update_queue(account=tenant.account, queue=queue, delivery={**queue.delivery, "headers": {"X-Shop": "b"}})

    assert only(tenant, "export_queue").changes == {"delivery.headers.X-Shop": [READ_MASK, READ_MASK]}


def test_an_update_that_changes_nothing_records_nothing(tenant: Tenant) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")
    services.update_queue(account=tenant.account, queue=queue, name=queue.name, delivery=dict(queue.delivery))
    assert not AuditEntry.objects.filter(target_type="export_queue").exists()


def test_a_queue_deleted_in_the_admin_is_recorded_as_the_person(tenant: Tenant, admin_client: Client) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")

    response = admin_client.post(admin_url(ExportQueue, "delete", queue.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not ExportQueue.objects.exists()

    entry = only(tenant, "export_queue")
    assert (entry.actor_kind, entry.actor, entry.action) == ("person", "admin", "deleted")
    assert (entry.target_id, entry.target, entry.changes) == (str(queue.pk), "orders to webshop", {})


def test_a_queue_disabled_and_enabled_in_the_back_office(tenant: Tenant, owner: Client) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")

    assert owner.post(reverse("backoffice:queue-disable", args=[queue.pk])).status_code == 302
    assert owner.post(reverse("backoffice:queue-enable", args=[queue.pk])).status_code == 302

    enabled, disabled = AuditEntry.objects.filter(target_type="export_queue")
    assert (disabled.actor_kind, disabled.actor, disabled.action) == ("person", "owner@acme.example", "disabled")
    assert disabled.changes == {"enabled": [True, False]}
    assert (enabled.action, enabled.changes) == ("enabled", {"enabled": [False, True]})


def test_the_automatic_disable_is_recorded_as_the_system(tenant: Tenant, settings: Any) -> None:
    settings.EXPORT_QUEUE_DISABLE_AFTER_DAYS = 5
    queue = make_queue(tenant, "https://erp.example.com/hook")
    ExportQueue.objects.filter(pk=queue.pk).update(failing_since=timezone.now() - timedelta(days=6))
    queue.refresh_from_db()
    failed = DeliveryResult(ok=False, status_code=503, error="503", unreachable=True)

    # Even while a person's change is being served: the disable is the service's own decision.
    with audit.acting(audit.Actor("person", "someone@example.com")):
        assert circuit.note_outcomes([(queue, failed)]) == [queue.pk]

    entry = only(tenant, "export_queue")
    assert (entry.actor_kind, entry.actor, entry.action, entry.target_id) == (
        "system",
        "system",
        "disabled",
        str(queue.pk),
    )
    assert entry.changes["enabled"] == [True, False]
    assert entry.changes["disabled_reason"][1].startswith("disabled automatically")


def test_enabling_a_disabled_queue_through_the_api_clears_its_reason(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://erp.example.com/hook")
    assert circuit.disable_queue(queue=queue, reason="broken", actor=audit.SYSTEM)

    assert api.post(f"export-queues/{queue.pk}/enable").status_code == 200

    entry = only(api.tenant, "export_queue", "enabled")
    assert (entry.actor_kind, entry.changes) == (
        "api_key",
        {"disabled_reason": ["broken", ""], "enabled": [False, True]},
    )


# --- Export items sent again ---------------------------------------------------------------------------------


def test_a_retry_is_one_entry_naming_the_queue_and_the_items(api: AdminApi) -> None:
    queue = make_queue(api.tenant, "https://erp.example.com/hook")
    items = [failed_item(queue, f"k-{n}") for n in range(3)]

    assert api.post(f"export-queues/{queue.pk}/retry", {}).json() == {"retried": 3}

    entry = only(api.tenant, "export_items")
    assert (entry.actor_kind, entry.action, entry.target_id, entry.target) == (
        "api_key",
        "retried",
        str(queue.pk),
        "orders to webshop",
    )
    assert entry.changes == {
        "count": [None, 3],
        "ids": [None, [item.pk for item in items]],
        "queues": [None, ["orders to webshop"]],
    }


def test_a_retry_across_queues_names_them_all(tenant: Tenant) -> None:
    first = make_queue(tenant, "https://erp.example.com/a", name="a")
    second = make_queue(tenant, "https://erp.example.com/b", name="b")

    services.retry_items(account=tenant.account, items=[failed_item(first, "k-1"), failed_item(second, "k-2")])

    entry = only(tenant, "export_items")
    assert (entry.actor_kind, entry.target_id, entry.target) == ("system", f"{first.pk},{second.pk}", "a, b")


def test_a_replay_is_recorded_as_replayed(tenant: Tenant) -> None:
    queue = make_queue(tenant, "https://erp.example.com/hook")
    failed_item(queue, "k-1")
    now = timezone.now()

    replay.replay(account=tenant.account, queue=queue, start=now - timedelta(hours=1), end=now + timedelta(hours=1))

    entry = only(tenant, "export_items")
    assert (entry.action, entry.changes["count"]) == ("replayed", [None, 1])


# --- Runtime integrations ------------------------------------------------------------------------------------


def test_a_runtime_integration_is_recorded_created_changed_disabled_and_deleted_with_its_secrets_masked(
    api: AdminApi,
) -> None:
    body = {
        "kind": "giftcard_read",
        "url": "https://erp.example.com/giftcards/{code}",
        "query": {"k": "query-secret-1"},
        "secret_fields": ["query.k"],
        "headers": {"Authorization": "Bearer header-secret-1"},
    }
    created = api.post("runtime-integrations", body)
    assert created.status_code == 201, created.json()
    pk = created.json()["id"]
    changed = api.patch(f"runtime-integrations/{pk}", {"headers": {"Authorization": "Bearer header-secret-2"}})
    assert changed.status_code == 200, changed.json()
    assert api.patch(f"runtime-integrations/{pk}", {"enabled": False}).status_code == 200
    assert api.delete(f"runtime-integrations/{pk}").status_code == 204

    listed = results(api.get("audit-log", target_type="runtime_integration"))
    assert [(e["action"], e["actor_kind"], e["target_id"]) for e in listed] == [
        ("deleted", "api_key", str(pk)),
        ("disabled", "api_key", str(pk)),
        ("changed", "api_key", str(pk)),
        ("created", "api_key", str(pk)),
    ]
    _, disabled, change, create = (e["changes"] for e in listed)
    assert create["kind"] == [None, "giftcard_read"]
    assert create["query.k"] == [None, READ_MASK]
    assert create["headers.Authorization"] == [None, audit.MASK]
    assert change == {"headers.Authorization": [audit.MASK, audit.MASK]}
    assert disabled == {"enabled": [True, False]}
    assert "secret-1" not in str(listed) and "secret-2" not in str(listed)


def test_a_runtime_integration_deleted_in_the_admin_is_recorded(
    tenant: Tenant, api: AdminApi, admin_client: Client
) -> None:
    created = api.post("runtime-integrations", {"kind": "giftcard_read", "url": "https://erp.example.com/{code}"})
    pk = created.json()["id"]

    response = admin_client.post(admin_url(RuntimeIntegration, "delete", pk), {"post": "yes"})
    assert response.status_code == 302

    entry = only(tenant, "runtime_integration", "deleted")
    assert (entry.actor_kind, entry.actor, entry.target_id) == ("person", "admin", str(pk))


# --- Products and expenses -----------------------------------------------------------------------------------


def test_a_product_is_recorded_created_changed_and_deleted_by_its_id(api: AdminApi) -> None:
    vat = {"name": "VAT", "rate": 0.25, "type": "vat"}
    body = {"id": "mug", "name": {"da": "Krus", "en": "Mug"}, "barcode": "5701234567890", "taxes": [vat]}
    assert api.post("products", body).status_code == 201
    assert api.patch("products/mug", {"name": {"da": "Krus", "en": "Cup"}}).status_code == 200
    assert api.delete("products/mug").status_code == 204

    deleted, changed, created = AuditEntry.objects.filter(target_type="product")
    assert {e.target_id for e in (deleted, changed, created)} == {"mug"}
    assert {e.actor_kind for e in (deleted, changed, created)} == {"api_key"}
    assert (created.action, created.changes["barcode"], created.changes["name.en"]) == (
        "created",
        [None, "5701234567890"],
        [None, "Mug"],
    )
    assert created.changes["taxes"] == [None, [{"name": "VAT", "rate": "0.25", "type": "vat"}]]
    assert (changed.action, changed.changes) == ("changed", {"name.en": ["Mug", "Cup"]})
    assert (deleted.action, deleted.changes) == ("deleted", {})


def test_an_expense_is_recorded_created_changed_and_deleted_by_its_id(api: AdminApi) -> None:
    assert api.post("expenses", {"id": "coffee", "name": "Coffee"}).status_code == 201
    assert api.patch("expenses/coffee", {"name": "Tea"}).status_code == 200
    assert api.delete("expenses/coffee").status_code == 204

    deleted, changed, created = AuditEntry.objects.filter(target_type="expense")
    assert [(e.action, e.target_id, e.actor_kind) for e in (created, changed, deleted)] == [
        ("created", "coffee", "api_key"),
        ("changed", "coffee", "api_key"),
        ("deleted", "coffee", "api_key"),
    ]
    assert created.changes == {"id": [None, "coffee"], "name": [None, "Coffee"]}
    assert changed.changes == {"name": ["Coffee", "Tea"]}


# --- The list of kinds ---------------------------------------------------------------------------------------


def test_every_kind_and_its_actions_are_documented() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "api.md").read_text()
    section = text[text.index("**The audit log**") :]
    table = section[: section.index("\n\n", section.index("| target type"))]
    documented = {
        row.group(1): set(re.findall(r"`([a-z_]+)`", row.group(2)))
        for row in re.finditer(r"^\| `([a-z_]+)` \| ([^|]+) \|", table, re.M)
    }
    assert set(documented) == set(audit.KINDS)
    for kind in audit.KINDS.values():
        assert documented.get(kind.target_type) == set(kind.actions), kind.target_type
