"""A time budget for the outgoing calls made while serving one request.

A POS request may call integrators (customer discounts while pricing a basket, a gift card read, a payment);
a dead integrator must not hold the web worker for its own timeout (up to 30 s). The view opens a budget
(``limit(seconds)``) for the request; the outgoing client asks it for each call (``current().grant(timeout)``)
and gets at most what is left, for the whole call: connecting, sending and the answer. When nothing is left the
call is not made. Without an open budget (a Celery task, the admin) a call gets its own timeout.

The budget lives in a context variable, so each request (each thread of a threaded worker) has its own. A
budget opened inside another never outlasts it. ``Budget.grants`` records what each call was granted, in
order, so that tests and the call log can say what a call was allowed.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ("Budget", "current", "limit")


@dataclass
class Budget:
    """``seconds`` from ``started`` (``time.monotonic()``) for the outgoing calls of one request."""

    seconds: float
    started: float
    grants: list[float] = field(default_factory=list)

    @property
    def deadline(self) -> float:
        return self.started + self.seconds

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def grant(self, timeout: float) -> float:
        """The time a call whose own limit is ``timeout`` may take now: the smaller of the two (recorded)."""
        granted = min(timeout, self.remaining())
        self.grants.append(granted)
        return granted


_current: ContextVar[Budget | None] = ContextVar("outgoing_call_budget", default=None)


def current() -> Budget | None:
    """The budget of the request being served, or None outside one."""
    return _current.get()


@contextmanager
def limit(seconds: float) -> Iterator[Budget]:
    """Open a budget of ``seconds`` for the calls made inside the block (never beyond an enclosing budget)."""
    now = time.monotonic()
    outer = _current.get()
    if outer is not None:
        seconds = min(seconds, outer.deadline - now)
    budget = Budget(seconds=max(0.0, seconds), started=now)
    token = _current.set(budget)
    try:
        yield budget
    finally:
        _current.reset(token)
