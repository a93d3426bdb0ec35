"""core.ratelimit: fixed windows per subject in the database, counted against every subject of a request."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection, connections
from django.utils import timezone

from core import ratelimit
from core.models import RateWindow

pytestmark = pytest.mark.django_db


def test_requests_under_the_limit_are_counted_and_the_next_one_waits_for_the_window() -> None:
    assert [ratelimit.take([("s", 3)], window_seconds=60) for _ in range(3)] == [0, 0, 0]

    wait = ratelimit.take([("s", 3)], window_seconds=60)

    assert 1 <= wait <= 60
    assert RateWindow.objects.get(subject="s").count == 3  # a refused request is not counted


def test_a_subject_at_its_limit_refuses_without_counting_the_others() -> None:
    ratelimit.take([("key", 1)], window_seconds=60)

    assert ratelimit.take([("account", 10), ("key", 1)], window_seconds=60) > 0

    assert not RateWindow.objects.filter(subject="account").exists()


def test_each_subject_has_its_own_limit() -> None:
    for _ in range(2):
        assert ratelimit.take([("account", 2), ("key-a", 5)], window_seconds=60) == 0

    assert ratelimit.take([("account", 2), ("key-b", 5)], window_seconds=60) > 0


def test_a_window_that_is_over_starts_again_and_is_pruned() -> None:
    ratelimit.take([("s", 1)], window_seconds=60)
    ratelimit.take([("old", 1)], window_seconds=60)
    RateWindow.objects.update(window_ends_at=timezone.now() - timedelta(seconds=1))

    assert ratelimit.take([("s", 1)], window_seconds=60) == 0

    assert list(RateWindow.objects.values_list("subject", "count")) == [("s", 1)]


def test_a_limit_of_zero_is_no_limit() -> None:
    assert all(ratelimit.take([("s", 0)], window_seconds=60) == 0 for _ in range(5))
    assert not RateWindow.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_concurrent_requests_never_pass_the_limit_together() -> None:
    # Threads with their own connections stand for processes; on PostgreSQL they run at once.
    if connection.vendor != "postgresql":
        pytest.skip("SQLite writes one transaction at a time: nothing runs concurrently to race")
    start = threading.Barrier(12)
    outcomes: list[int] = []

    def request() -> None:
        try:
            start.wait()
            outcomes.append(ratelimit.take([("shared", 5)], window_seconds=60))
        finally:
            connections.close_all()

    threads = [threading.Thread(target=request) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    assert sorted(outcomes)[:5] == [0] * 5 and all(wait > 0 for wait in sorted(outcomes)[5:])
    assert RateWindow.objects.get(subject="shared").count == 5
