"""``core.calls``: the one lifecycle of an outbound call (breaker, deadline, send, classify, record)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any, NoReturn

import pytest
import requests
from django.utils import timezone

from core import breaker, calls, outbound
from core.models import BreakerState, CircuitBreaker
from tests.support.outbound import breaker_settings

ENDPOINT = "https://erp.example.com/hook"


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    breaker_settings(settings, failures=2)


@pytest.fixture
def target() -> breaker.Endpoint:
    found = breaker.target(account_id=1, endpoint=ENDPOINT)
    assert found is not None
    return found


def _up(value: str) -> tuple[str, calls.Verdict]:
    return value, calls.UP


def _down(value: str) -> tuple[str, calls.Verdict]:
    return value, calls.Verdict(failed=True, error=f"failed: {value}")


def _state(key: str) -> CircuitBreaker | None:
    return breaker.state_of(key)


@pytest.mark.django_db
def test_an_answer_is_settled_and_its_verdict_reported(target: breaker.Endpoint) -> None:
    for _ in range(2):
        assert calls.guarded_call(target, lambda call: "503", settle=_down) == "503"

    state = _state(target.key)
    assert state is not None and state.state == BreakerState.OPEN and state.last_error == "failed: 503"


@pytest.mark.django_db
def test_an_open_breaker_sends_nothing_and_says_until_when(target: breaker.Endpoint) -> None:
    for _ in range(2):
        breaker.record_failure(target.key, error="timeout")
    sent: list[calls.Call] = []

    def send(call: calls.Call) -> str:
        sent.append(call)
        return "sent"

    outcome = calls.guarded_call(target, send, settle=_up)

    assert isinstance(outcome, calls.Paused)
    assert sent == []
    assert (outcome.host_refused, outcome.failures) == (False, 2)
    assert outcome.retry_at is not None and outcome.retry_at > timezone.now()


@pytest.mark.django_db
def test_an_outbound_failure_is_classified_and_worded_by_the_caller(target: breaker.Endpoint) -> None:
    def send(call: calls.Call) -> str:
        raise requests.ConnectionError(ConnectionRefusedError(111, "refused"))

    def failed(failure: outbound.Failure) -> str:
        return f"{failure.kind}/{failure.connecting}"

    def settle(value: str) -> tuple[str, calls.Verdict]:
        return value, calls.Verdict(failed=True, connecting=True, error=value)

    outcome = calls.guarded_call(target, send, settle=settle, seconds=5, failed=failed)

    assert outcome == "connection_refused/True"
    host = _state(target.host)
    assert host is not None and host.failures == 1  # no connection: the host's breaker counts it
    assert _state(target.key) is None


@pytest.mark.django_db
def test_a_break_after_the_answer_began_is_an_answer_cut_off(target: breaker.Endpoint) -> None:
    def send(call: calls.Call) -> str:
        call.answering = True
        raise requests.ConnectionError("connection broken")

    outcome = calls.guarded_call(target, send, settle=_up, seconds=5, failed=lambda failure: failure.kind)

    assert outcome == outbound.FailureKind.CUT_OFF


class Refused(Exception):
    pass


def _verdict(exc: BaseException) -> calls.Verdict | None:
    return calls.Verdict(failed=True, error=str(exc)) if isinstance(exc, Refused) else None


@pytest.mark.django_db
def test_the_callers_own_failure_is_reported_and_raised(target: breaker.Endpoint) -> None:
    def settle(value: str) -> NoReturn:
        raise Refused("HTTP 502")

    with pytest.raises(Refused):
        calls.guarded_call(target, lambda call: "502", settle=settle, verdict_of=_verdict)

    state = _state(target.key)
    assert state is not None and state.failures == 1 and state.last_error == "HTTP 502"


@pytest.mark.django_db
def test_any_other_exception_gives_no_verdict_and_frees_the_trial(target: breaker.Endpoint) -> None:
    for _ in range(2):
        breaker.record_failure(target.key, error="timeout")
    CircuitBreaker.objects.filter(key=target.key).update(open_until=timezone.now() - timedelta(seconds=1))

    def send(call: calls.Call) -> str:
        raise KeyError("a bug")

    with pytest.raises(KeyError):
        calls.guarded_call(target, send, settle=_up, verdict_of=_verdict)

    state = _state(target.key)
    assert state is not None and state.failures == 2  # nothing counted
    assert breaker.allow(target.key).trial  # the trial went back: the next caller makes it


def test_without_a_target_nothing_is_asked_nor_recorded() -> None:
    assert calls.guarded_call(None, lambda call: "sent", settle=_up) == "sent"
