"""Waiting for a condition, never for a fixed time."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

POLL_INTERVAL_SECONDS = 0.05


def wait_until(condition: Callable[[], T], timeout: float = 30.0, *, message: str = "") -> T:
    """Call ``condition`` until it returns something truthy and return that; fail after ``timeout`` seconds.

    The condition usually queries the database: in a ``transaction=True`` test every query sees what
    other processes (the live server, the Celery worker) have committed.
    """
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() >= deadline:
            what = message or getattr(condition, "__name__", repr(condition))
            raise AssertionError(f"timed out after {timeout:g}s waiting for {what}; last value: {value!r}")
        time.sleep(POLL_INTERVAL_SECONDS)
