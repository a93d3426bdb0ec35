"""A link naming an account (``?account=<identifier>``, as the notification mails' links do) opens its page in that
account: a GET switches the session to it when it is one of the person's and asks for the page again without the
parameter; an account not theirs, or none, is dropped the same way with the session unchanged; a POST never
switches; a person not signed in signs in first, both steps, and the switch happens then."""

from __future__ import annotations

import time
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services as account_services
from accounts.models import Account, AuditEntry
from backoffice.members import SESSION_KEY, in_account
from exports.models import ExportQueue
from tests.support.backoffice import PASSWORD, SignIn, page_text
from tests.support.queues import make_queue
from tests.support.tenants import Tenant

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashes")]

BOTH = "both@example.com"
ADDRESS = "198.51.100.31"


def queue_path(queue: ExportQueue) -> str:
    return f"/backoffice/exports/queues/{queue.pk}/"


def working_in(client: Client, account: Account) -> Client:
    """``client`` switched to ``account`` with the switcher, as the person would."""
    client.post("/backoffice/switch/", {"account": account.identifier})
    assert client.session[SESSION_KEY] == account.identifier
    return client


def member_of_both(tenant: Tenant, other_tenant: Tenant, sign_in: SignIn) -> Client:
    """A person who is a member of acme (viewer) and globex (owner), signed in, working in globex."""
    client = sign_in(tenant.account, "viewer", email=BOTH)
    account_services.add_member(account=other_tenant.account, email=BOTH, role="owner")
    return working_in(client, other_tenant.account)


def test_the_link_is_the_path_with_the_accounts_identifier(tenant):
    assert in_account("/backoffice/exports/log/", tenant.account) == "/backoffice/exports/log/?account=acme"


def test_a_member_of_two_accounts_working_in_the_other_opens_the_queue_in_its_account(
    tenant, other_tenant, sign_in: SignIn
):
    queue = make_queue(tenant, "https://example.com/a", name="acme-queue")
    client = member_of_both(tenant, other_tenant, sign_in)
    assert client.get(queue_path(queue)).status_code == 404  # without the link's account: globex has no such queue
    entries = AuditEntry.objects.count()

    answer = client.get(in_account(queue_path(queue), tenant.account))

    assert answer.status_code == 302 and answer["Location"] == queue_path(queue)
    assert client.session[SESSION_KEY] == "acme"
    page = page_text(client.get(answer["Location"]))
    assert "acme-queue" in page
    assert '<option value="acme" selected>' in page  # the switcher shows the account the page is in
    assert AuditEntry.objects.count() == entries  # like the switcher: looking elsewhere changes nothing


def test_a_link_naming_an_account_not_theirs_or_none_is_dropped_and_the_session_unchanged(
    tenant, other_tenant, sign_in: SignIn
):
    queue = make_queue(tenant, "https://example.com/a", name="acme-queue")
    client = sign_in(other_tenant.account, "owner", email="one@example.com")
    working_in(client, other_tenant.account)

    answers = [
        client.get(queue_path(queue), {"account": name}) for name in ("acme", "no-such-account", "", "é" * 300, "ACME")
    ]

    # An existing account not theirs is answered as an unknown one: its existence is not told.
    assert {(answer.status_code, answer["Location"]) for answer in answers} == {(302, queue_path(queue))}
    assert client.session[SESSION_KEY] == "globex"
    assert client.get(queue_path(queue)).status_code == 404


def test_the_link_keeps_the_other_parameters_and_drops_every_account_parameter(tenant, other_tenant, sign_in: SignIn):
    client = member_of_both(tenant, other_tenant, sign_in)

    answer = client.get("/backoffice/exports/log/?status=failure&account=acme&element_key=a%26b&account=globex")

    assert answer.status_code == 302
    assert answer["Location"] == "/backoffice/exports/log/?status=failure&element_key=a%26b"
    assert client.session[SESSION_KEY] == "globex"  # the last one named, as a form's field reads it
    assert client.get(answer["Location"]).status_code == 200


def test_a_link_naming_the_account_worked_in_only_drops_the_parameter(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "viewer")

    answer = client.get("/backoffice/?account=acme")

    assert answer.status_code == 302 and answer["Location"] == "/backoffice/"
    assert client.session[SESSION_KEY] == "acme"


def test_a_head_switches_as_the_get_would(tenant, other_tenant, sign_in: SignIn):
    client = member_of_both(tenant, other_tenant, sign_in)

    answer = client.head("/backoffice/?account=acme")

    assert answer.status_code == 302 and answer["Location"] == "/backoffice/"
    assert client.session[SESSION_KEY] == "acme"


def test_a_post_never_switches_and_acts_in_the_account_worked_in(tenant, other_tenant, sign_in: SignIn):
    client = member_of_both(tenant, other_tenant, sign_in)

    saved = client.post("/backoffice/notifications/?account=acme", {"daily_digest": "on"})

    assert saved.status_code == 302
    assert client.session[SESSION_KEY] == "globex"
    [entry] = AuditEntry.objects.filter(target_type="member", action="changed")
    assert entry.account_id == other_tenant.account.pk  # globex's choice changed, not acme's


def test_a_person_not_signed_in_signs_in_and_lands_on_the_page_in_the_links_account(tenant, other_tenant):
    queue = make_queue(other_tenant, "https://example.com/b", name="globex-queue")
    account_services.add_member(account=tenant.account, email=BOTH, role="viewer", password=PASSWORD)
    account_services.add_member(account=other_tenant.account, email=BOTH, role="viewer")
    link = in_account(queue_path(queue), other_tenant.account)
    client = Client()

    asked = client.get(link)
    assert asked.status_code == 302 and asked["Location"].startswith("/backoffice/login/")
    [next_url] = parse_qs(urlsplit(asked["Location"]).query)["next"]
    assert next_url == link  # the query kept
    signed = client.post("/backoffice/login/", {"username": BOTH, "password": PASSWORD, "next": next_url})
    assert signed.status_code == 302 and signed["Location"] == link

    page = client.get(link, follow=True)
    assert page.redirect_chain == [(queue_path(queue), 302)]
    assert "globex-queue" in page_text(page)
    assert client.session[SESSION_KEY] == "globex"  # not acme, the first of their accounts


def app_code(device: TOTPDevice) -> str:
    totp = TOTP(bytes.fromhex(device.key))
    totp.time = time.time()
    return f"{totp.token():06d}"


def test_with_two_factor_sign_in_the_link_survives_both_steps(tenant, other_tenant):
    queue = make_queue(other_tenant, "https://example.com/b", name="globex-queue")
    account_services.add_member(account=tenant.account, email=BOTH, role="viewer", password=PASSWORD)
    account_services.add_member(account=other_tenant.account, email=BOTH, role="viewer")
    device = TOTPDevice.objects.create(user=get_user_model().objects.get(username=BOTH), name="app", confirmed=True)
    link = in_account(queue_path(queue), other_tenant.account)
    client = Client()

    [next_url] = parse_qs(urlsplit(client.get(link)["Location"]).query)["next"]
    password: Any = client.post(
        "/backoffice/login/", {"username": BOTH, "password": PASSWORD, "next": next_url}, REMOTE_ADDR=ADDRESS
    )
    verify = password["Location"]
    assert verify.startswith("/backoffice/login/verify/")
    [carried] = parse_qs(urlsplit(verify).query)["next"]
    assert carried == link
    coded = client.post(verify, {"code": app_code(device), "next": carried}, REMOTE_ADDR=ADDRESS)
    assert coded.status_code == 302 and coded["Location"] == link

    page = client.get(link, follow=True)
    assert "globex-queue" in page_text(page)
    assert client.session[SESSION_KEY] == "globex"
