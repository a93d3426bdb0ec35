from __future__ import annotations

import email
from email.message import EmailMessage as ParsedMessage
from email.policy import default as default_policy
from typing import Any

import pytest

from exports.deliveries.base import ConfigError, RenderContext, Rendered
from exports.deliveries.email import EmailDelivery, message_id
from tests.exports.deliveries.conftest import SmtpServer, free_port

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
        from_email="exports@acme.example",
    )

    EmailDelivery().deliver(rendered, config=cfg, delivery_id="dlv-1", context=context)

    message = parsed(smtp_server)
    assert message["Subject"] == "acme: sales at 2025-03-04"
    assert message["From"] == "exports@acme.example"
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
    ],
)
def test_validate_names_the_bad_field(cfg: dict[str, Any], field: str) -> None:
    with pytest.raises(ConfigError) as excinfo:
        EmailDelivery().validate(cfg)

    assert excinfo.value.field == field


def test_validate_accepts_a_full_configuration() -> None:
    EmailDelivery().validate(
        config(subject="Export {queue} {date}", body="Hi", from_email="a@b.example", attachment_name="{queue}.{ext}")
    )
