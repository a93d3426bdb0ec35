"""Members and roles; ``manage.py add_member`` (a fixed interface)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts import services
from accounts.models import Membership
from core.errors import ServiceError
from tests.factories import AccountFactory

pytestmark = pytest.mark.django_db


def add_member(*args: str) -> str:
    out = StringIO()
    call_command("add_member", *args, stdout=out)
    return out.getvalue()


def test_add_member_creates_the_person_with_a_password_and_a_role():
    AccountFactory(identifier="acme")
    out = add_member("acme", "Ann@Example.com", "--role", "owner", "--password", "s3cret-Passw0rd")
    assert out.strip() == "new member ann@example.com of acme: owner"
    membership = Membership.objects.get()
    assert (membership.account.identifier, membership.user.username, membership.role) == (
        "acme",
        "ann@example.com",
        "owner",
    )
    assert membership.user.check_password("s3cret-Passw0rd")


def test_add_member_again_changes_the_role_and_keeps_the_password_when_none_is_given():
    AccountFactory(identifier="acme")
    add_member("acme", "ann@example.com", "--role", "owner", "--password", "s3cret-Passw0rd")
    out = add_member("acme", "ann@example.com", "--role", "viewer")
    assert out.strip() == "member ann@example.com of acme: viewer"
    assert Membership.objects.get().role == "viewer"
    assert Membership.objects.get().user.check_password("s3cret-Passw0rd")


def test_one_person_in_two_accounts_has_a_role_in_each():
    acme, other = AccountFactory(identifier="acme"), AccountFactory(identifier="other")
    add_member("acme", "ann@example.com", "--role", "owner")
    add_member("other", "ann@example.com", "--role", "manager")
    user = Membership.objects.first().user
    assert [(m.account, m.role) for m in services.memberships_of(user)] == [(acme, "owner"), (other, "manager")]


def test_a_new_member_without_a_password_cannot_sign_in_until_they_set_one():
    AccountFactory(identifier="acme")
    add_member("acme", "bo@example.com", "--role", "manager")
    assert not Membership.objects.get().user.has_usable_password()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("nowhere", "ann@example.com", "--role", "owner"), "no account 'nowhere'"),
        (("acme", "ann@example.com", "--role", "admin"), "unknown role 'admin'; use owner, manager, viewer"),
        (("acme", "not-an-address", "--role", "owner"), "'not-an-address' is not an e-mail address"),
    ],
)
def test_an_unknown_account_role_or_address_is_a_clear_error(args, message):
    AccountFactory(identifier="acme")
    with pytest.raises(CommandError, match=message):
        add_member(*args)
    assert not Membership.objects.exists()


def test_the_service_refuses_an_unknown_role_naming_the_field():
    with pytest.raises(ServiceError) as refused:
        services.add_member(account=AccountFactory(), email="ann@example.com", role="boss")
    assert refused.value.field == "role"
