"""The lifecycle of one outbound call, written once: breaker, deadline, send, classify, record.

``guarded_call(target, send, settle=...)``, as Sentry's ``BaseApiClient._request`` is for its integrations:

1. **breaker**: the destination's circuit breakers are asked (``core.breaker.ask``); when one is open nothing is
   sent and the answer is ``Paused``, carrying the breaker's decision (when to ask again, whether the host's
   connections or the endpoint refused);
2. **deadline**: with ``seconds``, ``send`` runs within one deadline for the whole exchange (``core.deadline``:
   connecting, sending, the answer to its last byte);
3. **classify**: with ``failed``, an error of the outbound client (``core.outbound.FAILURES``) is named by
   ``core.outbound.classify`` (a timeout once the deadline passed, an answer cut off once it began:
   ``Call.answering``) and handed to ``failed``, which words it as the caller's result or raises the caller's
   error;
4. **record**: ``settle`` reads what was sent (a runtime integration parses the answer) and gives the caller's
   result with its ``Verdict`` on the destination, which the breaker gets (``core.breaker.report``); an error
   ``verdict_of`` has a verdict for (the caller's own failure: an answer refused, a timeout) is reported and raised
   again; any other exception (a bug, a time limit) gives the breaker no verdict (``core.breaker.abandon``: the
   next caller makes the trial) and is raised again.

The callers keep their own words: the web hook's attempt errors and ``DeliveryResult`` (``exports.circuit``,
``exports.deliveries.webhook``), the cashier's messages and the call log (``integrations.runtime``). A web hook
asks the breaker in ``exports.circuit`` (every delivery type has one) and keeps its deadline in the delivery
(``exchange``): FTP, SFTP and e-mail have none (their task's time limit bounds them).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TypeVar

from core import breaker, deadline, outbound

__all__ = ("Call", "Paused", "Verdict", "exchange", "guarded_call")

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Verdict:
    """What a call's outcome says of its destination, for its breakers (``core.breaker.report``)."""

    failed: bool  # the destination itself failed (no connection, a timeout, a 5xx), not a refusal of this call
    connecting: bool = False  # no connection was made: the host's breaker counts it
    error: str = ""  # in words, without a secret (shown in the admin)


UP = Verdict(failed=False)  # the destination answered


@dataclass(frozen=True)
class Paused:
    """The breaker refused the call: nothing was sent."""

    ticket: breaker.Ticket

    @property
    def retry_at(self) -> datetime | None:
        """When asking again may be answered yes."""
        return self.ticket.decision.retry_at

    @property
    def failures(self) -> int:
        return self.ticket.decision.failures

    @property
    def host_refused(self) -> bool:
        """The host's breaker refused (its connections failed), not the endpoint's."""
        return self.ticket.host_refused


class Call:
    """One call under way, handed to ``send``: it sets ``answering`` once the answer began (its status read), so
    that a connection broken after that is an answer cut off."""

    __slots__ = ("answering",)

    def __init__(self) -> None:
        self.answering = False


def exchange(send: Callable[[Call], T], *, seconds: float, failed: Callable[[outbound.Failure], T]) -> T:
    """``send`` within a deadline of ``seconds`` for the whole exchange; an error of the outbound client is
    classified (``core.outbound.classify``) and handed to ``failed``."""
    call = Call()
    with deadline.within(seconds) as cutoff:
        try:
            return send(call)
        except outbound.FAILURES as exc:
            return failed(outbound.classify(exc, expired=cutoff.expired, answering=call.answering))


def guarded_call(
    target: breaker.Endpoint | None,
    send: Callable[[Call], T],
    *,
    settle: Callable[[T], tuple[R, Verdict]],
    seconds: float | None = None,
    failed: Callable[[outbound.Failure], T] | None = None,
    verdict_of: Callable[[BaseException], Verdict | None] | None = None,
) -> R | Paused:
    """One outbound call to ``target`` (None: no breaker to ask), as the module docstring says: ``Paused`` when a
    breaker is open, else ``settle``'s result, the breakers told its verdict. ``seconds`` and ``failed`` go
    together: without them ``send`` keeps its own time and words its own failures."""
    ticket = breaker.ask(target) if target is not None else None
    if ticket is not None and not ticket.decision.allowed:
        return Paused(ticket)
    try:
        if seconds is not None and failed is not None:
            sent = exchange(send, seconds=seconds, failed=failed)
        else:
            sent = send(Call())
        result, verdict = settle(sent)
    except BaseException as exc:
        if ticket is not None:
            _record_error(target, ticket, exc, verdict_of)
        raise
    if target is not None and ticket is not None:
        breaker.report(target, ticket, failed=verdict.failed, connecting=verdict.connecting, error=verdict.error)
    return result


def _record_error(
    target: breaker.Endpoint | None,
    ticket: breaker.Ticket,
    exc: BaseException,
    verdict_of: Callable[[BaseException], Verdict | None] | None,
) -> None:
    """The breakers told of a call that ended in ``exc``: ``verdict_of``'s verdict, or none (``abandon``)."""
    verdict = verdict_of(exc) if verdict_of is not None else None
    if verdict is None or target is None:
        breaker.abandon(ticket)  # no verdict on the destination (a bug, a time limit): the next caller tries
        return
    breaker.report(target, ticket, failed=verdict.failed, connecting=verdict.connecting, error=verdict.error)
