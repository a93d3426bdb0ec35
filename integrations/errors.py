"""What a runtime-integration call raises (``integrations.runtime.call``), mapped to JSON error bodies by
``core.errors``: the POS endpoints, gift cards and customer accounts catch ``IntegrationFailed``.

Its own module so that the answer checks (``integrations.bodies.answers``) and the callers above integrations can name
the errors without importing the HTTP machinery.
"""

from __future__ import annotations

from core.errors import NotFound, ServiceError


class NotConfigured(NotFound):
    code = "not_configured"


def not_configured(kind: str) -> NotConfigured:
    """The error of a call of ``kind`` in an account with no enabled integration of that kind."""
    label = kind.replace("giftcard", "gift card").replace("_", " ")
    return NotConfigured(f"No {label} integration is configured for this account.", field="kind")


class IntegrationFailed(ServiceError):
    """The integrator could not give an answer: refused connection, non-2xx, not JSON, refused address."""

    status_code = 502
    code = "integration_failed"

    def __init__(self, message: str, *, upstream_status: int | None = None, field: str | None = None) -> None:
        super().__init__(message, field=field)
        self.upstream_status = upstream_status


class IntegrationTimeout(IntegrationFailed):
    status_code = 504
    code = "integration_timeout"


class IntegrationNotCalled(IntegrationFailed):
    """The call was not made: the POS request's time for integrator calls (``core.budget``) was spent, or the
    integrator's circuit breaker is open (``core.breaker``: it failed repeatedly, and is left alone for a cool-down).
    A 504 like a timeout, but nothing reached the integrator, so a payment that was not called certainly did not
    happen."""

    status_code = 504
    code = "integration_not_called"


class BadAnswer(IntegrationFailed):
    """A 2xx JSON answer that does not have the spec model's shape; ``field`` names the first bad field."""

    code = "bad_answer"
