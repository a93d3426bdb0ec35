"""The audit trail of changes by a person, an API key or the system; ``GET /api/v1/audit-log/``."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from accounts import audit, services
from accounts.models import ApiKey, AuditEntry
from tests.support.api import AdminApi, results
from tests.support.tenants import Tenant


def entries(api: AdminApi, **params: str) -> list[dict]:
    """The tenant's entries but the fixture's own (its API keys, created by the system before the test)."""
    fixture_keys = {
        str(pk)
        for pk in ApiKey.objects.filter(account=api.tenant.account).order_by("pk").values_list("pk", flat=True)[:3]
    }
    listed = results(api.get("audit-log", **params))
    return [
        e
        for e in listed
        if not (e["target_type"] == "api_key" and e["action"] == "created" and e["target_id"] in fixture_keys)
    ]


def key_label(tenant: Tenant) -> str:
    key = ApiKey.objects.get(account=tenant.account, scopes=["admin"])
    return f"key {key.prefix}… (webshop)"


def test_a_change_through_the_api_is_recorded_with_the_key_that_made_it(api: AdminApi) -> None:
    assert api.patch("stock-locations/shop-1", {"name": "Vesterbro", "city": "København V"}).status_code == 200

    [entry] = entries(api)
    assert {k: entry[k] for k in ("actor_kind", "actor", "action", "target_type", "target_id")} == {
        "actor_kind": "api_key",
        "actor": key_label(api.tenant),
        "action": "changed",
        "target_type": "stock_location",
        "target_id": "shop-1",
    }
    assert entry["changes"] == {"name": ["Shop shop-1", "Vesterbro"], "city": ["", "København V"]}


def test_a_change_that_changes_nothing_records_nothing(api: AdminApi) -> None:
    api.patch("stock-locations/shop-1", {"name": "Vesterbro"})
    api.patch("stock-locations/shop-1", {"name": "Vesterbro"})
    assert len(entries(api)) == 1


def test_create_and_delete_are_recorded(api: AdminApi) -> None:
    assert api.post("cashiers", {"identifier": "c-1", "display_name": "AB"}).status_code == 201
    assert api.delete("cashiers/c-1").status_code == 204

    deleted, created = entries(api, target_type="cashier")
    assert (created["action"], created["target_id"], created["changes"]["display_name"]) == (
        "created",
        "c-1",
        [None, "AB"],
    )
    assert (deleted["action"], deleted["target_id"], deleted["changes"]) == ("deleted", "c-1", {})


def test_api_keys_created_and_revoked_are_recorded_without_their_hash(api: AdminApi) -> None:
    created = api.post("api-keys", {"integration": "webshop", "scopes": ["pos"], "name": "till"}).json()
    api.post(f"api-keys/{created['id']}/revoke")

    revoked, made = entries(api, target_type="api_key")
    assert made["action"] == "created" and made["target_id"] == str(created["id"])
    assert made["changes"]["scopes"] == [None, ["pos"]]
    assert revoked["action"] == "revoked" and list(revoked["changes"]) == ["revoked_at"]
    stored = str(AuditEntry.objects.values_list("changes", flat=True)[::1])
    assert created["key"] not in stored
    assert ApiKey.objects.get(pk=created["id"]).key_hash not in stored


def test_a_member_added_by_a_command_is_recorded_as_the_system_and_the_password_masked(api: AdminApi) -> None:
    call_command("add_member", "acme", "ann@example.com", "--role", "owner", "--password", "s3cret-Passw0rd")
    [entry] = entries(api, target_type="member")
    assert (entry["actor_kind"], entry["actor"], entry["target_id"]) == ("system", "system", "ann@example.com")
    assert entry["changes"] == {"role": [None, "owner"], "password": [None, audit.MASK]}
    assert "s3cret" not in str(entry)


def test_secrets_are_masked_wherever_they_are_nested() -> None:
    before = {"delivery": {"url": "https://a.example/x", "secret": "whsec_1", "headers": {"Authorization": "Bearer a"}}}
    after = {"delivery": {"url": "https://a.example/y", "secret": "whsec_2", "headers": {"Authorization": "Bearer b"}}}
    assert audit.diff(before, after) == {
        "delivery.headers.Authorization": [audit.MASK, audit.MASK],
        "delivery.secret": [audit.MASK, audit.MASK],
        "delivery.url": ["https://a.example/x", "https://a.example/y"],
    }


def test_the_log_is_scoped_to_the_key_s_account(api: AdminApi, other_tenant: Tenant) -> None:
    services.add_member(account=other_tenant.account, email="bo@example.com", role="viewer")
    theirs = AuditEntry.objects.get(account=other_tenant.account, target_type="member")
    api.patch("stock-locations/shop-1", {"name": "Mine"})

    assert [e["target_type"] for e in entries(api)] == ["stock_location"]
    assert AuditEntry.objects.filter(account=api.tenant.account, target_type="member").count() == 0
    assert api.get(f"audit-log/{theirs.pk}").status_code == 404


def test_filters_by_actor_and_kind(api: AdminApi) -> None:
    api.patch("stock-locations/shop-1", {"name": "By key"})
    with audit.acting(audit.SYSTEM):
        services.add_member(account=api.tenant.account, email="ann@example.com", role="viewer")

    assert [e["target_type"] for e in entries(api, actor=key_label(api.tenant))] == ["stock_location"]
    assert [e["target_type"] for e in entries(api, actor_kind="system")] == ["member"]
    assert api.get("audit-log", actor_kind="robot").status_code == 400


def test_keys_without_the_admin_scope_cannot_read_it(api: AdminApi) -> None:
    response = api.client.get(f"/api/v1/audit-log/?{api.tenant.query(api.tenant.pos_key)}")
    assert response.status_code == 403


@pytest.mark.django_db
def test_an_entry_is_never_changed(tenant: Tenant) -> None:
    entry = audit.record(account=tenant.account, action="created", target_type="market", target_id="x", after={"a": 1})
    assert entry is not None
    entry.action = "deleted"
    with pytest.raises(TypeError):
        entry.save()
    with pytest.raises(TypeError):
        AuditEntry.objects.filter(pk=entry.pk).update(action="deleted")
    assert AuditEntry.objects.get(pk=entry.pk).action == "created"
