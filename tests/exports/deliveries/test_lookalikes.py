"""Look-alike ``@`` and ``\\`` in from-names, attachment names and FTP/SFTP paths: refused when
saved (``validate``, the API's 400 is in ``tests/hostile/test_json_everywhere.py``) and again on the rendered name
before a send, where a queue's name can bring one in: nothing reaches the server."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from core import destinations
from exports.deliveries.base import ConfigError, RenderContext, Rendered
from exports.deliveries.email import EmailDelivery
from exports.deliveries.ftp import FtpDelivery, split_remote_path
from tests.support.servers import FTP_PASSWORD, FTP_USER, FtpServer, SmtpServer

AT_LOOKALIKES = ["\uff20", "\ufe6b"]
BACKSLASHES = ["\\", "\uff3c", "\ufe68", "\u2216", "\u29f5", "\u29f9", "\u2572"]


@pytest.mark.parametrize("char", AT_LOOKALIKES + BACKSLASHES)
def test_every_lookalike_is_found(char: str) -> None:
    assert destinations.lookalike(f"a{char}b") == char


def test_a_plain_at_is_only_refused_where_it_is_not_allowed() -> None:
    assert destinations.lookalike("a@b") == "@"
    assert destinations.lookalike("a@b", allowed="@") is None
    assert destinations.lookalike("exports/ordinary-name_1.csv") is None


@pytest.mark.parametrize("char", AT_LOOKALIKES + BACKSLASHES)
def test_a_from_name_with_a_lookalike_is_refused(char: str) -> None:
    with pytest.raises(ConfigError) as refused:
        EmailDelivery().validate({"type": "email", "recipients": ["ops@example.com"], "from_name": f"Acme{char}bank"})
    assert refused.value.field == "from_name"


@pytest.mark.parametrize("char", AT_LOOKALIKES + BACKSLASHES)
def test_an_attachment_name_with_a_lookalike_is_refused(char: str) -> None:
    config = {"type": "email", "recipients": ["ops@example.com"], "attachment_name": f"..{char}{{delivery_id}}.{{ext}}"}
    with pytest.raises(ConfigError) as refused:
        EmailDelivery().validate(config)
    assert refused.value.field == "attachment_name"


@pytest.mark.parametrize("char", AT_LOOKALIKES + BACKSLASHES)
def test_a_remote_path_with_a_lookalike_is_refused(char: str) -> None:
    with pytest.raises(ValueError, match="must not contain"):
        split_remote_path(f"exports/..{char}..{char}x.csv")


def test_a_plain_at_stays_allowed_in_a_path_and_an_attachment_name() -> None:
    assert split_remote_path("exports/orders@erp/x.csv") == (False, ["exports", "orders@erp"], "x.csv")
    EmailDelivery().validate({"type": "email", "recipients": ["ops@example.com"], "attachment_name": "a@b.{ext}"})


def test_a_queue_name_that_brings_a_backslash_into_the_attachment_name_sends_nothing(
    smtp_server: SmtpServer, rendered: Rendered, context: RenderContext
) -> None:
    config = {"type": "email", "recipients": ["ops@example.com"], "attachment_name": "{queue}.{ext}"}
    hostile = replace(context, queue={**context.queue, "name": "..\\..\\startup"})

    result = EmailDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=hostile)

    assert not result.ok and not result.retryable
    assert "attachment_name" in result.error
    assert smtp_server.recorder.envelopes == []


@pytest.mark.usefixtures("allow_loopback")
def test_a_queue_name_that_brings_a_lookalike_into_the_ftp_path_uploads_nothing(
    ftp_server: FtpServer, rendered: Rendered, context: RenderContext
) -> None:
    config: dict[str, Any] = {
        "type": "ftp",
        "host": "127.0.0.1",
        "port": ftp_server.port,
        "username": FTP_USER,
        "password": FTP_PASSWORD,
        "timeout": 5,
        "path": "exports/{queue}/{delivery_id}.{ext}",
    }
    hostile = replace(context, queue={**context.queue, "name": "..\uff3c..\uff3cwindows"})

    result = FtpDelivery().deliver(rendered, config=config, delivery_id="dlv-1", context=hostile)

    assert not result.ok
    assert result.error.startswith("path:")
    assert [p for p in ftp_server.root.rglob("*") if p.is_file()] == []
