"""A real web hook receiver on 127.0.0.1 for tests: records every request, can be told how to answer.

The fixture ``receiver`` runs one for the test (registered for every test by the root conftest); outgoing calls
reach it where the test also asks for ``allow_loopback``."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.support.ports import free_port


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    url: str
    received: list[Received] = field(default_factory=list)
    # Answers to give, in order (status codes, "sleep:<seconds>", "say:<status>:<text>": that status with the text
    # as the body, or "echo:<status>": that status with the request line and headers as the body, as a careless
    # receiver would answer); then 200.
    script: list[int | str] = field(default_factory=list)
    # Seconds every answer past the script waits before it is sent (a receiver that takes its time).
    delay: float = 0.0
    # Paths answered with one status every time, whatever the script (one endpoint of the host broken).
    always: dict[str, int] = field(default_factory=dict)
    # The body of every answer but an echo.
    body: bytes = b"ok"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def next_answer(self, path: str = "") -> int | str:
        with self.lock:
            if path in self.always:
                return self.always[path]
            if self.script:
                return self.script.pop(0)
        return f"sleep:{self.delay}" if self.delay > 0 else 200


def _handler(receiver: Receiver) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            with receiver.lock:
                receiver.received.append(Received(self.path, dict(self.headers.items()), body, time.time()))
            answer = receiver.next_answer(self.path)
            reply = receiver.body
            if isinstance(answer, str) and answer.startswith("sleep:"):
                time.sleep(float(answer.split(":")[1]))
                answer = 200
            elif isinstance(answer, str) and answer.startswith("say:"):
                _, answer, text = answer.split(":", 2)
                reply = text.encode()
            elif isinstance(answer, str) and answer.startswith("echo:"):
                answer = answer.split(":")[1]
                reply = f"denied {self.requestline} {dict(self.headers.items())}".encode()
            self.send_response(int(answer))
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Handler


class ReceiverServer(ThreadingHTTPServer):
    """A partner's web server: a listen backlog as a production server's (nginx 511, here 128), not
    socketserver's 5, past which a burst of concurrent sends would wait for TCP's 1 s SYN retransmission."""

    request_queue_size = 128


@contextmanager
def serving(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    """``handler`` served on a free port of 127.0.0.1 (a ``ReceiverServer``, a thread per request) until the block
    ends; yields the web hook's URL there."""
    server = ReceiverServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/hook"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def running_receiver() -> Iterator[Receiver]:
    receiver = Receiver(url="")
    with serving(_handler(receiver)) as url:
        receiver.url = url
        yield receiver


def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (a refused connection)."""
    return free_port()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with running_receiver() as running:
        yield running


@pytest.fixture
def reachable_receiver(receiver: Receiver, allow_loopback: None) -> Receiver:
    """The receiver with outgoing calls allowed to reach it (as the end-to-end and browser tests need: their live
    server, workers and receiver all run on 127.0.0.1)."""
    return receiver
