"""A back-office form acts only in the account it was shown in: a form loaded in one account, left open, and posted
after the person switched to another account (in another tab) is refused with a 409 before its view runs, nothing
changed and nothing audited; the page names the form's account only when it is one of the person's. A post without
the field is taken as before (a client that is not a browser form); the role policy is asked as before."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from accounts import services as account_services
from accounts.models import Account, ApiKey, AuditEntry, Membership
from backoffice.members import FORM_ACCOUNT_FIELD, SESSION_KEY
from exports.models import ExportQueue
from tests.support.backoffice import SignIn
from tests.support.queues import backoffice_queue_form as typed
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

BOTH = "both@example.com"
NEW = "/backoffice/exports/queues/new/"
TEMPLATES = Path(__file__).resolve().parents[2] / "backoffice" / "templates" / "backoffice"


def working_in(client: Client, account: Account) -> Client:
    """``client`` switched to ``account`` with the switcher, as the person would in another tab."""
    client.post("/backoffice/switch/", {"account": account.identifier})
    assert client.session[SESSION_KEY] == account.identifier
    return client


def shown_in(client: Client, path: str) -> str:
    """The account the form on the page at ``path`` names (the first form that changes something)."""
    page = client.get(path)
    assert page.status_code == 200
    found = re.search(rf'name="{FORM_ACCOUNT_FIELD}" value="([^"]*)"', page.content.decode())
    assert found, path
    return found.group(1)


@pytest.fixture
def both(tenant: Tenant, other_tenant: Tenant, sign_in: SignIn) -> Client:
    """A person who owns acme and globex, signed in, working in acme."""
    client = sign_in(tenant.account, "owner", email=BOTH)
    account_services.add_member(account=other_tenant.account, email=BOTH, role="owner")
    return working_in(client, tenant.account)


def test_a_queue_form_shown_in_one_account_and_posted_after_switching_is_refused_in_both(tenant, other_tenant, both):
    account = shown_in(both, NEW)
    assert account == "acme"
    working_in(both, other_tenant.account)
    entries = AuditEntry.objects.count()

    refused = both.post(NEW, typed(**{FORM_ACCOUNT_FIELD: account}))

    assert refused.status_code == 409
    page = refused.content.decode()
    assert 'opened in the account "Acme"; you now work in the account "Globex"' in page
    assert 'href="/backoffice/"' in page
    assert not ExportQueue.objects.exists() and AuditEntry.objects.count() == entries
    assert both.session[SESSION_KEY] == "globex"  # the refusal does not switch back


def test_the_same_form_posted_in_the_account_it_was_shown_in_is_taken(tenant, other_tenant, both):
    created = both.post(NEW, typed(**{FORM_ACCOUNT_FIELD: shown_in(both, NEW)}))
    assert created.status_code == 302
    assert ExportQueue.objects.get().account == tenant.account

    working_in(both, other_tenant.account)
    created = both.post(NEW, typed(name="globex queue", **{FORM_ACCOUNT_FIELD: shown_in(both, NEW)}))
    assert created.status_code == 302
    assert ExportQueue.objects.get(name="globex queue").account == other_tenant.account


def test_a_post_without_the_field_acts_in_the_current_account_as_before(other_tenant, both):
    working_in(both, other_tenant.account)
    assert both.post(NEW, typed()).status_code == 302
    assert ExportQueue.objects.get().account == other_tenant.account


def test_a_key_revoke_and_a_new_member_from_a_page_of_the_other_account_change_nothing(tenant, other_tenant, both):
    key = ApiKey.objects.filter(account=tenant.account).first()
    assert key is not None
    keys_in = shown_in(both, "/backoffice/keys/")
    members_in = shown_in(both, "/backoffice/members/")
    working_in(both, other_tenant.account)
    entries, memberships = AuditEntry.objects.count(), Membership.objects.count()

    revoked = both.post(f"/backoffice/keys/{key.pk}/revoke/", {FORM_ACCOUNT_FIELD: keys_in})
    added = both.post(
        "/backoffice/members/", {"email": "new@example.com", "role": "owner", FORM_ACCOUNT_FIELD: members_in}
    )

    assert revoked.status_code == added.status_code == 409
    key.refresh_from_db()
    assert key.revoked_at is None
    assert Membership.objects.count() == memberships and AuditEntry.objects.count() == entries


def test_the_role_is_asked_as_before_and_after_the_account(tenant, other_tenant, sign_in: SignIn):
    # A viewer of acme who owns globex: globex's form is theirs to post in globex only.
    client = sign_in(tenant.account, "viewer", email=BOTH)
    account_services.add_member(account=other_tenant.account, email=BOTH, role="owner")
    working_in(client, other_tenant.account)
    globex_form = shown_in(client, NEW)
    working_in(client, tenant.account)

    # In acme, as a viewer: globex's form refused as of another account (the role asked is acme's, not the form's).
    assert client.post(NEW, typed(**{FORM_ACCOUNT_FIELD: globex_form})).status_code == 409
    # acme's own form or none: the role refuses, as before.
    assert client.post(NEW, typed(**{FORM_ACCOUNT_FIELD: "acme"})).status_code == 403
    assert client.post(NEW, typed()).status_code == 403
    assert not ExportQueue.objects.exists()


@pytest.mark.parametrize("named", ["globex", "initech", "", '"><script>alert(1)</script>'])
def test_a_form_naming_an_account_not_the_persons_is_refused_naming_only_their_own(
    tenant, other_tenant, sign_in: SignIn, named
):
    client = sign_in(tenant.account, "owner")
    entries = AuditEntry.objects.count()

    refused = client.post(NEW, typed(**{FORM_ACCOUNT_FIELD: named}))

    assert refused.status_code == 409
    page = refused.content.decode()
    assert 'opened in another account; you now work in the account "Acme"' in page
    assert "Globex" not in page and "globex" not in page and "initech" not in page and "<script>" not in page
    assert not ExportQueue.objects.exists() and AuditEntry.objects.count() == entries


def test_the_refusal_is_in_danish_for_a_person_reading_danish(tenant, other_tenant, both):
    account = shown_in(both, NEW)
    working_in(both, other_tenant.account)

    refused = both.post(NEW, typed(**{FORM_ACCOUNT_FIELD: account}), HTTP_ACCEPT_LANGUAGE="da")

    assert refused.status_code == 409
    page = refused.content.decode()
    assert 'åbnet i kontoen "Acme"; du arbejder nu i kontoen "Globex"' in page and "Intet er ændret" in page


# Templates of pages that are not ``member_view``'s (signing in, a new password, an invitation, no account): no
# account to name. The forms of base.html not bound to an account: the switcher (its job is to change account),
# signing out and the language (the person's own).
NOT_MEMBER_PAGES = (
    "login.html",
    "login_verify.html",
    "no_account.html",
    "password/new.html",
    "password/request.html",
    "members/invite.html",
)
NOT_ACCOUNT_BOUND = ("backoffice:switch", "backoffice:logout", "backoffice:language")


def test_every_post_form_of_every_template_names_its_account():
    """Each form of a template, whether or not a crawl reaches its state (a person with two-factor sign-in on,
    a member's row of a kind the tests do not make)."""
    seen = 0
    for template in sorted(TEMPLATES.rglob("*.html")):
        name = template.relative_to(TEMPLATES).as_posix()
        for form in re.findall(r"<form\b[^>]*>.*?</form>", template.read_text(), flags=re.DOTALL):
            opening = form[: form.index(">")]
            if not re.search(r"""method=["']?post""", opening, flags=re.IGNORECASE) or name in NOT_MEMBER_PAGES:
                continue
            if any(f"{{% url '{target}' %}}" in opening for target in NOT_ACCOUNT_BOUND):
                assert "{% account_guard %}" not in form, name
                continue
            assert "{% csrf_token %}{% account_guard %}" in form, (name, opening)
            seen += 1
    assert seen >= 15
