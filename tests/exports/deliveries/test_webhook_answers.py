"""What a web hook reads of a receiver's answer: its start only (``webhook.ANSWER_READ_BYTES``), so a receiver that
answers without end cannot hold the worker or its memory; secrets it echoes are redacted before the cut."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from exports.deliveries.base import RenderContext, Rendered
from exports.deliveries.webhook import ANSWER_CHARS, WebhookDelivery

TOKEN = "t0k3n-echoed-back"


class _Endless(BaseHTTPRequestHandler):
    """Answers 200 (or 400 on ``/refuse``) with a body that never ends: the token, then ``x`` for ever."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(400 if self.path == "/refuse" else 200)
        self.send_header("Content-Length", str(10**12))
        self.end_headers()
        # The token straddles the 500th character: cut before redacting, its first part would show.
        self.wfile.write(b"x" * (ANSWER_CHARS - 5) + TOKEN.encode())
        try:
            while True:
                self.wfile.write(b"x" * 65536)
        except OSError:
            pass  # the web hook closed the connection

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def endless() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endless)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.usefixtures("allow_loopback")
@pytest.mark.parametrize(("path", "ok"), [("/hook", True), ("/refuse", False)])
def test_an_endless_answer_is_read_only_to_its_start_and_redacted_before_the_cut(
    endless: str, rendered: Rendered, context: RenderContext, path: str, ok: bool
) -> None:
    config = {"type": "webhook", "url": endless + path, "headers": {"Authorization": TOKEN}, "read_timeout": 5}

    result = WebhookDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=context)

    assert result.ok is ok, result.error
    shown = result.answer if ok else result.error
    assert shown.startswith(("" if ok else "HTTP 400: ") + "x" * (ANSWER_CHARS - 5))
    assert TOKEN[:5] not in shown
