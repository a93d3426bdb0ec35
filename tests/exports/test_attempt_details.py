"""Each attempt keeps what was sent, in short and without a secret, and the start of what the destination answered:
against real receivers on 127.0.0.1 (a web hook, an SMTP relay, FTP and SFTP servers)."""

from __future__ import annotations

from typing import Any

import pytest

from exports import services
from exports.deliveries.base import ANSWER_BYTES
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportStatus
from tests.support.backoffice import SignIn
from tests.support.imports import import_orders
from tests.support.queues import make_queue
from tests.support.receivers import Receiver, closed_port
from tests.support.servers import (
    FTP_PASSWORD,
    FTP_USER,
    SFTP_PASSWORD,
    SFTP_USER,
    FtpServer,
    SftpServer,
)
from tests.support.smtp import running_smtp
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

# 10 KB of printable text that does not repeat within the cap, so the kept start is told apart from any other part.
LONG_ANSWER = bytes(33 + (n * 7 + n // 94) % 94 for n in range(10 * 1024))
QUERY_SECRET = "q-s3cret-4f1d9c"
HEADER_SECRET = "h-s3cret-77ab02"
TOKEN = "t-s3cret-b9e0aa"


def _fixture(request: pytest.FixtureRequest, name: str) -> Any:
    """A fixture of the delivery tests' or the back-office's conftest, imported here: asked for by name, as a
    parameter of that name would shadow the import."""
    return request.getfixturevalue(name)


def _attempt_of(client: Any, tenant: Tenant, status: str = ExportStatus.SUCCESS) -> ExportAttempt:
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    assert services.deliver(delivery_pk=delivery.pk) == status, delivery.error
    return ExportAttempt.objects.get()


# --- Web hooks ---------------------------------------------------------------------------------------------


def test_a_long_answer_is_kept_to_its_first_512_bytes(tenant, client, allow_loopback, receiver: Receiver) -> None:
    receiver.body = LONG_ANSWER
    make_queue(tenant, receiver.url, delivery={"secret_fields": []})

    attempt = _attempt_of(client, tenant)

    assert ANSWER_BYTES == 512
    assert attempt.answer == LONG_ANSWER[:512].decode()
    [got] = receiver.received
    assert attempt.sent == (
        f"POST {receiver.url}, {len(got.body):,} bytes application/json; headers X-Shop: ********; signed"
    )


def test_the_body_of_a_500_answer_is_kept(tenant, client, allow_loopback, receiver: Receiver) -> None:
    receiver.script = [500]
    receiver.body = "la base est en panne ✗".encode()
    make_queue(tenant, receiver.url)

    attempt = _attempt_of(client, tenant, ExportStatus.FAILURE)

    assert (attempt.ok, attempt.status_code, attempt.answer) == (False, 500, "la base est en panne ✗")


def test_an_answer_that_is_not_text_is_kept_with_replacement_characters(
    tenant, client, allow_loopback, receiver: Receiver
) -> None:
    receiver.body = b"ok \xff\xfe done"
    make_queue(tenant, receiver.url)

    attempt = _attempt_of(client, tenant)

    assert attempt.answer == "ok \ufffd\ufffd done"


def test_no_secret_of_the_url_headers_or_authorization_is_kept(
    tenant, client, allow_loopback, receiver: Receiver
) -> None:
    # The receiver refuses and echoes what it got: the request line (the URL's query) and every header.
    receiver.script = ["echo:401"]
    make_queue(
        tenant,
        f"{receiver.url}?token={QUERY_SECRET}&shop=acme",
        delivery={
            "headers": {"X-Api-Key": HEADER_SECRET, "Accept": "application/json"},
            "auth": {"type": "bearer", "token": TOKEN},
        },
    )

    attempt = _attempt_of(client, tenant, ExportStatus.FAILURE)

    kept = attempt.sent + attempt.answer + attempt.error
    assert HEADER_SECRET in receiver.received[0].headers["X-Api-Key"]  # it was sent
    assert not [secret for secret in (QUERY_SECRET, HEADER_SECRET, TOKEN) if secret in kept]
    assert attempt.sent.startswith("POST http://127.0.0.1:")
    assert "token=********&shop=********" in attempt.sent
    assert "headers Accept: application/json, X-Api-Key: ********; bearer authorization ********" in attempt.sent
    assert attempt.answer.startswith("denied POST ********?token=********&shop=********")


def test_a_refused_connection_keeps_what_was_sent_and_no_answer(tenant, client, allow_loopback) -> None:
    make_queue(tenant, f"http://127.0.0.1:{closed_port()}/hook")

    attempt = _attempt_of(client, tenant, ExportStatus.PENDING)

    assert attempt.sent.startswith("POST http://127.0.0.1:") and attempt.answer == ""
    assert attempt.error == "connection refused"


# --- E-mail, FTP, SFTP -------------------------------------------------------------------------------------


def test_an_email_attempt_keeps_the_relays_reply_to_the_message(tenant, client, settings) -> None:
    make_queue(
        tenant,
        "unused",
        delivery={"type": "email", "recipients": ["ops@example.com", "erp@example.com"], "subject": "Orders {date}"},
    )

    with running_smtp(settings):
        attempt = _attempt_of(client, tenant)

    assert attempt.answer == "250 Message accepted for delivery"
    delivery = ExportDelivery.objects.get()
    assert attempt.sent.startswith("2 recipients, subject 'Orders ")
    assert f"attachment '{delivery.delivery_id}.json' (" in attempt.sent and "bytes application/json)" in attempt.sent
    assert "ops@example.com" not in attempt.sent  # a count, not the addresses


def test_an_email_refused_by_the_relay_keeps_its_reply(tenant, client, settings) -> None:
    make_queue(tenant, "unused", delivery={"type": "email", "recipients": ["ops@example.com"]})

    with running_smtp(settings) as smtp:
        smtp.recorder.data_reply = "554 5.7.1 Message rejected as spam"
        attempt = _attempt_of(client, tenant, ExportStatus.FAILURE)

    assert attempt.answer == "554 5.7.1 Message rejected as spam"
    assert attempt.sent.startswith("1 recipient, subject ")


def _file_queue(tenant: Tenant, kind: str, port: int, password: str, user: str) -> None:
    delivery: dict[str, Any] = {
        "type": kind,
        "host": "127.0.0.1",
        "port": port,
        "username": user,
        "password": password,
        "path": "exports/{delivery_id}.{ext}",
    }
    if kind == "sftp":
        delivery["insecure_accept_any_host_key"] = True
    make_queue(tenant, "unused", delivery=delivery)


def test_an_ftp_attempt_keeps_the_remote_path_and_the_servers_last_reply(
    tenant, client, allow_loopback, request
) -> None:
    ftp: FtpServer = _fixture(request, "ftp_server")
    _file_queue(tenant, "ftp", ftp.port, FTP_PASSWORD, FTP_USER)

    attempt = _attempt_of(client, tenant)

    delivery = ExportDelivery.objects.get()
    [uploaded] = (ftp.root / "exports").iterdir()
    size = uploaded.stat().st_size
    assert attempt.sent == f"ftp://127.0.0.1:{ftp.port} exports/{delivery.delivery_id}.json, {size:,} bytes"
    assert attempt.answer.startswith("250 ")  # the rename's reply


def test_an_ftp_login_refused_keeps_the_servers_reply_and_not_the_password(
    tenant, client, allow_loopback, request
) -> None:
    ftp: FtpServer = _fixture(request, "ftp_server")
    _file_queue(tenant, "ftp", ftp.port, "wrong-Passw0rd-1", FTP_USER)

    attempt = _attempt_of(client, tenant, ExportStatus.FAILURE)

    assert attempt.answer.startswith("530 ")
    assert "wrong-Passw0rd-1" not in attempt.sent + attempt.answer + attempt.error


def test_an_sftp_attempt_keeps_the_remote_path_and_the_servers_identification(
    tenant, client, allow_loopback, request
) -> None:
    sftp: SftpServer = _fixture(request, "sftp_server")
    _file_queue(tenant, "sftp", sftp.port, SFTP_PASSWORD, SFTP_USER)

    attempt = _attempt_of(client, tenant)

    delivery = ExportDelivery.objects.get()
    assert attempt.sent.startswith(f"sftp://127.0.0.1:{sftp.port} exports/{delivery.delivery_id}.json, ")
    assert attempt.answer.startswith("SSH-2.0-")
    assert SFTP_PASSWORD not in attempt.sent + attempt.answer


# --- Where they are shown ----------------------------------------------------------------------------------


def test_the_item_page_shows_what_was_sent_and_the_answer_escaped(
    tenant, client, allow_loopback, receiver: Receiver, request
) -> None:
    signed_in: SignIn = _fixture(request, "sign_in")
    receiver.script = [500]
    receiver.body = b"<script>alert(1)</script> broken"
    make_queue(tenant, receiver.url)
    attempt = _attempt_of(client, tenant, ExportStatus.FAILURE)
    item = ExportItem.objects.get()

    page = signed_in(tenant.account, "viewer").get(f"/backoffice/exports/log/{item.pk}/")

    assert page.status_code == 200
    html = page.content.decode()
    assert "<details" in html and attempt.sent in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; broken" in html and "<script>alert(1)" not in html
