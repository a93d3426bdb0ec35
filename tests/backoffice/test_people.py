"""The back-office's people pages: API keys (shown once, revoke), members (invitations, roles, the last owner),
the audit log; who may use each, and another account's objects not found."""

from __future__ import annotations

import re
import time
from types import SimpleNamespace

import pytest
from django.core import signing
from django.test import Client

from accounts import keys
from accounts import services as account_services
from accounts.models import ApiKey, AuditEntry, Membership
from tests.factories import IntegrationFactory
from tests.support.backoffice import PASSWORD, SignIn

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "violet-Harbour-lamp-42"


def entries(account, **filters) -> list[AuditEntry]:
    return list(AuditEntry.objects.filter(account=account, **filters).order_by("id"))


def rows(content: bytes) -> int:
    """The audit log's rows on a page."""
    return content.count(b'data-label="When"')


def invitation_path(message) -> str:
    found = re.search(r"http://testserver(/backoffice/invite/[^/\s]+/)", message.body)
    assert found, message.body
    return found.group(1)


# --- API keys ---------------------------------------------------------------------------------------------------


def test_an_owner_creates_a_key_shown_once_and_revokes_it(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    listing = owner.get("/backoffice/keys/")
    assert listing.status_code == 200
    assert all(k.prefix.encode() in listing.content for k in ApiKey.objects.filter(account=tenant.account))

    created = owner.post("/backoffice/keys/", {"integration": "webshop", "scopes": ["pos", "imports"], "name": "till"})
    assert created.status_code == 201 and "no-store" in created["Cache-Control"]
    key = ApiKey.objects.filter(account=tenant.account).latest("id")
    assert (key.integration, key.scopes, key.name) == (tenant.integration, ["imports", "pos"], "till")
    shown = re.search(rf"{keys.KEY_LEAD}{key.prefix}[A-Za-z0-9_-]+", created.content.decode())
    assert shown and keys.hash_key(shown.group(0)) == key.key_hash
    again = owner.get("/backoffice/keys/")
    assert key.prefix.encode() in again.content and shown.group(0).encode() not in again.content
    [made] = entries(tenant.account, target_type="api_key", target_id=str(key.pk))
    assert (made.action, made.actor) == ("created", "owner@acme.example")

    revoked = owner.post(f"/backoffice/keys/{key.pk}/revoke/")
    assert revoked.status_code == 302
    key.refresh_from_db()
    assert key.revoked_at is not None
    assert [e.action for e in entries(tenant.account, target_type="api_key", target_id=str(key.pk))] == [
        "created",
        "revoked",
    ]


def test_keys_are_for_owners_and_another_accounts_key_or_integration_is_not_found(
    tenant, other_tenant, sign_in: SignIn
):
    for role in ("manager", "viewer"):
        client = sign_in(tenant.account, role)
        assert client.get("/backoffice/keys/").status_code == 403
        assert client.post("/backoffice/keys/", {"integration": "webshop", "scopes": ["admin"]}).status_code == 403
        mine = ApiKey.objects.filter(account=tenant.account).first()
        assert client.post(f"/backoffice/keys/{mine.pk}/revoke/").status_code == 403
    assert not ApiKey.objects.filter(account=tenant.account, revoked_at__isnull=False).exists()

    owner = sign_in(tenant.account, "owner")
    theirs = ApiKey.objects.filter(account=other_tenant.account).first()
    assert owner.post(f"/backoffice/keys/{theirs.pk}/revoke/").status_code == 404
    assert ApiKey.objects.get(pk=theirs.pk).revoked_at is None
    IntegrationFactory(account=other_tenant.account, identifier="theirs")
    count = ApiKey.objects.count()
    refused = owner.post("/backoffice/keys/", {"integration": "theirs", "scopes": ["admin"]})
    assert refused.status_code == 400 and ApiKey.objects.count() == count


# --- Members ----------------------------------------------------------------------------------------------------


def test_a_new_member_is_invited_by_e_mail_sets_a_password_once_and_is_signed_in(tenant, sign_in: SignIn, mailoutbox):
    owner = sign_in(tenant.account, "owner")
    added = owner.post("/backoffice/members/", {"email": " New@Example.com ", "role": "manager"})
    assert added.status_code == 302
    membership = Membership.objects.get(account=tenant.account, user__username="new@example.com")
    assert membership.role == "manager" and not membership.user.has_usable_password()
    [message] = mailoutbox
    assert message.to == ["new@example.com"]
    path = invitation_path(message)
    [created] = entries(tenant.account, target_type="member", target_id="new@example.com")
    assert (created.action, created.actor, created.changes) == (
        "created",
        "owner@acme.example",
        {"role": [None, "manager"]},
    )

    person = Client()
    assert person.get(path).status_code == 200
    mismatch = person.post(path, {"new_password1": NEW_PASSWORD, "new_password2": "something-else-9"})
    assert mismatch.status_code == 400
    accepted = person.post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert accepted.status_code == 302 and accepted["Location"] == "/backoffice/"
    dashboard = person.get("/backoffice/")
    assert dashboard.status_code == 200 and b"new@example.com" in dashboard.content
    membership.user.refresh_from_db()
    assert membership.user.check_password(NEW_PASSWORD)
    set_password = entries(tenant.account, target_type="member", target_id="new@example.com")[-1]
    assert (set_password.action, set_password.actor) == ("changed", "new@example.com")
    assert set_password.changes == {"password": [None, "••••••"]}
    assert Client().get(path).status_code == 410  # once only


def test_an_invitation_link_expires_after_the_setting(tenant, sign_in: SignIn, mailoutbox, monkeypatch, settings):
    owner = sign_in(tenant.account, "owner")
    owner.post("/backoffice/members/", {"email": "late@example.com", "role": "viewer"})
    path = invitation_path(mailoutbox[0])
    sent = time.time()
    max_age = settings.BACKOFFICE_INVITE_MAX_AGE_SECONDS
    assert max_age == 7 * 24 * 3600
    # The signature's clock only: the link's age as the signer reads it.
    monkeypatch.setattr(signing, "time", SimpleNamespace(time=lambda: sent + max_age - 60))
    assert Client().get(path).status_code == 200
    monkeypatch.setattr(signing, "time", SimpleNamespace(time=lambda: sent + max_age + 60))
    assert Client().get(path).status_code == 410
    too_late = Client().post(path, {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert too_late.status_code == 410
    assert not Membership.objects.get(user__username="late@example.com").user.has_usable_password()


def test_a_removed_members_link_no_longer_works_and_a_person_with_a_password_gets_a_notice(
    tenant, other_tenant, sign_in: SignIn, mailoutbox
):
    owner = sign_in(tenant.account, "owner")
    owner.post("/backoffice/members/", {"email": "gone@example.com", "role": "viewer"})
    path = invitation_path(mailoutbox[0])
    gone = Membership.objects.get(account=tenant.account, user__username="gone@example.com")
    assert owner.post(f"/backoffice/members/{gone.pk}/remove/").status_code == 302
    assert Client().get(path).status_code == 410

    account_services.add_member(
        account=other_tenant.account, email="known@example.com", role="viewer", password=PASSWORD
    )
    owner.post("/backoffice/members/", {"email": "known@example.com", "role": "viewer"})
    notice = mailoutbox[-1]
    assert notice.to == ["known@example.com"] and "/backoffice/invite/" not in notice.body
    assert "/backoffice/login/" in notice.body


def test_members_are_for_owners_and_another_accounts_member_is_not_found(tenant, other_tenant, sign_in: SignIn):
    viewer = sign_in(tenant.account, "viewer")
    manager = sign_in(tenant.account, "manager")
    mine = Membership.objects.get(account=tenant.account, role="viewer")
    for client in (viewer, manager):
        assert client.get("/backoffice/members/").status_code == 403
        assert client.post("/backoffice/members/", {"email": "x@example.com", "role": "owner"}).status_code == 403
        assert client.post(f"/backoffice/members/{mine.pk}/role/", {"role": "owner"}).status_code == 403
        assert client.post(f"/backoffice/members/{mine.pk}/remove/").status_code == 403
    assert not Membership.objects.filter(user__username="x@example.com").exists()
    assert Membership.objects.get(pk=mine.pk).role == "viewer"

    owner = sign_in(tenant.account, "owner")
    theirs, _ = account_services.add_member(account=other_tenant.account, email="bo@example.com", role="viewer")
    assert owner.post(f"/backoffice/members/{theirs.pk}/role/", {"role": "owner"}).status_code == 404
    assert owner.post(f"/backoffice/members/{theirs.pk}/remove/").status_code == 404
    assert owner.post(f"/backoffice/members/{theirs.pk}/invite/").status_code == 404
    assert Membership.objects.get(pk=theirs.pk).role == "viewer"


def test_an_owner_changes_a_role_and_removes_a_member_each_audited(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    listing = owner.get("/backoffice/members/")
    assert listing.status_code == 200 and b"owner@acme.example" in listing.content
    bo, _ = account_services.add_member(account=tenant.account, email="bo@example.com", role="viewer")
    assert owner.post(f"/backoffice/members/{bo.pk}/role/", {"role": "manager"}).status_code == 302
    assert Membership.objects.get(pk=bo.pk).role == "manager"
    assert owner.post(f"/backoffice/members/{bo.pk}/role/", {"role": "boss"}).status_code == 302
    assert Membership.objects.get(pk=bo.pk).role == "manager"
    assert owner.post(f"/backoffice/members/{bo.pk}/remove/").status_code == 302
    assert not Membership.objects.filter(pk=bo.pk).exists()
    by_owner = entries(tenant.account, target_id="bo@example.com", actor="owner@acme.example")
    assert [(e.action, e.changes) for e in by_owner] == [
        ("changed", {"role": ["viewer", "manager"]}),
        ("deleted", {"role": ["manager", None]}),
    ]


def test_the_last_owner_can_neither_be_demoted_nor_removed(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    me = Membership.objects.get(account=tenant.account, role="owner")
    demoted = owner.post(f"/backoffice/members/{me.pk}/role/", {"role": "viewer"}, follow=True)
    assert b"last owner" in demoted.content
    removed = owner.post(f"/backoffice/members/{me.pk}/remove/", follow=True)
    assert b"last owner" in removed.content
    assert Membership.objects.get(pk=me.pk).role == "owner"
    readded = owner.post("/backoffice/members/", {"email": "owner@acme.example", "role": "viewer"})
    assert readded.status_code == 400 and Membership.objects.get(pk=me.pk).role == "owner"
    assert not entries(tenant.account, target_type="member", actor="owner@acme.example")

    account_services.add_member(account=tenant.account, email="second@example.com", role="owner")
    stepped_down = owner.post(f"/backoffice/members/{me.pk}/role/", {"role": "manager"})
    assert stepped_down.status_code == 302 and stepped_down["Location"] == "/backoffice/"
    assert Membership.objects.get(pk=me.pk).role == "manager"


# --- The audit log ----------------------------------------------------------------------------------------------


def test_the_audit_log_shows_the_accounts_changes_newest_first_with_filters(tenant, other_tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    bo, _ = account_services.add_member(account=tenant.account, email="bo@example.com", role="viewer")
    owner.post(f"/backoffice/members/{bo.pk}/role/", {"role": "manager"})
    manager = sign_in(tenant.account, "manager")
    page = manager.get("/backoffice/audit/")
    assert page.status_code == 200
    text = page.content.decode()
    assert "<strong>role</strong>: viewer → manager" in text
    mine = ApiKey.objects.filter(account=tenant.account).first()
    assert text.index("viewer → manager") < text.index(mine.prefix)  # newest first
    theirs = ApiKey.objects.filter(account=other_tenant.account).first()
    assert theirs.prefix not in text

    by_type = manager.get("/backoffice/audit/", {"target_type": "api_key"}).content.decode()
    assert mine.prefix in by_type and "bo@example.com" not in by_type
    by_object = manager.get("/backoffice/audit/", {"target_type": "member", "target_id": "bo@example.com"})
    assert rows(by_object.content) == 2  # created, changed
    by_actor = manager.get("/backoffice/audit/", {"actor": "owner@acme.example"}).content.decode()
    assert "viewer → manager" in by_actor and mine.prefix not in by_actor

    assert sign_in(tenant.account, "viewer").get("/backoffice/audit/").status_code == 403


def test_the_audit_log_pages_by_id(tenant, sign_in: SignIn):
    AuditEntry.objects.bulk_create(
        AuditEntry(
            account=tenant.account,
            actor_kind="system",
            actor="system",
            action="changed",
            target_type="market",
            target_id=f"m{n}",
            changes={"name": [f"a{n}", f"b{n}"]},
        )
        for n in range(55)
    )
    manager = sign_in(tenant.account, "manager")
    first = manager.get("/backoffice/audit/", {"target_type": "market"})
    assert rows(first.content) == 50 and b"m54" in first.content
    older = re.search(rb'href="\?target_type=market&amp;before=(\d+)"', first.content)
    assert older
    second = manager.get("/backoffice/audit/", {"target_type": "market", "before": older.group(1).decode()})
    assert rows(second.content) == 5 and b"m0" in second.content and b"Older" not in second.content


def test_the_navigation_shows_each_role_its_pages(tenant, sign_in: SignIn):
    links = {"owner": (True, True, True), "manager": (True, False, False), "viewer": (False, False, False)}
    for role, (audit, keys_, members) in links.items():
        page = sign_in(tenant.account, role).get("/backoffice/").content
        assert (b'href="/backoffice/audit/"' in page, b'href="/backoffice/keys/"' in page) == (audit, keys_)
        assert (b'href="/backoffice/members/"' in page) == members
