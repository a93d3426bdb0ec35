"""Calling an account's runtime integrations (spec: Endpoints B, Runtime integrations).

``call`` renders the request, sends it through the SSRF guard, logs it, parses and transforms the answer. The
POS endpoints, gift cards and customer accounts call it and catch ``IntegrationFailed`` (``integrations.errors``):

* ``call(account=, kind=, values=)`` finds the account's enabled configuration of ``kind`` (``NotConfigured``, a
  404, when there is none; a process uses one it has read for ``INTEGRATION_CONFIG_MEMO_SECONDS``), renders its
  URL, query, headers and body templates with ``values`` (placeholders such as ``{search_term}``), sends the
  request through the SSRF guard (``core.outbound``) with the configuration's timeout, redirects not followed,
  TLS verified, logs the call (kind, status, duration, error; never secrets; the row is written after the answer
  by ``integrations.call_log``), parses the JSON answer, applies the configuration's ``transform`` and returns
  the result.
* Anything short of a 2xx JSON answer raises ``IntegrationFailed`` (a 502 to the POS; ``IntegrationTimeout``, a
  504, for a timeout), with a message a cashier can act on and the upstream status when there was one. Callers
  validate the shape of the result themselves (each kind has its spec model) and raise ``BadAnswer`` (502) naming
  the field.
* The timeout covers the whole call, the answer to its last byte. While a POS request is served (``core.budget``)
  a call gets at most what is left of the request's ``POS_INTEGRATION_BUDGET_SECONDS``; with nothing left it is
  not made (``IntegrationNotCalled``, a 504). Nor is it while the integrator's circuit breaker is open (it failed
  ``BREAKER_FAILURE_THRESHOLD`` times in a row: ``core.breaker``): the same 504, at once.

Calls go through the one outbound-call lifecycle (``core.calls.guarded_call``: breaker, deadline, send, classify,
record; ``perform`` keeps the cashier's messages and the call log) and the one outbound client
(``core.outbound``): its guard (plain http only inside
``OUTBOUND_ALLOWED_NETWORKS``, judged by the connection on the address it connects to), its error mapping
(``classify``; ``_message`` words each failure for the cashier) and its timeout policy (``timeouts``). Each
configuration gets its own guarded ``requests`` session (a connection pool kept alive to the integrator), cached
per process (the ``MAX_SESSIONS`` most recently used) and rebuilt when the configuration changes (``updated_at``).

A call's time limit is its configuration's timeout or, while a POS request is served, at most what is left of
that request's budget (``core.budget``, ``POS_INTEGRATION_BUDGET_SECONDS``), as ``core.outbound.timeouts``
decides; with less than ``MIN_CALL_SECONDS`` left the call is not made. The limit holds for the whole exchange,
connecting to the last byte of the answer (``core.deadline``), not only for each read.

Each call goes through its destination's circuit breaker (``core.breaker``; the key is the account and the
rendered URL's ``scheme://host:port``, apart from the breaker of the account's exports to that host: a call cut
short by the POS budget counts as a timeout here, and an integrator merely slower than the POS budget must not
pause the exports). While it is open the call is not made: ``IntegrationNotCalled`` (504), at once, as for a
spent budget. Timeouts, refused or dropped connections, a cut-off answer and 5xx answers count as the
destination's failures; any other answer shows it is up.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Any, NoReturn

import jmespath
import jmespath.exceptions
import jmespath.functions
import requests
from django.conf import settings

from accounts.models import Account
from core import breaker, calls, jsonparse, outbound
from core.errors import ServiceError
from core.jsonenc import DecimalJSONEncoder
from core.secrets import hidden, integration_secrets, redact, redact_data
from integrations import call_log, selectors, templates
from integrations.errors import (
    IntegrationFailed,
    IntegrationNotCalled,
    IntegrationTimeout,
    NotConfigured,
    not_configured,
)
from integrations.models import IntegrationCall, RuntimeIntegration

logger = logging.getLogger(__name__)

# An answer larger than this is refused: every kind's answer is a handful of objects (a search is a page).
MAX_ANSWER_BYTES = 2 * 1024 * 1024


@dataclass(frozen=True)
class CallResult:
    data: Any  # the parsed JSON answer after the configuration's transform
    status_code: int
    duration_ms: int


@dataclass(frozen=True)
class Rendered:
    method: str
    url: str
    params: dict[str, str]
    headers: dict[str, str]
    body: bytes | None
    secrets: list[str]


def call(
    *,
    account: Account,
    kind: str,
    integration: RuntimeIntegration | None = None,
    values: Mapping[str, Any],
) -> CallResult:
    """Call the account's ``kind`` integration with these placeholder values (see the module docstring).

    ``integration`` (optional) is a configuration to use instead of the enabled one of ``kind`` (the "test this
    integration" action; it must belong to ``account``). On a failure the exception also carries ``answer``:
    the integrator's parsed JSON error body when there was one (e.g. ``{"error": "insufficient balance"}``).

    Call it outside your own ``transaction.atomic()``: a database transaction must not stay open while an
    integrator is slow, and inside one the call-log row is written in it, and lost with it if it rolls back.
    """
    if integration is None:
        integration = configuration(account=account, kind=kind)
    elif integration.account_id != account.pk:
        raise NotConfigured(f"No {kind} integration is configured for this account.", field="kind")
    return perform(account=account, integration=integration, values=values)


def configuration(*, account: Account, kind: str) -> RuntimeIntegration:
    """The account's enabled configuration of ``kind``, as this process read it at most
    ``INTEGRATION_CONFIG_MEMO_SECONDS`` ago (shared by its threads: read it, never change it)."""
    key = (account.pk, kind)
    seconds = float(settings.INTEGRATION_CONFIG_MEMO_SECONDS)
    now = time.monotonic()
    with _configurations_lock:
        memo = _configurations.get(key)
    if memo is not None and memo[0] > now and seconds > 0:
        return memo[1]
    integration = selectors.enabled_integration(account=account, kind=kind)
    if integration is None:
        raise not_configured(kind)
    if seconds > 0:
        with _configurations_lock:
            if len(_configurations) >= _MAX_CONFIGURATIONS:
                for stale in [k for k, (expiry, _) in _configurations.items() if expiry <= now]:
                    del _configurations[stale]
            _configurations[key] = (now + seconds, integration)
    return integration


# (account id, kind) -> (monotonic expiry, configuration): ``configuration``'s memo. Not having been configured is
# not remembered: a new configuration is used by the next call.
_configurations: dict[tuple[int, str], tuple[float, RuntimeIntegration]] = {}
_configurations_lock = threading.Lock()
_MAX_CONFIGURATIONS = 1024  # past this, expired entries are dropped


def forget_configurations(*, account: Account | None = None) -> None:
    """Read the configurations (of ``account``, or all) afresh on their next call: one was saved or deleted."""
    with _configurations_lock:
        if account is None:
            _configurations.clear()
            return
        for key in [key for key in _configurations if key[0] == account.pk]:
            del _configurations[key]


def render(integration: RuntimeIntegration, values: Mapping[str, Any]) -> Rendered:
    """The request of ``integration`` for these placeholder values."""
    params = {name: templates.render(str(value), values) for name, value in (integration.query or {}).items()}
    headers = {name: templates.render(str(value), values) for name, value in (integration.headers or {}).items()}
    body = None
    rendered_body = None
    if integration.body is not None:
        rendered_body = templates.render_body(integration.body, values)
        body = json.dumps(rendered_body, cls=DecimalJSONEncoder, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json", **headers}
    headers.setdefault("Accept", "application/json")
    url = templates.render_url(integration.url, values)
    secrets = integration_secrets(
        url=integration.url,
        query=integration.query,
        headers=integration.headers,
        body=integration.body,
        secret_fields=integration.secret_fields,
        rendered={"url": url, "query": params, "headers": headers, "body": rendered_body},
    )
    return Rendered(integration.method, url, params, headers, body, secrets)


# Less than this left of a budget is no time for a call (the smallest timeout a configuration may have).
MIN_CALL_SECONDS = 0.1


def time_limit(integration: RuntimeIntegration) -> outbound.Timeouts:
    """How long one call may take (``core.outbound.timeouts``): its configuration's timeout, for connecting, for
    each read and for the whole call, or less: what is left of the POS request's budget (``core.budget``)."""
    own = float(integration.timeout)
    return outbound.timeouts(connect=own, read=own, total=own)


def _timed_out(limit: outbound.Timeouts) -> IntegrationTimeout:
    cut = f" (what was left of the POS request's {limit.budget_seconds:g} s)" if limit.budget_seconds else ""
    return IntegrationTimeout(f"the integrator did not answer within {limit.total:g} s{cut}")


def breaker_target(account: Account, url: str) -> breaker.Endpoint | None:
    """The circuit breakers of the integrator's endpoint at ``url`` (the configuration's URL template: the
    placeholders a call fills in, a gift card's code, do not make another endpoint) and of the account's
    connections to its host; None: no host to key on. Another integration of the account on the same host has its
    own endpoint breaker: its answers never cut this one off."""
    return breaker.target(account_id=account.pk, endpoint=url, use="calls")


def breaker_key(account: Account, url: str) -> str | None:
    """The breaker key of the integrator's endpoint at ``url`` (see ``breaker_target``)."""
    target = breaker_target(account, url)
    return target.key if target is not None else None


def _destination_failed(exc: IntegrationFailed) -> bool:
    """A failure of the integrator's server itself (not a refusal of this request, not our configuration)."""
    return (
        isinstance(exc, IntegrationTimeout)
        or bool(getattr(exc, "unreachable", False))
        or (exc.upstream_status or 0) >= 500
    )


def perform(*, account: Account, integration: RuntimeIntegration, values: Mapping[str, Any]) -> CallResult:
    """One call through the outbound-call lifecycle (``core.calls.guarded_call``: the breaker, the deadline, the
    error mapping, the breaker's verdict); the cashier's messages, the redaction and the call log are kept here."""
    request = render(integration, values)
    limit = time_limit(integration)
    target = breaker_target(account, integration.url)
    exchange = _Exchange(integration, request, limit)
    started = time.perf_counter()
    try:
        if limit.total < MIN_CALL_SECONDS:
            assert limit.budget_seconds is not None  # an own timeout is at least MIN_CALL_SECONDS
            raise IntegrationNotCalled(
                f"not called: the POS request's {limit.budget_seconds:g} s for integrator calls are spent"
            )
        outcome = calls.guarded_call(
            target,
            exchange.send,
            settle=exchange.settle,
            seconds=limit.total,  # one deadline for the whole exchange: requests' timeouts are per operation
            failed=exchange.failed,
            verdict_of=exchange.verdict_of,
        )
        if isinstance(outcome, calls.Paused):
            raise _not_called(outcome, request.url)
    except IntegrationFailed as exc:
        exc.message = redact(exc.message, request.secrets)
        exc.args = (exc.message,)
        if getattr(exc, "answer", None) is not None:
            exc.answer = redact_data(exc.answer, request.secrets)  # type: ignore[attr-defined]
        _log(account, integration, ok=False, status=exchange.status, started=started, error=exc.message)
        raise
    assert exchange.status is not None  # settled: the answer was read
    duration_ms = _log(account, integration, ok=True, status=exchange.status, started=started, error="")
    return CallResult(data=outcome, status_code=exchange.status, duration_ms=duration_ms)


def _not_called(paused: calls.Paused, url: str) -> IntegrationNotCalled:
    """The call the open breaker stopped, in the cashier's words."""
    until = paused.retry_at.strftime("%H:%M:%S UTC") if paused.retry_at else "a moment"
    what = "connections to the integrator at" if paused.host_refused else "the integrator's endpoint at"
    return IntegrationNotCalled(
        f"not called: {what} {breaker.origin(url)} failed {paused.failures} times in a row "
        f"(circuit breaker open); it is tried again after {until}"
    )


class _Exchange:
    """What ``perform`` hands the call lifecycle: how to send, word a failure, read the answer and judge it."""

    __slots__ = ("integration", "limit", "request", "status")

    def __init__(self, integration: RuntimeIntegration, request: Rendered, limit: outbound.Timeouts) -> None:
        self.integration = integration
        self.request = request
        self.limit = limit
        self.status: int | None = None  # the answer's status, once read

    def send(self, call: calls.Call) -> tuple[requests.Response, bytes]:
        response = _send(self.integration, self.request, self.limit.read)
        self.status = response.status_code
        call.answering = True
        return response, outbound.read_answer(response, MAX_ANSWER_BYTES)

    def failed(self, failure: outbound.Failure) -> NoReturn:
        """A call that failed before its answer was whole: IntegrationTimeout (a 504) or IntegrationFailed."""
        if failure.kind == outbound.FailureKind.TIMEOUT:
            timed_out = _timed_out(self.limit)
            timed_out.connecting = failure.connecting  # type: ignore[attr-defined]
            raise timed_out from None
        _fail(
            _message(failure),
            status=self.status or failure.status,
            unreachable=failure.unreachable,
            connecting=failure.connecting,
        )

    def settle(self, answer: tuple[requests.Response, bytes]) -> tuple[Any, calls.Verdict]:
        """The answer parsed and transformed (IntegrationFailed when it is refused); it shows the integrator is up."""
        response, content = answer
        data = _parse(response, content, self.request.secrets)
        return _transform(self.integration.transform, data), calls.UP

    def verdict_of(self, exc: BaseException) -> calls.Verdict | None:
        """What a failed call says of the integrator; None (no verdict) for anything but IntegrationFailed."""
        if not isinstance(exc, IntegrationFailed):
            return None
        return calls.Verdict(
            failed=_destination_failed(exc),
            connecting=bool(getattr(exc, "connecting", False)),
            error=redact(exc.message, self.request.secrets),
        )


# --- sending ----------------------------------------------------------------------------------------------

# The sessions a process keeps, the most recently used: a process serving many tenants does not hold a pool of
# kept-alive connections for every configuration it ever called (nor for deleted ones) until it ends.
MAX_SESSIONS = 256
_sessions: OrderedDict[int, tuple[Any, requests.Session]] = OrderedDict()
_sessions_lock = threading.Lock()


def session_for(integration: RuntimeIntegration) -> requests.Session:
    """The configuration's own guarded session; a changed configuration (``updated_at``) gets a new one. The
    least recently used one is closed when more than ``MAX_SESSIONS`` are kept."""
    closed: list[requests.Session] = []
    with _sessions_lock:
        cached = _sessions.get(integration.pk)
        if cached is not None and cached[0] == integration.updated_at:
            _sessions.move_to_end(integration.pk)
            return cached[1]
        session = outbound.http_session()
        _sessions[integration.pk] = (integration.updated_at, session)
        _sessions.move_to_end(integration.pk)
        if cached is not None:
            closed.append(cached[1])
        while len(_sessions) > MAX_SESSIONS:
            closed.append(_sessions.popitem(last=False)[1][1])
    for old in closed:  # a call still using it finishes on its connection, which is then dropped
        old.close()
    return session


def _send(integration: RuntimeIntegration, request: Rendered, timeout: float) -> requests.Response:
    # Plain http only inside OUTBOUND_ALLOWED_NETWORKS (secrets in headers must not cross the internet in clear
    # text): the guarded connection judges it on the address it connects to, as for web hook exports.
    with hidden(request.secrets):
        return session_for(integration).request(
            request.method,
            request.url,
            params=request.params or None,
            headers=request.headers,
            data=request.body,
            timeout=(timeout, timeout),  # connecting and each read (time_limit: both are the call's time)
            allow_redirects=False,
            verify=True,
            stream=True,
        )


def _message(failure: outbound.Failure) -> str:
    """What the cashier reads for a call that failed before its answer was whole (``core.outbound.classify``)."""
    if failure.kind == outbound.FailureKind.REFUSED:
        return f"the integrator's address is refused: {failure.detail}"
    if failure.kind == outbound.FailureKind.TOO_LARGE:
        return f"the integrator's answer is larger than {MAX_ANSWER_BYTES // 1024 // 1024} MB"
    if failure.kind == outbound.FailureKind.REDIRECT:
        return f"the integrator answered with a redirect (HTTP {failure.status}), which is not followed"
    if failure.kind == outbound.FailureKind.REQUEST:
        return f"the request to the integrator failed ({failure.detail})"
    return _MESSAGES[failure.kind]


_MESSAGES = {
    outbound.FailureKind.TLS: "the integrator's TLS certificate could not be verified",
    outbound.FailureKind.CONNECTION_REFUSED: "the integrator refused the connection (is its server running?)",
    outbound.FailureKind.DROPPED: "the integrator closed the connection without an answer",
    outbound.FailureKind.CONNECTION: "could not connect to the integrator",
    outbound.FailureKind.CUT_OFF: "the integrator's answer was cut off",
}


def _fail(
    message: str, *, status: int | None = None, answer: Any = None, unreachable: bool = False, connecting: bool = False
) -> NoReturn:
    exc = IntegrationFailed(message, upstream_status=status)
    exc.answer = answer  # type: ignore[attr-defined]
    exc.unreachable = unreachable  # type: ignore[attr-defined]  # counts towards the circuit breaker
    exc.connecting = connecting  # type: ignore[attr-defined]  # no connection: the host's breaker counts it
    raise exc


# --- reading the answer -----------------------------------------------------------------------------------


def _parse(response: requests.Response, content: bytes, secrets: list[str]) -> Any:
    status = response.status_code
    data: Any = None
    problems: list[jsonparse.Problem] = []
    parsed = True
    try:
        # The same bounded parser as every request body: no number or string in an answer can stall or crash us.
        result = jsonparse.parse(content)
        data, problems = result.value, result.problems
    except ServiceError:
        parsed = False
    if 300 <= status < 400:
        _fail(f"the integrator answered with a redirect (HTTP {status}), which is not followed", status=status)
    if not 200 <= status < 300:
        # Redacted before it is cut short, so that no part of a secret the integrator echoes is left.
        detail = _error_detail(redact_data(data, secrets)) if parsed else None
        message = f"the integrator answered HTTP {status}" + (f": {detail}" if detail else "")
        _fail(message, status=status, answer=data if parsed else None)
    if not parsed:
        kind = "HTML" if content.lstrip()[:1] == b"<" else "empty" if not content.strip() else "not JSON"
        _fail(f"the integrator's answer is not JSON ({kind})", status=status)
    if problems:
        first = problems[0]
        _fail(f"the integrator's answer is refused: {first.field_name(root='answer')} {first.message}", status=status)
    return data


def _error_detail(data: Any) -> str | None:
    """The integrator's own short error message, for the cashier (``message``/``error``/``detail``)."""
    if isinstance(data, dict):
        for key in ("message", "error", "detail", "error_description"):
            value = data.get(key)
            if isinstance(value, str) and value.strip():
                return value.strip()[:200]
    return None


class _DecimalFunctions(jmespath.functions.Functions):
    """JMESPath's functions taking Decimal (answers are parsed with Decimal) as a number."""

    def _get_allowed_pytypes(self, types: Any) -> Any:
        allowed, subtypes = super()._get_allowed_pytypes(types)
        if "float" in allowed:
            allowed = [*allowed, "Decimal"]
        return allowed, [(*sub, "Decimal") if "float" in sub else sub for sub in subtypes]

    def _convert_to_jmespath_type(self, pyobject: Any) -> Any:
        return "number" if pyobject == "Decimal" else super()._convert_to_jmespath_type(pyobject)

    def _func_type(self, arg: Any) -> Any:
        return "number" if isinstance(arg, Decimal) else super()._func_type(arg)


_OPTIONS = jmespath.Options(custom_functions=_DecimalFunctions())


@lru_cache(maxsize=256)
def compile_transform(expression: str) -> Any:
    return jmespath.compile(expression)


def _transform(expression: str, data: Any) -> Any:
    if not expression.strip():
        return data
    try:
        return compile_transform(expression).search(data, options=_OPTIONS)
    except (jmespath.exceptions.JMESPathError, TypeError, ValueError, ArithmeticError) as exc:
        _fail(f"the transform could not be applied to the integrator's answer: {exc}")


# --- the call log -----------------------------------------------------------------------------------------


def _log(
    account: Account, integration: RuntimeIntegration, *, ok: bool, status: int | None, started: float, error: str
) -> int:
    duration_ms = round((time.perf_counter() - started) * 1000)
    # Written after the answer by the process's call-log writer (``integrations.call_log``), not on this path.
    call_log.record(
        IntegrationCall(
            account_id=account.pk,  # ids, not the instances: either may be deleted before the row is written
            integration_id=integration.pk,
            kind=integration.kind,
            ok=ok,
            status_code=status,
            duration_ms=duration_ms,
            error=error[:1000],
        )
    )
    if ok:
        logger.info("runtime integration %s: HTTP %s in %s ms", integration.kind, status, duration_ms)
    else:
        logger.warning("runtime integration %s failed in %s ms: %s", integration.kind, duration_ms, error)
    return duration_ms
