"""Email delivery (spec: Events -> Delivery methods, "Email"): the rendered export as an attachment.

Configuration::

    {
        "type": "email",
        "recipients": ["ops@example.com", ...],   # required, 1 to MAX_RECIPIENTS (10) valid addresses
        "subject": "Export {queue} {date}",        # optional template (render_path placeholders)
        "body": "...",                             # optional plain text body (default: a one-line note)
        "from_name": "Acme exports",               # optional display name of the From header
        "reply_to": "erp@acme.example",            # optional address replies go to
        "attachment_name": "{delivery_id}.{ext}",  # optional template for the attachment's file name
    }

The sender is the deployment's, never the queue's: every export goes out From (and with the envelope sender)
``settings.EXPORT_EMAIL_FROM`` (default ``DEFAULT_FROM_EMAIL``), so a tenant cannot send mail as anyone through
the operator's relay. A queue chooses the display name (``from_name``: one line, no ``@``, ``<`` or ``>``, so it
cannot pass for an address) and ``reply_to``. A stored configuration from before this rule may hold
``from_email``: it is still accepted (a valid address) and used as the Reply-To when ``reply_to`` is not set,
never as the From; refusing it would make every later save of such a queue fail, even a ``PATCH`` of
``enabled``, because the whole configuration is validated on each save.

The SMTP server is the operator's, not the integrator's: it comes from Django's settings (``EMAIL_BACKEND``,
``EMAIL_HOST``, ``EMAIL_PORT``, ``EMAIL_HOST_USER``/``PASSWORD``, ``EMAIL_USE_TLS``/``SSL``, ``EMAIL_TIMEOUT``)
through ``django.core.mail.get_connection``, so no outbound address guard applies here. With Django's own SMTP
backend, the connection is ``RelayBackend``, the same backend keeping the server's reply to the message (the
attempt's answer, such as ``250 2.0.0 Ok: queued as 4F1A``); any other backend sends as it is, with no answer.

Each message carries ``X-Delivery-Id`` and a Message-ID derived from the delivery id, so a resend of the same
delivery has the same Message-ID and a receiver (or a mail client's duplicate filter) can drop the repeat.
A failure never raises: it is ``DeliveryResult(ok=False, error=...)``, never retryable (the spec's retry rule
covers web hooks only).
"""

from __future__ import annotations

import re
import smtplib
from datetime import UTC, datetime
from email import encoders
from email.message import Message as EmailHeaderMessage
from email.mime.base import MIMEBase
from email.utils import formataddr, parseaddr
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import BadHeaderError, EmailMessage, get_connection
from django.core.mail.backends import smtp
from django.core.mail.backends.base import BaseEmailBackend
from django.core.mail.utils import DNS_NAME
from django.core.validators import validate_email

from core import destinations
from core.outbound import classify_transport
from exports.deliveries.base import (
    ConfigError,
    Delivery,
    DeliveryResult,
    RenderContext,
    Rendered,
    Send,
    last_line,
    render_path,
    short_sent,
)
from exports.transforms.base import TransformError

DEFAULT_SUBJECT = "Export {queue} {date}"
DEFAULT_ATTACHMENT_NAME = "{delivery_id}.{ext}"
DEFAULT_BODY = "The export {delivery_id} is attached."
DEFAULT_TIMEOUT_SECONDS = 30
# An export goes to a few mailboxes (a team's list address covers more); a low count keeps one export from
# looking like bulk mail sent through the operator's relay. Stored queues with more keep sending until changed.
MAX_RECIPIENTS = 10
MAX_FROM_NAME = 100
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

_MESSAGE_ID_UNSAFE = re.compile(r"[^A-Za-z0-9.\-_]")
_SAMPLE_CONTEXT = RenderContext(
    queue={"id": 1, "name": "queue", "entity_type": "sale", "trigger": "real_time"},
    account={"identifier": "account", "name": "Account"},
    now=datetime(2000, 1, 1, tzinfo=UTC),
    delivery_id="00000000-0000-0000-0000-000000000000",
)


def _render(template: str, *, field: str, context: RenderContext, delivery_id: str, extension: str) -> str:
    try:
        return render_path(template, context=context, delivery_id=delivery_id, extension=extension)
    except ConfigError as exc:
        raise ConfigError(field, exc.message) from None


def _check_template(config: dict[str, Any], field: str, *, single_line: bool) -> None:
    value = config.get(field)
    if value is None:
        return
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(field, "must be a non-empty string")
    rendered = _render(
        value, field=field, context=_SAMPLE_CONTEXT, delivery_id=_SAMPLE_CONTEXT.delivery_id, extension="json"
    )
    if single_line and ("\n" in rendered or "\r" in rendered):
        raise ConfigError(field, "must be a single line")


def _check_address(config: dict[str, Any], field: str) -> None:
    address = config.get(field)
    if address is None:
        return
    if not isinstance(address, str) or _CONTROL.search(address):
        raise ConfigError(field, "must be one email address")
    try:
        validate_email(address)
    except ValidationError:
        raise ConfigError(field, f"not a valid email address: {address!r}") from None


def _check_sender(config: dict[str, Any]) -> None:
    """``from_name`` and ``reply_to`` (and the legacy ``from_email``, sent as Reply-To) can go into a header as they
    are: one line, and a display name that cannot pass for an address."""
    name = config.get("from_name")
    if name is not None:
        if not isinstance(name, str) or not name.strip() or len(name) > MAX_FROM_NAME:
            raise ConfigError("from_name", f"must be a display name of 1 to {MAX_FROM_NAME} characters")
        if _CONTROL.search(name):
            raise ConfigError("from_name", "must be a single line without control characters")
        if any(ch in name for ch in "@<>"):
            raise ConfigError("from_name", "must not contain @, < or >: the address is the deployment's")
        if found := destinations.lookalike(name):
            raise ConfigError(
                "from_name", f"must not contain {destinations.describe(found)}: it reads as @ or \\ in a mail client"
            )
    _check_address(config, "reply_to")
    _check_address(config, "from_email")


def _check_file_name(name: str) -> None:
    """An attachment's name (as configured, and as rendered before sending: a queue's name is part of it) holds
    no ``\\`` and nothing that reads as ``\\`` or ``@``: a mail client on Windows may save ``..\\x`` elsewhere."""
    if found := destinations.lookalike(name, allowed="@"):
        raise ConfigError(
            "attachment_name", f"must not contain {destinations.describe(found)}: it reads as \\ or @ in a file name"
        )


def sender(config: dict[str, Any]) -> str:
    """The From of an export: the deployment's address (``EXPORT_EMAIL_FROM``, else ``DEFAULT_FROM_EMAIL``)
    with the queue's display name, if any."""
    name, address = parseaddr(settings.EXPORT_EMAIL_FROM or settings.DEFAULT_FROM_EMAIL)
    try:
        validate_email(address)
    except ValidationError:
        raise ConfigError("from", "EXPORT_EMAIL_FROM (or DEFAULT_FROM_EMAIL) is not a valid address") from None
    name = config.get("from_name") or name
    return formataddr((name.strip(), address)) if name else address


def reply_to(config: dict[str, Any]) -> list[str]:
    address = config.get("reply_to") or config.get("from_email")
    return [address] if address else []


SMTP_BACKEND = "django.core.mail.backends.smtp.EmailBackend"


class _KeepsReply(smtplib.SMTP):
    """An SMTP client that keeps the server's reply to the message it sent (the end of DATA)."""

    reply = ""

    def data(self, msg: Any) -> tuple[int, bytes]:
        code, text = super().data(msg)
        self.reply = f"{code} {text.decode('utf-8', 'replace')}"
        return code, text


class _KeepsReplySsl(_KeepsReply, smtplib.SMTP_SSL):
    pass


class RelayBackend(smtp.EmailBackend):
    """Django's SMTP backend; ``reply`` is the server's last line to the message sent last, kept when the
    connection closes."""

    reply = ""

    @property
    def connection_class(self) -> type[smtplib.SMTP]:
        return _KeepsReplySsl if self.use_ssl else _KeepsReply

    def close(self) -> None:
        if isinstance(self.connection, _KeepsReply) and self.connection.reply:
            self.reply = last_line(self.connection.reply)
        super().close()


def message_id(delivery_id: str) -> str:
    """The Message-ID for a delivery: the same for every resend of it."""
    return f"<export.{_MESSAGE_ID_UNSAFE.sub('-', delivery_id)}@{DNS_NAME}>"


class EmailDelivery(Delivery):
    code = "email"

    def validate(self, config: dict[str, Any]) -> None:
        recipients = config.get("recipients")
        if not isinstance(recipients, list) or not recipients:
            raise ConfigError("recipients", "at least one recipient address is required")
        if len(recipients) > MAX_RECIPIENTS:
            raise ConfigError("recipients", f"at most {MAX_RECIPIENTS} recipients (a list address reaches more)")
        for index, address in enumerate(recipients):
            if not isinstance(address, str):
                raise ConfigError(f"recipients[{index}]", "must be an email address")
            try:
                validate_email(address)
            except ValidationError:
                raise ConfigError(f"recipients[{index}]", f"not a valid email address: {address!r}") from None
        _check_sender(config)
        _check_template(config, "subject", single_line=True)
        _check_template(config, "attachment_name", single_line=True)
        attachment_name = config.get("attachment_name") or ""
        if "/" in attachment_name:
            raise ConfigError("attachment_name", "must be a file name, without '/'")
        _check_file_name(attachment_name)
        body = config.get("body")
        if body is not None and not isinstance(body, str):
            raise ConfigError("body", "must be a string")

    def send(self, job: Send) -> DeliveryResult:
        rendered, config, delivery_id = job.rendered, job.config, job.delivery_id
        try:
            subject, attachment_name = (
                _render(
                    config.get(field) or default,
                    field=field,
                    context=job.context,
                    delivery_id=delivery_id,
                    extension=rendered.extension,
                )
                for field, default in (("subject", DEFAULT_SUBJECT), ("attachment_name", DEFAULT_ATTACHMENT_NAME))
            )
            # Checked again here: a stored configuration is not trusted to have passed today's validate.
            _check_sender(config)
            _check_file_name(attachment_name)
            from_email = sender(config)
        except ConfigError as exc:
            return DeliveryResult(ok=False, error=f"{exc.field}: {exc.message}")
        recipients = list(config["recipients"])
        sent = short_sent(
            f"{len(recipients)} recipient{'' if len(recipients) == 1 else 's'}, subject {subject!r}, "
            f"attachment {attachment_name!r} ({rendered.size():,} bytes {rendered.content_type})"
        )
        body = config.get("body")
        if body is None:
            body = DEFAULT_BODY.format(delivery_id=delivery_id)
        message = EmailMessage(
            subject=subject,
            body=body,
            from_email=from_email,
            to=recipients,
            reply_to=reply_to(config),
            headers={"X-Delivery-Id": delivery_id, "Message-ID": message_id(delivery_id)},
        )
        try:
            message.attach(_attachment(rendered, attachment_name))
        except TransformError as exc:
            return _failed(str(exc), sent=sent)
        timeout = job.within(getattr(settings, "EMAIL_TIMEOUT", None) or DEFAULT_TIMEOUT_SECONDS)
        try:
            connection = _connection(timeout)
            count = connection.send_messages([message])
        except (smtplib.SMTPException, OSError, BadHeaderError, ValueError) as exc:
            return _not_sent(exc, sent=sent)
        answer = connection.reply if isinstance(connection, RelayBackend) else ""
        if not count:
            return _failed("email not sent: the mail backend sent no message", sent=sent, answer=answer)
        return DeliveryResult(ok=True, sent=sent, answer=answer)


def _connection(timeout: float) -> BaseEmailBackend:
    """The mail backend for one send: ``RelayBackend`` (which keeps the relay's reply) in place of Django's SMTP
    backend, else the configured one."""
    if settings.EMAIL_BACKEND == SMTP_BACKEND:
        return RelayBackend(fail_silently=False, timeout=timeout)
    return get_connection(fail_silently=False, timeout=timeout)


def _not_sent(exc: smtplib.SMTPException | OSError | BadHeaderError | ValueError, *, sent: str) -> DeliveryResult:
    """The failed result for an error while sending: the relay's reply when it gave one, and whether the relay
    (down) rather than this message failed."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        refused = ", ".join(f"{address}: {code}" for address, (code, _) in exc.recipients.items())
        replies = [f"{code} {_text(reply)}" for code, reply in exc.recipients.values()]
        return _failed(f"SMTP server refused the recipients ({refused})", sent=sent, answer=last_line(replies[-1]))
    if isinstance(exc, smtplib.SMTPResponseException):
        reply = _text(exc.smtp_error)
        # 4xx: the server cannot take mail now (421 closing, 451 local error): it, not this message, failed.
        return _failed(
            f"SMTP error {exc.smtp_code}: {reply}",
            down=400 <= exc.smtp_code < 500,
            sent=sent,
            answer=last_line(f"{exc.smtp_code} {reply}"),
        )
    # No connection to the relay at all (refused, timed out): the relay's failure. A refused greeting
    # (SMTPConnectError) has a reply code and is answered above.
    plain_os_error = isinstance(exc, OSError) and not isinstance(exc, smtplib.SMTPException)
    failure = classify_transport(
        exc,
        connecting=plain_os_error,
        # The relay hung up: the relay, not this message, failed.
        down=isinstance(exc, smtplib.SMTPServerDisconnected),
    )
    return _failed(
        f"email not sent: {exc.__class__.__name__}: {exc}",
        down=failure.unreachable,
        connecting=failure.connecting,
        sent=sent,
    )


def _text(reply: bytes | str) -> str:
    return reply.decode("utf-8", "replace") if isinstance(reply, bytes) else reply


def _attachment(rendered: Rendered, filename: str) -> MIMEBase:
    """The export as a base64 part with its own content type. (Django's ``attach(name, bytes, "text/...")``
    would re-type bytes that are not UTF-8 as application/octet-stream and re-encode text line endings.)"""
    header = EmailHeaderMessage()
    header["Content-Type"] = rendered.content_type or "application/octet-stream"
    part = MIMEBase(header.get_content_maintype(), header.get_content_subtype())
    for name, value in (header.get_params() or [])[1:]:
        part.set_param(name, value)
    part.set_payload(rendered.body())
    encoders.encode_base64(part)
    part.add_header("Content-Disposition", "attachment", filename=filename)
    return part


def _failed(
    error: str, *, down: bool = False, connecting: bool = False, sent: str = "", answer: str = ""
) -> DeliveryResult:
    # A server reply never should echo the SMTP password, but the message goes to logs shown to staff.
    password = getattr(settings, "EMAIL_HOST_PASSWORD", "")
    if password:
        error, answer = error.replace(password, "***"), answer.replace(password, "***")
    return DeliveryResult(
        ok=False,
        error=error,
        retryable=False,
        unreachable=down,
        connecting=connecting and down,
        sent=sent,
        answer=answer,
    )
