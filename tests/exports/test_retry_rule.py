"""The spec's retry rule (Events, Outcome and retry rule 2)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from exports.retry import retry_delay


def delay(**overrides: object) -> timedelta | None:
    args: dict[str, object] = {
        "trigger": "realtime",
        "delivery_type": "webhook",
        "retryable": True,
        "attempts": 1,
        "base_delay": 10,
    }
    args.update(overrides)
    return retry_delay(**args)  # type: ignore[arg-type]


@pytest.mark.parametrize(("attempts", "seconds"), [(1, 10), (2, 20), (3, 40), (4, 80)])
def test_a_retryable_realtime_web_hook_failure_is_retried_with_doubling_delays(attempts, seconds):
    assert delay(attempts=attempts) == timedelta(seconds=seconds)


def test_the_fifth_attempt_is_the_last():
    assert delay(attempts=5) is None


@pytest.mark.parametrize(
    "overrides",
    [
        {"trigger": "hourly"},
        {"trigger": "daily"},
        {"delivery_type": "ftp"},
        {"delivery_type": "email"},
        {"retryable": False},
    ],
)
def test_nothing_else_is_retried_automatically(overrides):
    assert delay(**overrides) is None
