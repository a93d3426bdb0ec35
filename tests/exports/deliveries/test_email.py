from __future__ import annotations

import email
from email.message import EmailMessage as ParsedMessage
from email.policy import default as default_policy
from typing import Any

import pytest

from exports.deliveries.base import ConfigError, RenderContext, Rendered
from exports.deliveries.email import EmailDelivery, message_id
from tests.support.ports import free_port
from tests.support.smtp import SmtpServer

RECIPIENTS = ["ops@example.com", "backup@example.org"]


def config(**overrides: Any) -> dict[str, Any]:
    return {"type": "email", "recipients": list(RECIPIENTS), **overrides}


def parsed(server: SmtpServer, index: int = 0) -> ParsedMessage:
    envelope = server.recorder.envelopes[index]
    raw = envelope.original_content or envelope.content
    assert isinstance(raw, bytes)
    message = email.message_from_bytes(raw, policy=default_policy)
    assert isinstance(message, ParsedMessage)
    return message


def test_email_arrives_with_the_exact_attachment(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    result = EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    message = parsed(smtp_server)
    [attachment] = list(message.iter_attachments())
    assert attachment.get_filename() == "dlv-1.csv"
    assert attachment.get_content_type() == "text/csv"
    assert attachment.get_payload(decode=True) == rendered.content


def test_content_type_parameters_are_kept(smtp_server: SmtpServer, context: RenderContext) -> None:
    json_export = Rendered(
        content=b'{"total": "9.50"}', content_type="application/json; charset=utf-8", extension="json"
    )

    EmailDelivery().deliver(json_export, config=config(), delivery_id="dlv-1", context=context)

    attachment = next(parsed(smtp_server).iter_attachments())
    assert attachment.get_content_type() == "application/json"
    assert attachment.get_param("charset") == "utf-8"
    assert attachment.get_filename() == "dlv-1.json"
    assert attachment.get_payload(decode=True) == json_export.content


def test_email_goes_to_every_recipient(smtp_server: SmtpServer, rendered: Rendered, context: RenderContext) -> None:
    EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert sorted(smtp_server.recorder.envelopes[0].rcpt_tos) == sorted(RECIPIENTS)
    assert sorted(str(parsed(smtp_server)["To"]).split(", ")) == sorted(RECIPIENTS)


def test_email_carries_the_delivery_id_and_a_stable_message_id(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    delivery = EmailDelivery()
    delivery.deliver(rendered, config=config(), delivery_id="dlv-42", context=context)
    delivery.deliver(rendered, config=config(), delivery_id="dlv-42", context=context)

    first, resend = parsed(smtp_server, 0), parsed(smtp_server, 1)
    assert first["X-Delivery-Id"] == "dlv-42"
    assert first["Message-ID"] == resend["Message-ID"] == message_id("dlv-42")


def test_email_subject_and_attachment_name_follow_the_templates(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(
        subject="{account}: {queue} at {date}",
        attachment_name="{queue}-{date}.{ext}",
        body="See attachment.",
    )

    EmailDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    message = parsed(smtp_server)
    assert message["Subject"] == "acme: sales at 2025-03-04"
    assert next(message.iter_attachments()).get_filename() == "sales-2025-03-04.csv"
    body = message.get_body(preferencelist=("plain",))
    assert body is not None
    assert body.get_content().strip() == "See attachment."


def test_default_subject_names_queue_and_date(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert parsed(smtp_server)["Subject"] == "Export sales 2025-03-04"


def test_a_refused_message_is_a_permanent_failure(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    smtp_server.recorder.data_reply = "554 5.7.1 Rejected by policy"

    result = EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert not result.retryable
    assert "554" in result.error and "Rejected by policy" in result.error


def test_refused_recipients_are_a_failure(smtp_server: SmtpServer, rendered: Rendered, context: RenderContext) -> None:
    smtp_server.recorder.rcpt_reply = "550 5.1.1 No such user"

    result = EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert "refused the recipients" in result.error and "ops@example.com: 550" in result.error


def test_an_smtp_server_that_is_down_is_a_failure_not_an_exception(
    settings: Any, rendered: Rendered, context: RenderContext
) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST = "127.0.0.1"
    settings.EMAIL_PORT = free_port()  # nothing listens there
    settings.EMAIL_HOST_PASSWORD = "smtp-Secret-77"
    settings.EMAIL_HOST_USER = "relay"
    settings.EMAIL_TIMEOUT = 5

    result = EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert not result.ok
    assert not result.retryable
    assert "refused" in result.error.lower()
    assert "smtp-Secret-77" not in result.error


@pytest.mark.parametrize(
    ("cfg", "field"),
    [
        ({"type": "email"}, "recipients"),
        ({"type": "email", "recipients": []}, "recipients"),
        ({"type": "email", "recipients": "ops@example.com"}, "recipients"),
        ({"type": "email", "recipients": ["ops@example.com", "not an address"]}, "recipients[1]"),
        ({"type": "email", "recipients": ["ops@example.com", 7]}, "recipients[1]"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_email": "nobody"}, "from_email"),
        ({"type": "email", "recipients": ["ops@example.com"], "subject": "Export {nope}"}, "subject"),
        ({"type": "email", "recipients": ["ops@example.com"], "subject": "a\r\nBcc: x@evil.test"}, "subject"),
        ({"type": "email", "recipients": ["ops@example.com"], "attachment_name": "{bad"}, "attachment_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "attachment_name": "a/{ext}"}, "attachment_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "body": 5}, "body"),
        ({"type": "email", "recipients": [f"r{i}@example.com" for i in range(11)]}, "recipients"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": "Acme\r\nBcc: x@evil.test"}, "from_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": "Acme\nexports"}, "from_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": "ceo@bank.example"}, "from_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": "Bank <ceo@bank.example>"}, "from_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": ""}, "from_name"),
        ({"type": "email", "recipients": ["ops@example.com"], "from_name": "x" * 101}, "from_name"),
        (
            {"type": "email", "recipients": ["ops@example.com"], "reply_to": "a@b.example\r\nBcc: x@evil.test"},
            "reply_to",
        ),
        ({"type": "email", "recipients": ["ops@example.com"], "reply_to": "a@b.example, c@d.example"}, "reply_to"),
        ({"type": "email", "recipients": ["ops@example.com"], "reply_to": ["a@b.example"]}, "reply_to"),
        (
            {"type": "email", "recipients": ["ops@example.com"], "from_email": "a@b.example\nBcc: x@evil.test"},
            "from_email",
        ),
    ],
)
def test_validate_names_the_bad_field(cfg: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        EmailDelivery().validate(cfg)

    assert excinfo.value.field == field


def test_validate_accepts_a_full_configuration() -> None:
    EmailDelivery().validate(
        config(
            subject="Export {queue} {date}",
            body="Hi",
            from_name="Acme exports",
            reply_to="erp@acme.example",
            attachment_name="{queue}.{ext}",
        )
    )


# --- The sender is the deployment's ------------------------------------------------------------------------


@pytest.fixture
def operator_sender(settings: Any) -> str:
    settings.EXPORT_EMAIL_FROM = "exports@operator.example"
    return "exports@operator.example"


def test_email_is_sent_from_the_configured_address_with_the_queues_display_name_and_reply_to(
    smtp_server: SmtpServer, operator_sender: str, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(from_name="Acme, Kø & Co", reply_to="erp@acme.example")

    result = EmailDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    assert smtp_server.recorder.envelopes[0].mail_from == operator_sender
    message = parsed(smtp_server)
    [sender] = message["From"].addresses
    assert (sender.display_name, sender.addr_spec) == ("Acme, Kø & Co", operator_sender)
    assert [a.addr_spec for a in message["Reply-To"].addresses] == ["erp@acme.example"]


def test_a_stored_from_email_is_only_a_reply_to(
    smtp_server: SmtpServer, operator_sender: str, rendered: Rendered, context: RenderContext
) -> None:
    # A queue saved before the sender rule, asking to send as someone else.
    cfg = config(from_email="ceo@bank.example")

    result = EmailDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert result.ok, result.error
    envelope = smtp_server.recorder.envelopes[0]
    assert envelope.mail_from == operator_sender
    message = parsed(smtp_server)
    assert message["From"] == operator_sender
    assert message["Reply-To"] == "ceo@bank.example"
    assert "ceo@bank.example" not in str(message["Sender"] or "") + str(message["Return-Path"] or "")


def test_reply_to_wins_over_a_stored_from_email(
    smtp_server: SmtpServer, operator_sender: str, rendered: Rendered, context: RenderContext
) -> None:
    cfg = config(from_email="old@acme.example", reply_to="new@acme.example")

    EmailDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    assert parsed(smtp_server)["Reply-To"] == "new@acme.example"


def test_the_sender_defaults_to_default_from_email_with_the_queues_display_name(
    smtp_server: SmtpServer, settings: Any, rendered: Rendered, context: RenderContext
) -> None:
    settings.EXPORT_EMAIL_FROM = ""
    settings.DEFAULT_FROM_EMAIL = "Retail back-office <noreply@operator.example>"

    EmailDelivery().deliver(rendered, config=config(from_name="Acme"), delivery_id="dlv-1", context=context)

    assert smtp_server.recorder.envelopes[0].mail_from == "noreply@operator.example"
    [sender] = parsed(smtp_server)["From"].addresses
    assert (sender.display_name, sender.addr_spec) == ("Acme", "noreply@operator.example")


@pytest.mark.parametrize(
    "overrides",
    [
        {"from_name": "Acme\r\nBcc: victim@example.net"},
        {"reply_to": "a@acme.example\r\nBcc: victim@example.net"},
        {"from_email": "a@acme.example\nBcc: victim@example.net"},
    ],
)
def test_a_stored_header_injection_sends_nothing(
    smtp_server: SmtpServer, operator_sender: str, rendered: Rendered, context: RenderContext, overrides: dict[str, Any]
) -> None:
    result = EmailDelivery().deliver(rendered, config=config(**overrides), delivery_id="dlv-1", context=context)

    assert not result.ok and not result.retryable
    assert smtp_server.recorder.envelopes == []


def test_a_misconfigured_sender_is_a_failure_naming_the_setting(
    smtp_server: SmtpServer, settings: Any, rendered: Rendered, context: RenderContext
) -> None:
    settings.EXPORT_EMAIL_FROM = "not an address"

    result = EmailDelivery().deliver(rendered, config=config(), delivery_id="dlv-1", context=context)

    assert not result.ok and "EXPORT_EMAIL_FROM" in result.error
    assert smtp_server.recorder.envelopes == []
