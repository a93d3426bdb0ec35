"""``core.outbound``, the one outbound client: plain http is judged by the guarded connection on the one
resolution it connects with (no DNS-rebinding window); one error mapping (``classify``, and ``classify_transport``
for FTP, SFTP and SMTP); one timeout policy (``timeouts``)."""

from __future__ import annotations

import ftplib
import smtplib
import socket
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

import paramiko
import pytest
import requests

from core import budget, outbound
from tests.support.rebinding import LOOPBACK, NAME, PUBLIC, Network
from tests.support.receivers import Receiver, closed_port


def _port(receiver: Receiver) -> int:
    return int(receiver.url.rsplit(":", 1)[1].split("/")[0])


def test_a_name_rebound_to_a_public_address_gets_plain_http_only_to_the_address_it_was_judged_on(
    monkeypatch: pytest.MonkeyPatch, settings: Any, receiver: Receiver
) -> None:
    # The window a separate plain-http check left: inside the allowed networks when judged, public when connected.
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    network = Network(monkeypatch, [LOOPBACK, PUBLIC])

    response = outbound.http_session().post(f"http://{NAME}:{_port(receiver)}/hook", data=b"secret", timeout=5)

    assert response.status_code == 200
    assert (network.lookups, network.connected) == ([LOOPBACK], [LOOPBACK])  # one resolution, the judged address
    assert [r.body for r in receiver.received] == [b"secret"]


def test_a_name_resolving_to_a_public_address_first_gets_no_plain_http_whatever_it_answers_next(
    monkeypatch: pytest.MonkeyPatch, settings: Any, receiver: Receiver
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    network = Network(monkeypatch, [PUBLIC, LOOPBACK])

    with pytest.raises(outbound.PlainHttpRefused, match=f"{NAME} resolves to {PUBLIC}"):
        outbound.http_session().post(f"http://{NAME}:{_port(receiver)}/hook", data=b"secret", timeout=5)

    assert (network.lookups, network.connected) == ([PUBLIC], [])
    assert receiver.received == []


def test_https_to_a_public_address_is_not_held_to_the_plain_http_rule(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    network = Network(monkeypatch, [PUBLIC])

    with pytest.raises(requests.ConnectionError) as caught:
        outbound.http_session().get(f"https://{NAME}/", timeout=5)

    assert network.connected == [PUBLIC]  # judged allowed, then refused by the test's network
    assert outbound.classify(caught.value).kind == outbound.FailureKind.CONNECTION_REFUSED


def test_the_address_guard_comes_before_the_plain_http_rule(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    with pytest.raises(outbound.OutboundRefused, match="not a public address") as caught:
        outbound.check_address(LOOPBACK, 80, plain_http=True)

    assert not isinstance(caught.value, outbound.PlainHttpRefused)


# --- one error mapping ----------------------------------------------------------------------------------------


def test_a_refused_connection_is_retryable_and_the_destinations_failure(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]

    with pytest.raises(requests.ConnectionError) as caught:
        outbound.http_session().get(f"http://127.0.0.1:{closed_port()}/", timeout=5)

    failure = outbound.classify(caught.value)
    assert (failure.kind, failure.retryable, failure.unreachable) == (
        outbound.FailureKind.CONNECTION_REFUSED,
        True,
        True,
    )


def test_a_connect_timeout_is_a_timeout(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    def silent(*args: Any, **kwargs: Any) -> socket.socket:
        raise TimeoutError("timed out")

    monkeypatch.setattr(outbound.socket, "create_connection", silent)

    with pytest.raises(requests.ConnectTimeout) as caught:
        outbound.http_session().get(f"https://{PUBLIC}/", timeout=5)

    failure = outbound.classify(caught.value)
    assert (failure.kind, failure.retryable, failure.unreachable) == (outbound.FailureKind.TIMEOUT, True, True)


def test_a_guard_refusal_is_neither_retryable_nor_the_destinations_failure(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = []

    with pytest.raises(outbound.OutboundRefused) as caught:
        outbound.http_session().get("https://127.0.0.1/", timeout=5)

    failure = outbound.classify(caught.value)
    assert (failure.kind, failure.retryable, failure.unreachable) == (outbound.FailureKind.REFUSED, False, False)
    assert "127.0.0.1" in failure.detail


def test_any_failure_after_the_deadline_is_a_timeout() -> None:
    failure = outbound.classify(requests.ConnectionError("reset by peer"), expired=True)

    assert (failure.kind, failure.retryable) == (outbound.FailureKind.TIMEOUT, True)


@pytest.mark.parametrize(
    ("error", "kind", "unreachable"),
    [
        (requests.exceptions.SSLError("certificate verify failed"), outbound.FailureKind.TLS, False),
        (requests.exceptions.SSLError("EOF occurred in violation of protocol"), outbound.FailureKind.TLS, True),
        (requests.ConnectionError(ConnectionResetError(104, "reset")), outbound.FailureKind.DROPPED, True),
        (requests.exceptions.ChunkedEncodingError("broken"), outbound.FailureKind.CUT_OFF, True),
        (requests.exceptions.InvalidURL("no host"), outbound.FailureKind.REQUEST, False),
        (outbound.AnswerTooLarge("the answer is larger than 10 bytes"), outbound.FailureKind.TOO_LARGE, False),
    ],
)
def test_each_failure_has_one_kind(error: BaseException, kind: str, unreachable: bool) -> None:
    failure = outbound.classify(error)

    assert (failure.kind, failure.unreachable, failure.retryable) == (kind, unreachable, False)


K = outbound.FailureKind


@pytest.mark.parametrize(
    ("error", "connecting", "down", "expected"),
    [
        # A timeout or a broken connection is the destination's failure at any stage.
        (TimeoutError("timed out"), False, False, (K.TIMEOUT, True, False)),
        (TimeoutError("timed out"), True, False, (K.TIMEOUT, True, True)),
        (ConnectionRefusedError(111, "refused"), True, False, (K.CONNECTION_REFUSED, True, True)),
        (ConnectionResetError(104, "reset"), False, False, (K.DROPPED, True, False)),
        (BrokenPipeError(32, "broken pipe"), False, False, (K.DROPPED, True, False)),
        (ConnectionAbortedError(103, "aborted"), True, False, (K.DROPPED, True, True)),
        (EOFError(), False, False, (K.DROPPED, True, False)),
        (EOFError(), True, False, (K.DROPPED, True, True)),
        # TLS and any other OSError: the destination's failure only while connecting.
        (ssl.SSLError(1, "handshake failure"), True, False, (K.TLS, True, True)),
        (ssl.SSLCertVerificationError(1, "certificate verify failed"), False, False, (K.TLS, False, False)),
        (OSError(113, "no route to host"), True, False, (K.CONNECTION, True, True)),
        (socket.gaierror(-2, "name unknown"), True, False, (K.CONNECTION, True, True)),
        (OSError(28, "no space left"), False, False, (K.REQUEST, False, False)),
        (PermissionError(13, "denied"), False, False, (K.REQUEST, False, False)),
        # Anything else is a refusal of this call, unless the protocol says the destination failed.
        (ftplib.error_perm("550 no such directory"), False, False, (K.REQUEST, False, False)),  # noqa: S321
        (ftplib.error_temp("421 too many users"), False, True, (K.REQUEST, True, False)),  # noqa: S321
        (smtplib.SMTPServerDisconnected("gone"), False, True, (K.REQUEST, True, False)),
        (smtplib.SMTPNotSupportedError("no STARTTLS"), False, False, (K.REQUEST, False, False)),
        (paramiko.SSHException("no banner"), True, True, (K.REQUEST, True, True)),
        (paramiko.SSHException("no SFTP subsystem"), False, False, (K.REQUEST, False, False)),
        (ValueError("bad header"), True, False, (K.REQUEST, False, False)),
    ],
)
def test_each_transport_error_has_one_kind(
    error: BaseException, connecting: bool, down: bool, expected: tuple[outbound.FailureKind, bool, bool]
) -> None:
    failure = outbound.classify_transport(error, connecting=connecting, down=down)

    assert (failure.kind, failure.unreachable, failure.connecting) == expected
    assert failure.detail == type(error).__name__
    assert failure.retryable == (failure.kind in (K.TIMEOUT, K.CONNECTION_REFUSED))


def test_a_broken_connection_while_answering_cut_the_answer_off() -> None:
    failure = outbound.classify(requests.ConnectionError("connection broken"), answering=True)

    assert (failure.kind, failure.unreachable) == (outbound.FailureKind.CUT_OFF, True)


# --- one timeout policy ---------------------------------------------------------------------------------------


def test_the_whole_exchange_gets_connect_plus_read_and_no_timeout_is_longer() -> None:
    assert outbound.timeouts(connect=5, read=15) == outbound.Timeouts(connect=5, read=15, total=20)


def test_what_the_callers_budget_has_left_cuts_every_timeout() -> None:
    assert outbound.timeouts(connect=5, read=15, left=8) == outbound.Timeouts(connect=5, read=8, total=8)


def test_a_served_requests_budget_cuts_the_call_and_records_the_grant() -> None:
    with budget.limit(0) as opened:
        limits = outbound.timeouts(connect=3, read=3, total=3)

    assert limits == outbound.Timeouts(connect=0, read=0, total=0, budget_seconds=0)
    assert opened.grants == [0]


def test_a_call_within_the_served_requests_budget_keeps_its_own_time() -> None:
    with budget.limit(3600) as opened:
        limits = outbound.timeouts(connect=2, read=2, total=2)

    assert limits == outbound.Timeouts(connect=2, read=2, total=2)
    assert opened.grants == [2]


# --- the session ----------------------------------------------------------------------------------------------


class _CookieSetter(BaseHTTPRequestHandler):
    """Sets a cookie on every answer and records the Cookie header each request carried."""

    cookies: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.cookies.append(self.headers.get("Cookie", ""))
        self.send_response(200)
        self.send_header("Set-Cookie", "tenant=a; Path=/")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_the_session_sends_no_partners_cookie_with_the_next_call(settings: Any) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _CookieSetter)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    session = outbound.http_session()
    try:
        for _ in range(2):
            session.get(f"http://127.0.0.1:{server.server_address[1]}/", timeout=5)
    finally:
        server.shutdown()
        server.server_close()

    assert _CookieSetter.cookies == ["", ""]
    assert len(session.cookies) == 0
