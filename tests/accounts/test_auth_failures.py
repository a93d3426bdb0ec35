"""Failed API authentications are limited per client address and per key prefix (accounts.auth_failures): after
the limit, 429 with Retry-After and one body until the window ends; an address's lock refuses the right key too, a
prefix's lock only failures."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.test import RequestFactory
from django.utils import timezone
from rest_framework.test import APIClient

from accounts import auth_failures, selectors
from accounts.auth_failures import TOO_MANY_FAILURES
from accounts.models import AuthFailureWindow
from tests.support.tenants import Tenant

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 3
TOO_MANY = {"status": "ERROR", "message": TOO_MANY_FAILURES}
ADDRESS = "198.51.100.7"
OTHER_ADDRESS = "198.51.100.8"


@pytest.fixture(autouse=True)
def small_limit(settings: Any) -> None:
    settings.AUTH_FAILURE_LIMIT = LIMIT
    settings.AUTH_FAILURE_WINDOW_SECONDS = 300
    settings.TRUSTED_PROXY_COUNT = 0


def wrong_key(prefix: str | None = None) -> str:
    """A well-formed key that matches nothing; a fresh prefix unless one is given."""
    return f"rk_{prefix or secrets.token_hex(4)}{secrets.token_urlsafe(32)}"


def prefix(raw_key: str) -> str:
    return raw_key[3:11]


def markets(client: APIClient, tenant: Tenant, key: str, address: str = ADDRESS, **extra: Any) -> Any:
    return client.get("/api/v1/markets/", tenant.params(key), REMOTE_ADDR=address, **extra)


def fail(client: APIClient, tenant: Tenant, times: int = LIMIT, address: str = ADDRESS, **extra: Any) -> None:
    for _ in range(times):
        assert markets(client, tenant, wrong_key(), address, **extra).status_code == 401


def assert_too_many(response: Any) -> None:
    assert response.status_code == 429
    assert response.json() == TOO_MANY
    assert 0 < int(response["Retry-After"]) <= 300


# --- The limit ----------------------------------------------------------------------------------------------------
def test_after_the_limit_a_wrong_key_answers_429_with_retry_after(client, tenant) -> None:
    fail(client, tenant)

    assert_too_many(markets(client, tenant, wrong_key()))


def test_while_an_address_is_limited_its_right_key_is_refused_too(client, tenant) -> None:
    fail(client, tenant, address=ADDRESS)

    assert_too_many(markets(client, tenant, tenant.admin_key, address=ADDRESS))
    assert markets(client, tenant, tenant.admin_key, address=OTHER_ADDRESS).status_code == 200


WRONG_PARTS = {
    "account": lambda t: {**t.params(t.admin_key), "account": "nobody"},
    "integration": lambda t: {**t.params(t.admin_key), "integration": "nothing"},
    "key": lambda t: t.params(wrong_key()),
}


@pytest.mark.parametrize("part", WRONG_PARTS)
def test_the_429_is_the_same_whichever_part_was_wrong(client, tenant, part) -> None:
    for _ in range(LIMIT):
        assert client.get("/api/v1/markets/", WRONG_PARTS[part](tenant), REMOTE_ADDR=ADDRESS).status_code == 401

    assert_too_many(client.get("/api/v1/markets/", WRONG_PARTS[part](tenant), REMOTE_ADDR=ADDRESS))


def test_a_stranger_spreading_failures_with_a_keys_prefix_over_many_addresses_cannot_lock_its_owner_out(
    client, tenant
) -> None:
    """The prefix is public: failures with it from many addresses lock those addresses (and answer 429 to further
    wrong keys with that prefix), never the right key, from the owner's address or any other."""
    owner = "198.51.100.50"
    for n in range(LIMIT * 3):
        response = markets(client, tenant, wrong_key(prefix(tenant.admin_key)), address=f"203.0.113.{n + 1}")
        assert response.status_code in (401, 429)

    assert markets(client, tenant, tenant.admin_key, address=owner).status_code == 200
    assert markets(client, tenant, tenant.admin_key, address="203.0.113.250").status_code == 200
    assert_too_many(markets(client, tenant, wrong_key(prefix(tenant.admin_key)), address="203.0.113.251"))


def test_the_attack_through_a_trusted_proxy_leaves_the_owner_working_too(client, tenant, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.1"
    for n in range(LIMIT * 2):
        forwarded = f"203.0.113.{n + 1}"
        response = markets(client, tenant, wrong_key(prefix(tenant.admin_key)), proxy, HTTP_X_FORWARDED_FOR=forwarded)
        assert response.status_code in (401, 429)

    owner = markets(client, tenant, tenant.admin_key, proxy, HTTP_X_FORWARDED_FOR="198.51.100.50")
    assert owner.status_code == 200


def test_brute_force_from_one_address_is_still_throttled_whatever_the_prefixes(client, tenant) -> None:
    for _ in range(LIMIT):
        assert markets(client, tenant, wrong_key(prefix(tenant.admin_key)), address=ADDRESS).status_code == 401

    assert_too_many(markets(client, tenant, wrong_key(), address=ADDRESS))
    assert_too_many(markets(client, tenant, tenant.admin_key, address=ADDRESS))


def test_only_the_address_lock_refuses_the_right_key(tenant) -> None:
    request = RequestFactory().get("/api/v1/markets/", REMOTE_ADDR=ADDRESS)
    subjects = auth_failures.subjects(request, raw_key=tenant.admin_key)

    assert subjects == [f"address:{ADDRESS}", f"key:{prefix(tenant.admin_key)}"]
    assert auth_failures.refusing_right_keys(subjects) == [f"address:{ADDRESS}"]


def test_only_wrong_credentials_count_not_scope_refusals_or_missing_keys(client, tenant) -> None:
    for _ in range(LIMIT + 1):
        assert markets(client, tenant, tenant.imports_key).status_code == 403  # a right key without the scope
        no_key = {"account": tenant.account.identifier, "integration": tenant.integration.identifier}
        assert client.get("/api/v1/markets/", no_key, REMOTE_ADDR=ADDRESS).status_code == 401

    fail(client, tenant, LIMIT)
    assert_too_many(markets(client, tenant, wrong_key()))


def test_the_limit_lifts_when_the_window_ends(client, tenant) -> None:
    fail(client, tenant)
    assert_too_many(markets(client, tenant, tenant.admin_key))

    AuthFailureWindow.objects.update(window_ends_at=timezone.now() - timedelta(seconds=1))

    assert markets(client, tenant, tenant.admin_key).status_code == 200
    fail(client, tenant, LIMIT)  # a new window, with the whole allowance
    assert_too_many(markets(client, tenant, wrong_key()))


def test_a_new_window_drops_the_windows_that_are_over(client, tenant) -> None:
    ended = timezone.now() - timedelta(seconds=1)
    AuthFailureWindow.objects.create(subject="address:192.0.2.1", failures=LIMIT, window_ends_at=ended)

    fail(client, tenant, times=1)

    assert not AuthFailureWindow.objects.filter(subject="address:192.0.2.1").exists()


# --- Client addresses ---------------------------------------------------------------------------------------------
def test_an_ipv6_client_counts_as_its_64(client, tenant) -> None:
    for n in range(LIMIT):
        assert markets(client, tenant, wrong_key(), address=f"2001:db8::{n + 1}").status_code == 401

    assert_too_many(markets(client, tenant, tenant.admin_key, address="2001:db8::ffff"))
    assert markets(client, tenant, tenant.admin_key, address="2001:db8:0:1::1").status_code == 200


def test_x_forwarded_for_is_ignored_without_a_trusted_proxy(client, tenant) -> None:
    for n in range(LIMIT):
        forwarded = f"192.0.2.{n + 1}"  # a client inventing a new address for each try
        assert markets(client, tenant, wrong_key(), HTTP_X_FORWARDED_FOR=forwarded).status_code == 401

    assert_too_many(markets(client, tenant, tenant.admin_key, HTTP_X_FORWARDED_FOR="192.0.2.99"))


def test_behind_a_trusted_proxy_the_client_is_the_address_the_proxy_appended(client, tenant, settings) -> None:
    settings.TRUSTED_PROXY_COUNT = 1
    proxy = "10.0.0.1"
    for n in range(LIMIT):
        # The client writes what it likes on the left; the proxy appends the address it saw.
        forwarded = f"192.0.2.{n + 1}, 203.0.113.5"
        assert markets(client, tenant, wrong_key(), proxy, HTTP_X_FORWARDED_FOR=forwarded).status_code == 401

    locked_out = markets(client, tenant, tenant.admin_key, proxy, HTTP_X_FORWARDED_FOR="192.0.2.99, 203.0.113.5")
    assert_too_many(locked_out)
    neighbour = markets(client, tenant, tenant.admin_key, proxy, HTTP_X_FORWARDED_FOR="203.0.113.6")
    assert neighbour.status_code == 200


# --- Every API-key surface ----------------------------------------------------------------------------------------
SURFACES = {
    "imports": ("post", "/imports/incoming_orders", "imports_key", {"stock_location": "shop-1"}),
    "back-office API": ("get", "/api/v1/markets/", "admin_key", {}),
    "POS API": ("post", "/api/v1/pos/outgoing-orders", "pos_key", {}),
}


@pytest.mark.parametrize("surface", SURFACES)
def test_every_api_key_surface_is_limited(client, tenant, surface) -> None:
    method, path, key_name, extra = SURFACES[surface]

    def call(key: str) -> Any:
        url = f"{path}?{tenant.query(key, **extra)}"
        if method == "get":
            return client.get(url, REMOTE_ADDR=ADDRESS)
        return client.post(url, {"orders": []}, format="json", REMOTE_ADDR=ADDRESS)

    for _ in range(LIMIT):
        assert call(wrong_key()).status_code == 401

    assert_too_many(call(getattr(tenant, key_name)))


# --- Cost and sharing ---------------------------------------------------------------------------------------------
def test_the_lock_check_rides_on_the_key_lookup_query(tenant, django_assert_num_queries) -> None:
    subjects = [f"address:{ADDRESS}", f"key:{prefix(tenant.admin_key)}"]
    credentials = {"account_identifier": "acme", "integration_identifier": "webshop", "raw_key": tenant.admin_key}
    with django_assert_num_queries(1):
        assert selectors.api_key_for_credentials(**credentials, unless_locked=subjects) is not None

    AuthFailureWindow.objects.create(
        subject=subjects[0], failures=LIMIT, window_ends_at=timezone.now() + timedelta(minutes=1)
    )
    with django_assert_num_queries(1):
        assert selectors.api_key_for_credentials(**credentials, unless_locked=subjects) is None


SEND_FAILURES = """
import django, sys
django.setup()
from rest_framework.test import APIClient
client = APIClient()
for _ in range(int(sys.argv[1])):
    response = client.get("/api/v1/markets/", {"account": "acme", "integration": "webshop", "apikey": sys.argv[2]},
                          REMOTE_ADDR=sys.argv[3])
    assert response.status_code == 401, response.status_code
print("sent")
"""


@pytest.mark.django_db(transaction=True)
def test_failures_counted_by_another_process_lock_this_one_out(tenant) -> None:
    """Every gunicorn worker (and machine) shares the counts: they are rows of the database."""
    env = {
        **os.environ,
        "DATABASE_NAME": connection.settings_dict["NAME"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "AUTH_FAILURE_LIMIT": str(LIMIT),
    }
    done = subprocess.run(
        [sys.executable, "-c", SEND_FAILURES, str(LIMIT), wrong_key(), ADDRESS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "sent" in done.stdout, done.stderr

    assert_too_many(markets(APIClient(), tenant, tenant.admin_key, address=ADDRESS))


@pytest.mark.django_db(transaction=True)
def test_concurrent_failures_are_all_counted(settings) -> None:
    settings.AUTH_FAILURE_LIMIT = 1000
    threads, each = 4, 10
    request = RequestFactory().get("/", REMOTE_ADDR=ADDRESS)
    subjects = auth_failures.subjects(request, raw_key=wrong_key("feedf00d"))
    errors: list[BaseException] = []

    def fail_repeatedly() -> None:
        try:
            for _ in range(each):
                assert auth_failures.record_failure(subjects) == 0
        except BaseException as exc:  # reported by the main thread
            errors.append(exc)
        finally:
            connections.close_all()

    workers = [threading.Thread(target=fail_repeatedly) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)

    assert errors == []
    counts = dict(AuthFailureWindow.objects.values_list("subject", "failures"))
    assert counts == {f"address:{ADDRESS}": threads * each, "key:feedf00d": threads * each}


def test_only_the_public_prefix_of_a_presented_key_is_stored(tenant) -> None:
    """Nothing of the presented key but its (public) prefix is stored."""
    key = wrong_key()
    APIClient().get("/api/v1/markets/", tenant.params(key), REMOTE_ADDR=ADDRESS)

    stored = json.dumps(list(AuthFailureWindow.objects.values("subject", "failures")))
    assert key[11:] not in stored and prefix(key) in stored
