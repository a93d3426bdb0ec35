"""Who enters where: the admin is the operator's (members are sent to the back-office); a member sets a new password
by e-mail; the back-office's sign-in locks out after repeated failures, as the admin's does."""

from __future__ import annotations

import re
from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

from accounts import services as account_services
from accounts.models import AuditEntry
from tests.support.backoffice import PASSWORD, SignIn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashes")]

NEW_PASSWORD = "another-Staple-battery-7"
ADDRESS = "198.51.100.9"


def sign_in_at(path: str, username: str, password: str, client: Client | None = None, **data: str) -> Any:
    data.update(username=username, password=password)
    return (client or Client()).post(path, data, REMOTE_ADDR=ADDRESS)


# --- The admin is the operator's ------------------------------------------------------------------------------


def test_a_signed_in_member_who_opens_the_admin_is_sent_to_the_back_office(tenant, sign_in: SignIn):
    member = sign_in(tenant.account, "owner")
    page = member.get("/admin/", follow=True)
    assert page.redirect_chain[-1] == ("/backoffice/", 302)
    assert page.status_code == 200 and page.request["PATH_INFO"] == "/backoffice/"
    assert member.get("/admin/login/")["Location"] == "/backoffice/"


def test_a_member_who_signs_in_at_the_admins_login_is_sent_to_the_back_office(tenant):
    account_services.add_member(account=tenant.account, email="ann@example.com", role="manager", password=PASSWORD)
    client = Client()
    signed = client.post("/admin/login/", {"username": "ann@example.com", "password": PASSWORD, "next": "/admin/"})
    assert signed.status_code == 302 and signed["Location"] == "/backoffice/"
    assert client.get("/backoffice/").status_code == 200
    wrong = Client().post("/admin/login/", {"username": "ann@example.com", "password": "nope"})
    assert wrong.status_code == 200 and b"errornote" in wrong.content  # a wrong password is still the form's error


def test_a_superuser_enters_the_admin_even_as_a_member(tenant):
    User.objects.create_superuser("root@example.com", "root@example.com", PASSWORD)
    account_services.add_member(account=tenant.account, email="root@example.com", role="viewer")
    client = Client()
    signed = sign_in_at("/admin/login/", "root@example.com", PASSWORD, client, next="/admin/")
    assert signed.status_code == 302 and signed["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200


def test_staff_of_no_account_enter_the_admin_and_staff_who_are_members_do_not(tenant):
    operator = Client()
    operator.force_login(User.objects.create_user("ops", password=PASSWORD, is_staff=True))
    assert operator.get("/admin/").status_code == 200
    account_services.add_member(account=tenant.account, email="staffed@example.com", role="owner", password=PASSWORD)
    User.objects.filter(username="staffed@example.com").update(is_staff=True)
    member = Client()
    member.force_login(User.objects.get(username="staffed@example.com"))
    assert member.get("/admin/", follow=True).redirect_chain[-1] == ("/backoffice/", 302)


# --- A new password by e-mail ---------------------------------------------------------------------------------


def ask_for_a_link(address: str) -> Any:
    return Client().post("/backoffice/password/", {"email": address})


def test_the_sign_in_page_links_to_the_password_reset():
    assert b'href="/backoffice/password/"' in Client().get("/backoffice/login/").content


def test_a_member_sets_a_new_password_by_the_mailed_link_and_signs_in_with_it(tenant, mailoutbox):
    account_services.add_member(account=tenant.account, email="ann@example.com", role="viewer", password=PASSWORD)
    asked = ask_for_a_link(" Ann@Example.COM ")
    assert asked.status_code == 302 and asked["Location"] == "/backoffice/password/sent/"
    assert [mail.to for mail in mailoutbox] == [["ann@example.com"]]
    link = re.search(r"http://testserver(/backoffice/password/[^/\s]+/[^/\s]+/)", mailoutbox[0].body)
    assert link is not None
    browser = Client()
    form = browser.get(link.group(1), follow=True)  # Django moves the token into the session, then shows the form
    assert form.status_code == 200 and b'name="new_password1"' in form.content
    done = browser.post(form.request["PATH_INFO"], {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD})
    assert done.status_code == 302 and done["Location"] == "/backoffice/password/done/"
    assert sign_in_at("/backoffice/login/", "ann@example.com", NEW_PASSWORD)["Location"] == "/backoffice/"
    assert sign_in_at("/backoffice/login/", "ann@example.com", PASSWORD).status_code == 200  # the old one is gone
    again = Client().get(link.group(1), follow=True)
    assert b'id="reset-invalid"' in again.content  # the link works once
    entry = AuditEntry.objects.get(account=tenant.account, target_id="ann@example.com", action="changed")
    assert entry.actor == "ann@example.com" and "password" in entry.changes and NEW_PASSWORD not in str(entry.changes)


def test_a_member_added_without_a_password_gets_the_link_too(tenant, mailoutbox):
    account_services.add_member(account=tenant.account, email="new@example.com", role="viewer")
    ask_for_a_link("new@example.com")
    assert [mail.to for mail in mailoutbox] == [["new@example.com"]]


def test_an_unknown_address_and_a_person_of_no_account_get_the_same_answer_and_no_mail(tenant, mailoutbox):
    account_services.add_member(account=tenant.account, email="ann@example.com", role="viewer", password=PASSWORD)
    User.objects.create_superuser("admin", "admin@example.com", PASSWORD)
    User.objects.create_user("stray@example.com", "stray@example.com", PASSWORD)
    member = ask_for_a_link("ann@example.com")
    mailoutbox.clear()
    for address in ("nobody@example.com", "admin@example.com", "stray@example.com"):
        answer = ask_for_a_link(address)
        assert (answer.status_code, answer["Location"]) == (member.status_code, member["Location"])
    assert mailoutbox == []


# --- Lock-out -------------------------------------------------------------------------------------------------


def test_after_the_failure_limit_the_back_office_refuses_the_right_password_on_its_own_page(tenant, settings):
    account_services.add_member(account=tenant.account, email="ann@example.com", role="viewer", password=PASSWORD)
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert sign_in_at("/backoffice/login/", "ann@example.com", "wrong").status_code == 200
    last = sign_in_at("/backoffice/login/", "ann@example.com", "wrong")
    assert last.status_code == 429
    refused = sign_in_at("/backoffice/login/", "Ann@example.com", PASSWORD)
    assert refused.status_code == 429 and "sessionid" not in refused.cookies
    page = refused.content.decode()
    assert 'id="login-locked"' in page and "backoffice.css" in page and 'href="/backoffice/password/"' in page
    # The lock lifts after the cool-off, as the admin's does.
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME)
    assert sign_in_at("/backoffice/login/", "ann@example.com", PASSWORD)["Location"] == "/backoffice/"


def test_signing_out_leads_to_the_sign_in_page(tenant, sign_in: SignIn):
    member = sign_in(tenant.account, "viewer")
    out = member.post("/backoffice/logout/")
    assert out.status_code == 302 and out["Location"] == "/backoffice/login/"
    assert member.get("/backoffice/")["Location"].startswith("/backoffice/login/")
