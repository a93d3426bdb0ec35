"""core.breaker: a circuit breaker per endpoint (and one for the connections to its host), its state shared by
every process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from core import breaker
from core.models import BreakerState, CircuitBreaker
from tests.support.outbound import breaker_settings

KEY = "acct:1|https://erp.example.com:443"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    breaker_settings(settings, failures=3)


def fail(times: int, key: str = KEY) -> None:
    for _ in range(times):
        breaker.record_failure(key, error="timeout")


def cool_down_over(key: str = KEY) -> None:
    CircuitBreaker.objects.filter(key=key).update(open_until=timezone.now() - timedelta(seconds=1))


@pytest.mark.django_db
def test_a_destination_never_failed_is_allowed_without_a_row() -> None:
    assert breaker.allow(KEY).allowed
    assert not CircuitBreaker.objects.exists()


@pytest.mark.django_db
def test_failures_below_the_threshold_keep_it_closed() -> None:
    fail(2)
    assert breaker.allow(KEY).allowed
    assert breaker.state_of(KEY).state == BreakerState.CLOSED  # type: ignore[union-attr]


@pytest.mark.django_db
def test_a_success_resets_the_count_of_failures_in_a_row() -> None:
    fail(2)
    breaker.record_success(KEY)
    fail(2)
    assert breaker.allow(KEY).allowed


@pytest.mark.django_db
def test_threshold_failures_in_a_row_open_it_until_the_cool_down_ends() -> None:
    before = timezone.now()
    fail(3)
    decision = breaker.allow(KEY)
    assert not decision.allowed
    assert decision.retry_at is not None
    assert before + timedelta(seconds=30) <= decision.retry_at <= timezone.now() + timedelta(seconds=30)


@pytest.mark.django_db
def test_after_the_cool_down_one_trial_call_is_allowed_and_the_next_caller_waits() -> None:
    fail(3)
    cool_down_over()
    first = breaker.allow(KEY)
    second = breaker.allow(KEY)
    assert first.allowed and first.trial
    assert not second.allowed and second.retry_at is not None
    assert breaker.state_of(KEY).state == BreakerState.HALF_OPEN  # type: ignore[union-attr]


@pytest.mark.django_db
def test_a_successful_trial_closes_it() -> None:
    fail(3)
    cool_down_over()
    assert breaker.allow(KEY).trial
    breaker.record_success(KEY)
    state = breaker.state_of(KEY)
    assert state is not None and state.state == BreakerState.CLOSED and state.failures == 0
    assert state.failing_since is None
    assert breaker.allow(KEY).allowed


@pytest.mark.django_db
def test_a_failed_trial_opens_it_again_for_a_longer_cool_down() -> None:
    fail(3)
    cool_down_over()
    assert breaker.allow(KEY).trial
    before = timezone.now()
    fail(1)
    decision = breaker.allow(KEY)
    assert not decision.allowed and decision.retry_at is not None
    assert decision.retry_at >= before + timedelta(seconds=60)  # 30 s doubled
    assert breaker.state_of(KEY).trips == 2  # type: ignore[union-attr]


def test_the_cool_down_doubles_up_to_its_maximum(settings: Any) -> None:
    settings.BREAKER_COOLDOWN_SECONDS = 30
    settings.BREAKER_MAX_COOLDOWN_SECONDS = 100
    assert [breaker.cooldown(n).total_seconds() for n in (1, 2, 3, 4)] == [30, 60, 100, 100]


@pytest.mark.django_db
def test_a_trial_whose_process_died_is_given_again_after_its_lease() -> None:
    fail(3)
    cool_down_over()
    assert breaker.allow(KEY).trial
    assert not breaker.allow(KEY).allowed
    CircuitBreaker.objects.filter(key=KEY).update(trial_until=timezone.now() - timedelta(seconds=1))
    assert breaker.allow(KEY).trial


@pytest.mark.django_db
def test_breakers_of_different_destinations_are_apart() -> None:
    fail(3)
    assert not breaker.allow(KEY).allowed
    assert breaker.allow("acct:2|https://erp.example.com:443").allowed


@pytest.mark.django_db
def test_reset_closes_it() -> None:
    fail(3)
    assert breaker.reset(prefix="acct:1|") == 1
    assert breaker.allow(KEY).allowed


@pytest.mark.django_db
def test_a_closed_breaker_read_a_moment_ago_costs_no_query(settings: Any, django_assert_num_queries: Any) -> None:
    settings.BREAKER_MEMO_SECONDS = 60
    assert breaker.allow(KEY).allowed
    with django_assert_num_queries(0):
        for _ in range(10):
            assert breaker.allow(KEY).allowed
            breaker.record_success(KEY)


@pytest.mark.django_db
def test_a_failure_in_this_process_is_seen_at_once_despite_the_memo(settings: Any) -> None:
    settings.BREAKER_MEMO_SECONDS = 60
    assert breaker.allow(KEY).allowed
    fail(3)
    assert not breaker.allow(KEY).allowed


@pytest.mark.django_db(transaction=True)
def test_only_one_of_many_concurrent_callers_gets_the_trial() -> None:
    fail(3)
    cool_down_over()
    callers = 8
    start = threading.Barrier(callers)
    decisions: list[breaker.Decision] = []
    lock = threading.Lock()

    def ask() -> None:
        try:
            start.wait()
            decision = breaker.allow(KEY)
            with lock:
                decisions.append(decision)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=ask) for _ in range(callers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert len(decisions) == callers
    assert sum(d.allowed for d in decisions) == 1
    assert sum(d.trial for d in decisions) == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_failures_are_all_counted() -> None:
    threads = [threading.Thread(target=lambda: (fail(1), connections.close_all())) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    state = breaker.state_of(KEY)
    assert state is not None and state.failures == 6 and state.state == BreakerState.OPEN and state.trips == 1


OPEN_IT = """
import django, sys
django.setup()
from core import breaker
for _ in range(3):
    breaker.record_failure(sys.argv[1], error="timeout")
print(breaker.state_of(sys.argv[1]).state)
"""


@pytest.mark.django_db(transaction=True)
def test_a_breaker_opened_by_another_process_stops_this_one() -> None:
    """Every web and worker process shares the state: it is a row of the database."""
    env = {
        **os.environ,
        "DATABASE_NAME": connection.settings_dict["NAME"],
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "BREAKER_FAILURE_THRESHOLD": "3",
    }
    done = subprocess.run(
        [sys.executable, "-c", OPEN_IT, KEY], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0 and "open" in done.stdout, done.stderr
    assert not breaker.allow(KEY).allowed


@pytest.mark.django_db
def test_the_admin_lists_breakers_and_closes_one_by_hand(admin_client: Any) -> None:
    from django.urls import reverse

    fail(3)
    changelist = reverse("admin:core_circuitbreaker_changelist")
    assert KEY in admin_client.get(changelist).content.decode()
    response = admin_client.post(
        changelist,
        {"action": "close_breakers", "_selected_action": [str(CircuitBreaker.objects.get().pk)]},
        follow=True,
    )
    assert "Closed 1 circuit breaker(s)." in response.content.decode()
    assert breaker.allow(KEY).allowed


@pytest.mark.django_db
def test_peek_says_what_allow_would_without_claiming_the_trial() -> None:
    assert breaker.peek(KEY).allowed
    fail(3)
    assert not breaker.peek(KEY).allowed
    cool_down_over()
    assert breaker.peek(KEY).allowed
    assert breaker.peek(KEY).allowed  # nothing claimed
    assert breaker.allow(KEY).trial
    assert not breaker.peek(KEY).allowed  # the trial is running


@pytest.mark.django_db
def test_a_trial_released_without_a_verdict_is_given_again_at_once() -> None:
    fail(3)
    cool_down_over()
    assert breaker.allow(KEY).trial
    breaker.release(KEY)
    assert breaker.allow(KEY).trial


# --- Endpoints and the connections to their host --------------------------------------------------------------

HOOKS = "https://hooks.example.com"


def target(path: str, account_id: int = 1) -> breaker.Endpoint:
    found = breaker.target(account_id=account_id, endpoint=HOOKS + path)
    assert found is not None
    return found


def call(endpoint: breaker.Endpoint, *, failed: bool = True, connecting: bool = False) -> breaker.Ticket:
    ticket = breaker.ask(endpoint)
    if ticket.decision.allowed:
        breaker.report(endpoint, ticket, failed=failed, connecting=connecting, error="boom")
    return ticket


def test_endpoints_of_one_host_share_its_connections_breaker_only() -> None:
    orders, stock = target("/orders"), target("/stock")
    assert orders.key != stock.key and orders.host == stock.host
    assert orders.host != target("/orders", account_id=2).host  # per account
    assert breaker.target(account_id=1, endpoint="not a url") is None


@pytest.mark.django_db
def test_answers_of_one_endpoint_never_pause_another() -> None:
    orders, stock = target("/orders"), target("/stock")
    for _ in range(5):
        call(orders)  # a 5xx, a read timeout: the endpoint failed, the host answered

    assert not breaker.ask(orders).decision.allowed
    assert breaker.ask(stock).decision.allowed
    assert breaker.state_of(orders.host) is None  # the host's connections were never counted


@pytest.mark.django_db
def test_failures_to_connect_pause_every_endpoint_of_the_host_for_that_account() -> None:
    orders, stock = target("/orders"), target("/stock")
    for _ in range(3):
        call(orders, connecting=True)

    refused = breaker.ask(stock)
    assert not refused.decision.allowed and refused.host_refused
    assert breaker.ask(target("/stock", account_id=2)).decision.allowed
    assert breaker.state_of(orders.key) is None  # no verdict on the endpoint itself


@pytest.mark.django_db
def test_any_answer_resets_the_hosts_count_of_failures_to_connect() -> None:
    orders, stock = target("/orders"), target("/stock")
    call(orders, connecting=True)
    call(orders, connecting=True)
    call(stock)  # answered 503: the connection worked
    call(orders, connecting=True)

    assert breaker.ask(stock).decision.allowed


@pytest.mark.django_db
def test_a_host_trial_is_given_back_when_the_endpoint_itself_is_open() -> None:
    orders = target("/orders")
    fail(3, orders.key)
    fail(3, orders.host)
    cool_down_over(orders.host)

    ticket = breaker.ask(orders)

    assert not ticket.decision.allowed and not ticket.host_refused
    assert breaker.allow(orders.host).trial  # the next caller gets the host's trial at once


@pytest.mark.django_db
def test_a_failure_to_connect_during_an_endpoint_trial_gives_the_trial_back() -> None:
    orders = target("/orders")
    fail(3, orders.key)
    cool_down_over(orders.key)
    ticket = breaker.ask(orders)
    assert ticket.trials == (orders.key,)

    breaker.report(orders, ticket, failed=True, connecting=True, error="refused")

    assert breaker.state_of(orders.key).failures == 3  # type: ignore[union-attr]
    assert breaker.allow(orders.key).trial


@pytest.mark.django_db
def test_describe_names_the_endpoint_and_a_failing_host() -> None:
    orders = target("/orders")
    assert breaker.describe(orders) == f"closed: no failure since the last success (breaker {orders.key})"
    fail(1, orders.host)
    assert f"connections to the host: closed: 1 failure(s) in a row (last: timeout) (breaker {orders.host})" in (
        breaker.describe(orders)
    )
