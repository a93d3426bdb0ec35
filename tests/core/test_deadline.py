"""``core.deadline``: a read blocked on a connection returns when the call's deadline passes, over plain TCP
and TLS alike, and a finished call's connection is never touched. No clock is read: the tests wait for the
blocked read itself."""

from __future__ import annotations

import socket
import ssl
import threading
from collections.abc import Iterator

import pytest

from core import deadline
from tests.support.servers import Certificate


def test_a_read_blocked_on_a_plain_connection_returns_at_the_deadline() -> None:
    ours, theirs = socket.socketpair()  # the other end never sends
    with ours, theirs, deadline.within(0.2) as cutoff:
        deadline.attach(ours)
        received = ours.recv(1024)

    assert (received, cutoff.expired) == (b"", True)


@pytest.fixture
def silent_tls_server(certificate: Certificate) -> Iterator[int]:
    """A TLS server on 127.0.0.1 (a self-signed certificate for localhost) that completes the handshake and never
    sends a byte."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate.certfile, certificate.keyfile)
    listener = socket.create_server(("127.0.0.1", 0))
    done = threading.Event()

    def serve() -> None:
        with listener, context.wrap_socket(listener.accept()[0], server_side=True):
            done.wait()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    done.set()
    thread.join(timeout=5)


def test_a_read_blocked_on_a_tls_connection_fails_as_a_connection_error_at_the_deadline(
    silent_tls_server: int, certificate: Certificate
) -> None:
    context = ssl.create_default_context(cafile=str(certificate.certfile))
    raw = socket.create_connection(("127.0.0.1", silent_tls_server))
    with context.wrap_socket(raw, server_hostname="localhost") as tls, deadline.within(0.2) as cutoff:
        deadline.attach(tls)
        try:
            received = tls.recv(1024)
        except ssl.SSLError:  # what urllib3 reports as a connection error; never a ValueError of a torn-down TLS
            received = b""

    assert (received, cutoff.expired) == (b"", True)


def test_a_finished_calls_connection_is_left_alone() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        with deadline.within(60) as cutoff:
            deadline.attach(ours)
        cutoff.expire()  # what the watchdog does when the deadline passes later

        theirs.sendall(b"still open")
        assert ours.recv(1024) == b"still open"
        assert not cutoff.expired


def test_outside_a_deadline_attaching_does_nothing() -> None:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        deadline.attach(ours)
        theirs.sendall(b"x")
        assert ours.recv(1) == b"x"
