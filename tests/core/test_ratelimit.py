"""core.ratelimit: fixed windows per subject in the database, counted against every subject of a request."""

from __future__ import annotations

from datetime import timedelta

import pytest
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
