"""/backoffice/notifications/: each member, whatever their role, chooses what they are told by e-mail; the choice
is theirs only and audited as a change by them."""

from __future__ import annotations

import re

import pytest

from accounts import selectors
from accounts.models import AuditEntry, Membership, NotificationPreference
from tests.support.backoffice import SignIn

pytestmark = pytest.mark.django_db

URL = "/backoffice/notifications/"


def checked(page: bytes) -> set[str]:
    """The checkboxes the page shows ticked."""
    text = page.decode()
    return {
        name
        for tag in re.findall(r"<input [^>]*>", text)
        if " checked" in tag
        for name in re.findall(r'name="([a-z_]+)"', tag)
    }


def chosen(account, email: str) -> frozenset[str]:
    membership = Membership.objects.get(account=account, user__username=email)
    return selectors.notifications_chosen(account=account, membership=membership)


def test_owners_and_managers_get_the_problems_by_default_and_viewers_nothing(tenant, sign_in: SignIn):
    for role, expected in (
        ("owner", {"queue_disabled", "breaker_open"}),
        ("manager", {"queue_disabled", "breaker_open"}),
        ("viewer", set()),
    ):
        page = sign_in(tenant.account, role).get(URL)
        assert page.status_code == 200
        assert checked(page.content) == expected, role


def test_a_viewer_asks_for_the_digest_and_it_is_audited_as_their_change(tenant, sign_in: SignIn):
    viewer = sign_in(tenant.account, "viewer")

    saved = viewer.post(URL, {"daily_digest": "on"})

    assert saved.status_code == 302
    assert checked(viewer.get(URL).content) == {"daily_digest"}
    entry = AuditEntry.objects.get(account=tenant.account, target_type="member", action="changed")
    assert (entry.actor, entry.actor_kind, entry.target_id) == ("viewer@acme.example", "person", "viewer@acme.example")
    assert entry.changes == {"notifications.daily_digest": [False, True]}


def test_a_member_sets_only_their_own(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    sign_in(tenant.account, "manager")

    owner.post(URL, {"daily_digest": "on"})

    assert chosen(tenant.account, "owner@acme.example") == {"daily_digest"}
    assert chosen(tenant.account, "manager@acme.example") == {"queue_disabled", "breaker_open"}


def test_a_choice_in_one_account_leaves_the_other_account_alone(tenant, other_tenant, sign_in: SignIn):
    both = sign_in(tenant.account, "owner", email="both@example.com")
    sign_in(other_tenant.account, "owner", email="both@example.com")

    both.post(URL, {})

    assert chosen(tenant.account, "both@example.com") == frozenset()
    assert chosen(other_tenant.account, "both@example.com") == {"queue_disabled", "breaker_open"}
    assert not NotificationPreference.objects.filter(account=other_tenant.account).exists()


def test_saving_the_same_choice_again_records_nothing(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")

    owner.post(URL, {"queue_disabled": "on", "breaker_open": "on"})

    assert not AuditEntry.objects.filter(account=tenant.account, target_type="member", action="changed").exists()


def test_another_method_is_refused(tenant, sign_in: SignIn):
    assert sign_in(tenant.account, "viewer").put(URL).status_code == 405


def test_signed_out_goes_to_the_sign_in_page(client):
    answer = client.get(URL)
    assert answer.status_code == 302 and "/backoffice/login/" in answer["Location"]
