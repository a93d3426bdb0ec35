"""Outgoing calls in tests: the fixture ``allow_loopback`` lets them reach servers on 127.0.0.1 (the receivers,
the reference integrator, the file and mail servers), which ``OUTBOUND_ALLOWED_NETWORKS`` refuses otherwise
(registered for every test by the root conftest); ``breaker_settings`` sets the circuit breakers up for a test;
``cool_down_over`` ends every breaker's cool-down."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from core.models import CircuitBreaker

LOOPBACK_NETWORKS = ["127.0.0.1/32"]


@pytest.fixture
def allow_loopback(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = list(LOOPBACK_NETWORKS)


def breaker_settings(settings: Any, *, failures: int) -> None:
    """Circuit breakers that open after ``failures`` failures in a row, for 30 s (doubling up to 100 s); a half-open
    trial call may take 60 s; a closed breaker is read again at every call (no memo)."""
    settings.BREAKER_FAILURE_THRESHOLD = failures
    settings.BREAKER_COOLDOWN_SECONDS = 30
    settings.BREAKER_MAX_COOLDOWN_SECONDS = 100
    settings.BREAKER_TRIAL_SECONDS = 60
    settings.BREAKER_MEMO_SECONDS = 0


def cool_down_over() -> None:
    """Every open circuit breaker's cool-down has run out: its next call is the half-open trial."""
    CircuitBreaker.objects.update(open_until=timezone.now() - timedelta(seconds=1))
