"""Members of the test accounts signed in to the back-office with Django's test client."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client

from accounts import services
from accounts.models import Account

PASSWORD = "correct-Horse-battery-9"

SignIn = Callable[..., Client]


@pytest.fixture
def sign_in(db: None) -> SignIn:
    """``sign_in(account, role)``: a client signed in as a new member of ``account`` with ``role``."""

    def signed_in(account: Account, role: str = "owner", *, email: str | None = None) -> Client:
        address = email or f"{role}@{account.identifier}.example"
        membership, _ = services.add_member(account=account, email=address, role=role)
        client = Client()
        # Signed in without the form (the login lock-out's backend, django-axes, takes only requests), so without a
        # password: hashing one costs a good part of a second.
        client.force_login(membership.user, backend="django.contrib.auth.backends.ModelBackend")
        return client

    return signed_in


@pytest.fixture
def fast_hashes(settings: Any) -> None:
    """A fast password hasher, for the tests that sign in through the form: every sign-in hashes a password, and
    these tests are about access, not about PBKDF2."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def page_text(response: Any) -> str:
    """The text of a page that must have been answered 200."""
    assert response.status_code == 200
    return response.content.decode()
