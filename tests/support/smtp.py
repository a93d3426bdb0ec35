"""A real SMTP server on 127.0.0.1 (aiosmtpd) for tests that send mail: e-mail exports, members' notifications.

``running_smtp(settings)`` starts one in a thread on a free port, points Django's e-mail settings at it and stops
it when the block ends; ``start()`` returns once the socket accepts connections. ``SmtpRecorder`` keeps each
message accepted, and can refuse recipients or messages (``rcpt_reply``, ``data_reply``: an SMTP reply line).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import Envelope

from tests.support.ports import free_port


@dataclass
class SmtpRecorder:
    envelopes: list[Envelope] = field(default_factory=list)
    data_reply: str | None = None  # e.g. "554 ..." to refuse every message
    rcpt_reply: str | None = None  # e.g. "550 ..." to refuse every recipient

    async def handle_RCPT(self, server: Any, session: Any, envelope: Envelope, address: str, options: Any) -> str:
        if self.rcpt_reply:
            return self.rcpt_reply
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Envelope) -> str:
        if self.data_reply:
            return self.data_reply
        self.envelopes.append(envelope)
        return "250 Message accepted for delivery"


@dataclass
class SmtpServer:
    port: int
    recorder: SmtpRecorder

    def messages(self) -> list[EmailMessage]:
        """Every message accepted so far, parsed."""
        return [
            message_from_bytes(envelope.original_content or b"", policy=policy.default)  # type: ignore[misc]
            for envelope in self.recorder.envelopes
        ]

    def recipients(self) -> list[str]:
        """Every accepted message's recipients, in order."""
        return [address for envelope in self.recorder.envelopes for address in envelope.rcpt_tos]


@contextmanager
def running_smtp(settings: Any) -> Iterator[SmtpServer]:
    """An SMTP server on 127.0.0.1 that Django's e-mail settings (pytest-django's ``settings``) point at."""
    recorder = SmtpRecorder()
    port = free_port()
    controller = Controller(recorder, hostname="127.0.0.1", port=port)
    controller.start()
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = port
    settings.EMAIL_HOST_USER = ""
    settings.EMAIL_HOST_PASSWORD = ""
    settings.EMAIL_USE_TLS = False
    settings.EMAIL_USE_SSL = False
    settings.EMAIL_TIMEOUT = 5
    try:
        yield SmtpServer(port=port, recorder=recorder)
    finally:
        controller.stop()
