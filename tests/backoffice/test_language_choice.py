"""The language chooser: a cookie for anyone (the sign-in page's chooser too), and for a signed-in person their
preference, which follows them to any browser they sign in on; audited in each of their accounts."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.test import Client

from accounts import services
from accounts.models import AuditEntry, PersonPreference
from tests.support.backoffice import PASSWORD, SignIn
from tests.support.tenants import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashes")]


def test_a_visitor_chooses_with_a_cookie_only() -> None:
    answer = Client().post("/backoffice/language/", {"language": "da", "next": "/backoffice/login/"})
    assert answer.status_code == 302 and answer["Location"] == "/backoffice/login/"
    assert answer.cookies[settings.LANGUAGE_COOKIE_NAME].value == "da"
    assert not PersonPreference.objects.exists()


def test_an_unknown_language_is_refused(sign_in: SignIn, tenant: Tenant) -> None:
    answer = sign_in(tenant.account, "viewer").post("/backoffice/language/", {"language": "xx"})
    assert answer.status_code == 400
    assert not PersonPreference.objects.exists()


def test_a_members_choice_follows_them_to_another_browser(tenant: Tenant, other_tenant: Tenant) -> None:
    membership, _ = services.add_member(
        account=tenant.account, email="ann@example.com", role="viewer", password=PASSWORD
    )
    services.add_member(account=other_tenant.account, email="ann@example.com", role="owner")
    first = Client()
    assert first.post("/backoffice/login/", {"username": "ann@example.com", "password": PASSWORD}).status_code == 302
    chosen = first.post("/backoffice/language/", {"language": "da", "next": "/backoffice/"})
    assert chosen.status_code == 302 and chosen["Location"] == "/backoffice/"
    assert services.language_of(user=membership.user) == "da"
    entries = AuditEntry.objects.filter(target_type="member", target_id="ann@example.com", action="changed")
    assert {e.account_id for e in entries if e.changes.get("language") == ["", "da"]} == {
        tenant.account.pk,
        other_tenant.account.pk,
    }

    elsewhere = Client()
    signed_in = elsewhere.post("/backoffice/login/", {"username": "ann@example.com", "password": PASSWORD})
    assert signed_in.status_code == 302
    assert signed_in.cookies[settings.LANGUAGE_COOKIE_NAME].value == "da"

    back = first.post("/backoffice/language/", {"language": "", "next": "/backoffice/"})
    assert back.cookies[settings.LANGUAGE_COOKIE_NAME].value == ""  # removed: the browser's language again
    assert services.language_of(user=membership.user) == ""
