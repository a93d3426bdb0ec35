"""Two-factor sign-in to the back-office: the code after the password, recovery codes, enrolment, turning it off,
an owner's rule that every member must have it, the lock-out, and the audit trail (never a secret or a code)."""

from __future__ import annotations

import re
import time
from base64 import b32decode
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

import pytest
from axes.models import AccessAttempt
from django.contrib.auth import get_user_model
from django.test import Client
from django_otp.oath import TOTP
from django_otp.plugins.otp_static.models import StaticDevice, StaticToken
from django_otp.plugins.otp_totp.models import TOTPDevice

from accounts import services as account_services
from accounts import two_factor
from accounts.models import AuditEntry
from tests.support.backoffice import PASSWORD, SignIn

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("fast_hashes")]

ADDRESS = "198.51.100.23"
EMAIL = "ann@example.com"


def app_code(key: str, *, ahead: int = 0) -> str:
    """The code an authenticator app shows for the hex ``key`` now (``ahead``: that many 30-second steps later)."""
    totp = TOTP(bytes.fromhex(key))
    totp.time = time.time() + 30 * ahead
    return f"{totp.token():06d}"


def enrolled(user: Any) -> tuple[TOTPDevice, list[str]]:
    """``user`` with an authenticator app (no code used yet) and their recovery codes."""
    device = TOTPDevice.objects.create(user=user, name="app", confirmed=True)
    return device, two_factor.renew_recovery_codes(user=user)


def member_with_device(tenant: Any, role: str = "owner") -> tuple[Any, TOTPDevice, list[str]]:
    membership, _ = account_services.add_member(account=tenant.account, email=EMAIL, role=role, password=PASSWORD)
    device, codes = enrolled(membership.user)
    return membership.user, device, codes


def password_step(client: Client, next_url: str = "") -> Any:
    data = {"username": EMAIL.upper(), "password": PASSWORD}
    if next_url:
        data["next"] = next_url
    return client.post("/backoffice/login/", data, REMOTE_ADDR=ADDRESS)


def code_step(client: Client, code: str, next_url: str = "/backoffice/") -> Any:
    return client.post("/backoffice/login/verify/", {"code": code, "next": next_url}, REMOTE_ADDR=ADDRESS)


def audit_text() -> str:
    return " ".join(f"{e.target} {e.target_id} {e.changes}" for e in AuditEntry.objects.all())


def secret_of(page: bytes) -> str:
    """The hex secret of the enrolment page's otpauth:// URI."""
    found = re.search(rb"otpauth://totp/[^<\s\"]+", page)
    assert found, page
    uri = unquote(found.group(0).decode().replace("&amp;", "&"))
    b32 = parse_qs(urlsplit(uri).query)["secret"][0]
    return b32decode(b32 + "=" * (-len(b32) % 8)).hex()


def shown_codes(page: bytes) -> list[str]:
    return [code.decode() for code in re.findall(rb"<li><code>([a-z2-7]{8})</code></li>", page)]


# --- Signing in -------------------------------------------------------------------------------------------------


def test_the_password_alone_does_not_sign_in_a_person_with_a_device(tenant):
    _, device, _ = member_with_device(tenant)
    client = Client()

    answer = password_step(client, "/backoffice/exports/queues/")
    assert answer.status_code == 302
    assert answer["Location"] == "/backoffice/login/verify/?next=%2Fbackoffice%2Fexports%2Fqueues%2F"
    assert client.get("/backoffice/")["Location"].startswith("/backoffice/login/?")  # not signed in yet
    page = client.get(answer["Location"])
    assert page.status_code == 200 and b'name="code"' in page.content and EMAIL.encode() in page.content

    signed = code_step(client, app_code(device.key), "/backoffice/exports/queues/")
    assert signed.status_code == 302 and signed["Location"] == "/backoffice/exports/queues/"
    assert client.get("/backoffice/").status_code == 200
    assert client.get("/backoffice/login/verify/")["Location"] == "/backoffice/"


def test_a_wrong_code_is_refused(tenant):
    _, device, _ = member_with_device(tenant)
    client = Client()
    password_step(client)

    right = app_code(device.key)
    wrong = f"{(int(right) + 1) % 1_000_000:06d}"
    refused = code_step(client, wrong)
    assert refused.status_code == 400 and b"That code is not right." in refused.content
    assert client.get("/backoffice/").status_code == 302
    assert code_step(client, "not a code").status_code == 400


def test_after_a_wrong_code_the_device_refuses_codes_for_a_while(tenant, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 600  # the first wait: 10 minutes, so the test never outlasts it
    _, device, _ = member_with_device(tenant)
    client = Client()
    password_step(client)
    right = app_code(device.key)

    assert code_step(client, f"{(int(right) + 1) % 1_000_000:06d}").status_code == 400
    waiting = code_step(client, right)
    assert waiting.status_code == 400 and b"Too many wrong codes" in waiting.content
    assert client.get("/backoffice/").status_code == 302


def test_wrong_codes_count_towards_the_sign_in_lock_out_with_the_code_masked(tenant, settings):
    settings.OTP_TOTP_THROTTLE_FACTOR = 0  # only the lock-out here
    _, device, _ = member_with_device(tenant)
    client = Client()
    password_step(client)
    wrong = f"{(int(app_code(device.key)) + 1) % 1_000_000:06d}"

    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert code_step(client, wrong).status_code == 400
    locked = code_step(client, wrong)
    assert locked.status_code == 429 and b'id="login-locked"' in locked.content
    # Locked: the right code and the right password are refused too.
    assert code_step(client, app_code(device.key)).status_code == 429
    assert password_step(Client()).status_code == 429
    attempt = AccessAttempt.objects.get(username=EMAIL)
    assert attempt.failures_since_start == settings.AXES_FAILURE_LIMIT
    assert wrong not in attempt.post_data and "code=*" in attempt.post_data


def test_a_recovery_code_signs_in_once(tenant):
    _, _, codes = member_with_device(tenant)
    first = Client()
    password_step(first)
    assert code_step(first, codes[0].upper()).status_code == 302
    assert first.get("/backoffice/").status_code == 200
    [used] = AuditEntry.objects.filter(target_type="two_factor", action="recovery_code_used")
    assert (used.account, used.actor_kind, used.actor, used.target_id, used.changes) == (
        tenant.account,
        "person",
        EMAIL,
        EMAIL,
        {"recovery_codes": [10, 9]},
    )

    again = Client()
    password_step(again)
    assert code_step(again, codes[0]).status_code == 400
    assert again.get("/backoffice/").status_code == 302
    assert StaticToken.objects.filter(device__user__username=EMAIL).count() == 9


def test_a_signed_in_session_that_never_typed_a_code_is_sent_to_type_one(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "viewer", email=EMAIL)
    user = get_user_model().objects.get(username=EMAIL)
    device, _ = enrolled(user)  # enrolled in another session

    answer = client.get("/backoffice/sales/")
    assert answer.status_code == 302
    assert answer["Location"] == "/backoffice/login/verify/?next=/backoffice/sales/"
    assert code_step(client, app_code(device.key), "/backoffice/sales/")["Location"] == "/backoffice/sales/"
    assert client.get("/backoffice/sales/").status_code == 200


def test_the_code_step_goes_only_to_a_page_of_this_site(tenant):
    _, device, _ = member_with_device(tenant)
    client = Client()
    password_step(client, "https://elsewhere.example/")
    signed = code_step(client, app_code(device.key), "https://elsewhere.example/")
    assert signed.status_code == 302 and signed["Location"] == "/backoffice/"


def test_the_code_page_without_a_password_first_is_the_sign_in(tenant):
    answer = Client().get("/backoffice/login/verify/")
    assert answer.status_code == 302 and answer["Location"].startswith("/backoffice/login/")
    assert Client().post("/backoffice/login/verify/", {"code": "123456"}).status_code == 302


# --- Enrolment, recovery codes, turning off ---------------------------------------------------------------------


def test_a_member_enrols_with_a_first_code_and_sees_the_recovery_codes_once(tenant, other_tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "viewer", email=EMAIL)
    account_services.add_member(account=other_tenant.account, email=EMAIL, role="viewer")
    page = client.get("/backoffice/security/")
    assert page.status_code == 200 and "no-store" in page["Cache-Control"]
    assert b"<svg" in page.content and b"<path" in page.content and b"<img" not in page.content
    secret = secret_of(page.content)
    assert client.get("/backoffice/security/").content.count(b"otpauth://") == 1
    assert secret_of(client.get("/backoffice/security/").content) == secret  # the same until confirmed

    wrong = f"{(int(app_code(secret)) + 1) % 1_000_000:06d}"
    refused = client.post("/backoffice/security/", {"code": wrong})
    assert refused.status_code == 400 and not TOTPDevice.objects.exists()

    done = client.post("/backoffice/security/", {"code": app_code(secret)})
    assert done.status_code == 200 and "no-store" in done["Cache-Control"]
    codes = shown_codes(done.content)
    assert len(codes) == 10 and len(set(codes)) == 10
    device = TOTPDevice.objects.get(user__username=EMAIL, confirmed=True)
    assert device.key == secret
    assert sorted(StaticToken.objects.filter(device__user__username=EMAIL).values_list("token", flat=True)) == sorted(
        codes
    )
    later = client.get("/backoffice/security/")
    assert not shown_codes(later.content) and b"otpauth://" not in later.content
    assert b"10 recovery codes left." in later.content
    assert client.get("/backoffice/").status_code == 200  # this session proved the code: still signed in

    entries = AuditEntry.objects.filter(target_type="two_factor", action="enabled")
    assert {e.account_id for e in entries} == {tenant.account.pk, other_tenant.account.pk}
    assert {(e.actor, e.target_id) for e in entries} == {(EMAIL, EMAIL)}
    assert entries[0].changes == {"two_factor": [False, True], "recovery_codes": [None, 10]}
    text = audit_text()
    assert secret not in text and not any(code in text for code in codes)


def test_new_recovery_codes_replace_the_old_ones(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "viewer", email=EMAIL)
    user = get_user_model().objects.get(username=EMAIL)
    device, old = enrolled(user)
    assert code_step(client, app_code(device.key)).status_code == 302

    renewed = client.post("/backoffice/security/codes/")
    assert renewed.status_code == 200 and "no-store" in renewed["Cache-Control"]
    new = shown_codes(renewed.content)
    assert len(new) == 10 and not set(new) & set(old)
    assert set(StaticToken.objects.filter(device__user=user).values_list("token", flat=True)) == set(new)
    renewals = AuditEntry.objects.filter(target_type="two_factor", action="codes_renewed").order_by("id")
    assert renewals.count() == 2  # the test's setup and the page
    assert (renewals.last().actor, renewals.last().changes) == (EMAIL, {"recovery_codes": [10, 10]})
    assert not any(code in audit_text() for code in [*old, *new])


def test_turning_off_needs_a_code(tenant, sign_in: SignIn):
    client = sign_in(tenant.account, "manager", email=EMAIL)
    user = get_user_model().objects.get(username=EMAIL)
    device, _ = enrolled(user)
    assert code_step(client, app_code(device.key)).status_code == 302

    assert client.post("/backoffice/security/off/", {"code": ""}).status_code == 400
    refused = client.post("/backoffice/security/off/", {"code": "aaaaaaaa"})
    assert refused.status_code == 400 and TOTPDevice.objects.filter(user=user).exists()

    off = client.post("/backoffice/security/off/", {"code": app_code(device.key, ahead=1)})
    assert off.status_code == 302 and off["Location"] == "/backoffice/security/"
    assert not TOTPDevice.objects.filter(user=user).exists() and not StaticDevice.objects.filter(user=user).exists()
    [entry] = AuditEntry.objects.filter(target_type="two_factor", action="disabled")
    assert (entry.actor, entry.changes) == (EMAIL, {"two_factor": [True, False]})
    assert client.get("/backoffice/").status_code == 200  # nothing required: the password is enough again
    user.set_password(PASSWORD)
    user.save()
    assert password_step(Client())["Location"] == "/backoffice/"  # the password alone signs in again


# --- An owner's rule --------------------------------------------------------------------------------------------


def test_an_owner_requires_two_factors_and_a_member_without_must_enrol_first(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    manager = sign_in(tenant.account, "manager", email=EMAIL)
    page = owner.get("/backoffice/settings/")
    assert page.status_code == 200 and b'name="two_factor_required"' in page.content

    assert owner.post("/backoffice/settings/", {"two_factor_required": "on"}).status_code == 302
    tenant.account.refresh_from_db()
    assert tenant.account.two_factor_required
    [entry] = AuditEntry.objects.filter(target_type="account")
    assert (entry.action, entry.target_id, entry.actor, entry.changes) == (
        "changed",
        tenant.account.identifier,
        f"owner@{tenant.account.identifier}.example",
        {"two_factor_required": [False, True]},
    )

    for path in ("/backoffice/", "/backoffice/exports/queues/", "/backoffice/sales/", "/backoffice/settings/"):
        assert manager.get(path)["Location"] == "/backoffice/security/", path
    assert owner.get("/backoffice/settings/")["Location"] == "/backoffice/security/"  # the owner too
    security = manager.get("/backoffice/security/")
    assert security.status_code == 200 and b"requires two-factor sign-in" in security.content
    assert b'href="/backoffice/exports/queues/"' not in security.content  # no way elsewhere

    secret = secret_of(security.content)
    assert manager.post("/backoffice/security/", {"code": app_code(secret)}).status_code == 200
    assert manager.get("/backoffice/exports/queues/").status_code == 200


def test_a_member_required_to_enrol_is_sent_there_after_the_password(tenant):
    tenant.account.two_factor_required = True
    tenant.account.save()
    account_services.add_member(account=tenant.account, email=EMAIL, role="viewer", password=PASSWORD)
    client = Client()
    signed = password_step(client)
    assert signed.status_code == 302 and signed["Location"] == "/backoffice/"
    assert client.get("/backoffice/")["Location"] == "/backoffice/security/"
    assert client.get("/backoffice/security/").status_code == 200


def test_only_an_owner_changes_the_setting(tenant, sign_in: SignIn):
    for role in ("manager", "viewer"):
        client = sign_in(tenant.account, role)
        assert client.get("/backoffice/settings/").status_code == 403
        assert client.post("/backoffice/settings/", {"two_factor_required": "on"}).status_code == 403
    tenant.account.refresh_from_db()
    assert not tenant.account.two_factor_required
    assert not AuditEntry.objects.filter(target_type="account").exists()


def test_saving_the_settings_unchanged_records_nothing(tenant, sign_in: SignIn):
    owner = sign_in(tenant.account, "owner")
    assert owner.post("/backoffice/settings/", {}).status_code == 302
    assert not AuditEntry.objects.filter(target_type="account").exists()


def test_an_operator_with_two_factor_on_types_a_code_before_the_admin(db: None) -> None:
    operator = get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    device, _codes = enrolled(operator)
    client = Client()

    answer = client.post(
        "/admin/login/?next=/admin/exports/exportqueue/",
        {"username": "root", "password": PASSWORD},
        REMOTE_ADDR=ADDRESS,
    )
    assert answer.status_code == 302
    assert answer["Location"].startswith("/backoffice/login/verify/?next=%2Fadmin%2Fexports%2Fexportqueue%2F")
    assert client.get("/admin/").status_code == 302  # the password alone signed no one in

    done = client.post(
        "/backoffice/login/verify/",
        {"code": app_code(device.bin_key.hex()), "next": "/admin/exports/exportqueue/"},
        REMOTE_ADDR=ADDRESS,
    )
    assert done.status_code == 302 and done["Location"] == "/admin/exports/exportqueue/"
    assert client.get("/admin/exports/exportqueue/").status_code == 200


def test_an_operator_without_two_factor_signs_in_to_the_admin_with_the_password(db: None) -> None:
    get_user_model().objects.create_superuser("root", "root@example.com", PASSWORD)
    client = Client()
    answer = client.post("/admin/login/?next=/admin/", {"username": "root", "password": PASSWORD}, REMOTE_ADDR=ADDRESS)
    assert answer.status_code == 302 and answer["Location"] == "/admin/"
    assert client.get("/admin/").status_code == 200
