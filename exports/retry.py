"""The spec's retry rule (Events, Outcome and retry rule 2), as one pure function."""

from __future__ import annotations

from datetime import timedelta

MAX_ATTEMPTS = 5  # in total, including the first


def retry_delay(
    *, trigger: str, delivery_type: str, retryable: bool, attempts: int, base_delay: float
) -> timedelta | None:
    """When to try again, or None for a final outcome.

    Only a real-time web hook delivery is retried, only for a retryable failure (503, 522, 524, a
    timeout, a refused connection), up to 5 attempts in all; the delay doubles from ``base_delay``.
    """
    if trigger != "realtime" or delivery_type != "webhook" or not retryable or attempts >= MAX_ATTEMPTS:
        return None
    return timedelta(seconds=base_delay * 2 ** (attempts - 1))
