"""Calling an account's runtime integrations (spec: Endpoints B, Runtime integrations).

THE CONTRACT between the parts of the runtime-integrations issue (the foundation fills the bodies in; the POS
endpoints, gift cards and customer accounts call ``call`` and catch ``IntegrationFailed``):

* ``call(account=, kind=, values=)`` finds the account's enabled configuration of ``kind`` (``NotConfigured``, a
  404, when there is none), renders its URL, query, headers and body templates with ``values`` (placeholders such
  as ``{search_term}``), sends the request through the SSRF guard (``integrations.outbound``) with the
  configuration's timeout, redirects not followed, TLS verified, logs the call (kind, status, duration, error;
  never secrets), parses the JSON answer, applies the configuration's ``transform`` and returns the result.
* Anything short of a 2xx JSON answer raises ``IntegrationFailed`` (a 502 to the POS; ``IntegrationTimeout``, a
  504, for a timeout), with a message a cashier can act on and the upstream status when there was one. Callers
  validate the shape of the result themselves (each kind has its spec model) and raise ``BadAnswer`` (502) naming
  the field.
* The timeout covers the whole call, the answer to its last byte. While a POS request is served (``core.budget``)
  a call gets at most what is left of the request's ``POS_INTEGRATION_BUDGET_SECONDS``; with nothing left it is
  not made (``IntegrationNotCalled``, a 504). Nor is it while the integrator's circuit breaker is open (it failed
  ``BREAKER_FAILURE_THRESHOLD`` times in a row: ``core.breaker``): the same 504, at once.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from accounts.models import Account
from core.errors import NotFound, ServiceError

# The kinds of runtime integration (the field ``kind``, admin and REST alike), with the placeholders each one's
# templates may use (documented in the README and the admin help text).
KINDS: dict[str, tuple[str, ...]] = {
    "product_search": ("search_term", "market", "currency_code", "shop_id", "limit"),
    "product_lookup": ("barcode", "market", "currency_code", "shop_id"),
    "customer_lookup": ("search_term", "market", "shop_id"),
    "customer_discounts": ("customer_id", "market", "currency_code"),
    "shipping_options": (
        "shop_id",
        "currency_code",
        "market",
        "name",
        "street",
        "city",
        "postal_code",
        "country",
        "country_code",
        "email",
        "phone",
    ),
    "giftcard_create": ("amount", "currency_code", "shop_id", "market"),
    "giftcard_activate": ("code", "id", "amount", "currency_code", "shop_id", "sale_id"),
    "giftcard_read": ("code", "currency_code", "shop_id"),
    "giftcard_pay": ("code", "id", "amount", "currency_code", "shop_id", "sale_id"),
    "customer_account_read": ("customer_id", "currency_code", "shop_id"),
    "customer_account_pay": ("customer_id", "amount", "currency_code", "purchase_amount", "payment_type", "shop_id"),
}


class NotConfigured(NotFound):
    code = "not_configured"


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


@dataclass(frozen=True)
class CallResult:
    data: Any  # the parsed JSON answer after the configuration's transform
    status_code: int
    duration_ms: int


def call(
    *,
    account: Account,
    kind: str,
    values: Mapping[str, Any],
    integration: RuntimeIntegration | None = None,
) -> CallResult:
    """Call the account's ``kind`` integration with these placeholder values (see the module docstring).

    ``integration`` (optional) is a configuration to use instead of the enabled one of ``kind`` (the "test this
    integration" action; it must belong to ``account``). On a failure the exception also carries ``answer``:
    the integrator's parsed JSON error body when there was one (e.g. ``{"error": "insufficient balance"}``).

    Call it outside your own ``transaction.atomic()``: a database transaction must not stay open while an
    integrator is slow, and the call-log row written here is lost with a rolled-back transaction.
    """
    from integrations import runtime

    if integration is None:
        integration = runtime.configuration(account=account, kind=kind)
    elif integration.account_id != account.pk:
        raise NotConfigured(f"No {kind} integration is configured for this account.", field="kind")
    return runtime.perform(account=account, integration=integration, values=values)


if TYPE_CHECKING:
    from integrations.models import RuntimeIntegration
