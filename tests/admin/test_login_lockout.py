"""The admin login locks a username out at an address after repeated wrong passwords (django-axes), until the
cool-off has passed."""

from __future__ import annotations

from typing import Any

import pytest
from axes.models import AccessAttempt
from django.contrib.auth.models import User
from django.test import Client

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
ADDRESS = "198.51.100.7"


@pytest.fixture
def staff(settings: Any) -> User:
    # Every attempt hashes a password: a fast hasher keeps the test about the lockout, not about PBKDF2.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    return User.objects.create_superuser("staff", "staff@example.com", PASSWORD)


def log_in(password: str, *, username: str = "staff", address: str = ADDRESS, **extra: Any) -> Any:
    """One login attempt from a fresh browser; the response to the form's POST."""
    data = {"username": username, "password": password, "next": "/admin/"}
    return Client().post("/admin/login/", data, REMOTE_ADDR=address, **extra)


def logged_in(response: Any) -> bool:
    return response.status_code == 302 and response["Location"] == "/admin/"


def locked_out(response: Any) -> bool:
    return response.status_code == 429 and 'id="login-locked"' in response.content.decode()


def fail_until_locked(settings: Any, **extra: Any) -> None:
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        assert log_in("wrong password", **extra).status_code == 200  # the form, with its error
    assert locked_out(log_in("wrong password", **extra))


def test_after_the_failure_limit_the_right_password_is_refused(staff, settings) -> None:
    fail_until_locked(settings)

    response = log_in(PASSWORD)

    assert locked_out(response)
    assert "sessionid" not in response.cookies


def test_the_lockout_lifts_after_the_cool_off(staff, settings) -> None:
    fail_until_locked(settings)
    assert locked_out(log_in(PASSWORD))

    # The cool-off runs from the last counted failure: move it that far into the past.
    AccessAttempt.objects.update(attempt_time=AccessAttempt.objects.get().attempt_time - settings.AXES_COOLOFF_TIME)

    assert logged_in(log_in(PASSWORD))


def test_the_lock_holds_one_username_at_one_address(staff, settings) -> None:
    User.objects.create_superuser("colleague", "colleague@example.com", PASSWORD)
    fail_until_locked(settings)

    assert logged_in(log_in(PASSWORD, address="198.51.100.8"))  # nobody locks a user out from elsewhere
    assert logged_in(log_in(PASSWORD, username="colleague"))  # nor a colleague behind the same address


def test_behind_a_trusted_proxy_the_lock_holds_the_client_address(staff, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.1"
    fail_until_locked(settings, address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.5")

    assert locked_out(log_in(PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="192.0.2.1, 203.0.113.5"))
    assert logged_in(log_in(PASSWORD, address=proxy, HTTP_X_FORWARDED_FOR="203.0.113.6"))


def test_attempts_during_the_lockout_do_not_extend_it(staff, settings) -> None:
    fail_until_locked(settings)
    attempt_time = AccessAttempt.objects.get().attempt_time

    assert locked_out(log_in("another wrong password"))

    assert AccessAttempt.objects.get().attempt_time == attempt_time
    assert AccessAttempt.objects.get().failures_since_start == settings.AXES_FAILURE_LIMIT
