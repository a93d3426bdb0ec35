"""A web hook's secrets are known by declaration, not by name: the signing secret, every auth value, every header
value (but a few public headers), the URL's userinfo and query values, and its path (a hook URL is often a
capability). Masked on every read, kept when sent back masked for the same destination, never in the export log
or a log line - even when the receiver echoes what it got."""

from __future__ import annotations

import base64
import json
import logging
from typing import Any

import pytest

from exports import services
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from tests.support.admin import admin_url
from tests.support.api import AdminApi, error_fields
from tests.support.imports import import_orders
from tests.support.queues import SECRET, make_queue
from tests.support.receivers import Receiver

pytestmark = pytest.mark.django_db

MASK = "********"
USER = "hookuser-Secret-11"
PASSWORD = "hookpass-Secret-12"
PATH_TOKEN = "hookpath-Secret-13"
URL_TOKEN = "hookq-Secret-14"
HEADER = "hookhdr-Secret-15"
BASIC = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
ALL = (USER, PASSWORD, PATH_TOKEN, URL_TOKEN, HEADER, BASIC, SECRET)


def hook(receiver: Receiver, *, userinfo: bool = True) -> dict[str, Any]:
    address = receiver.url.split("//", 1)[1].split("/", 1)[0]
    credentials = f"{USER}:{PASSWORD}@" if userinfo else ""
    delivery: dict[str, Any] = {
        "type": "webhook",
        "url": f"http://{credentials}{address}/services/T0/{PATH_TOKEN}?sig={URL_TOKEN}",
        "headers": {"X-Anything": HEADER, "Accept": "application/json"},
        "secret": SECRET,
        "read_timeout": 2,
    }
    if not userinfo:
        delivery["auth"] = {"type": "basic", "username": USER, "password": PASSWORD}
    return delivery


@pytest.fixture
def queue(tenant, receiver: Receiver, allow_loopback: None) -> ExportQueue:
    return make_queue(tenant, "unused", delivery=hook(receiver))


def assert_no_secret(*texts: str) -> None:
    for text in texts:
        for secret in ALL:
            assert secret not in text


def test_every_read_masks_the_web_hook_secrets(api: AdminApi, admin_client, queue: ExportQueue, receiver) -> None:
    read = api.get(f"export-queues/{queue.pk}")
    listed = api.get("export-queues")
    page = admin_client.get(admin_url(ExportQueue, "change", queue.pk))

    assert_no_secret(read.content.decode(), listed.content.decode(), page.content.decode())
    address = receiver.url.split("//", 1)[1].split("/", 1)[0]
    shown = read.json()["delivery"]
    assert shown["url"] == f"http://{MASK}@{address}/{MASK}?sig={MASK}"
    assert shown["headers"] == {"X-Anything": MASK, "Accept": "application/json"}


def test_basic_auth_values_are_masked(api: AdminApi, tenant, receiver: Receiver, allow_loopback: None) -> None:
    queue = make_queue(tenant, "unused", delivery=hook(receiver, userinfo=False))

    shown = api.get(f"export-queues/{queue.pk}").json()["delivery"]

    assert shown["auth"] == {"type": "basic", "username": MASK, "password": MASK}


def test_what_was_read_put_back_keeps_every_secret(api: AdminApi, queue: ExportQueue) -> None:
    before = dict(queue.delivery)
    read = api.get(f"export-queues/{queue.pk}").json()
    assert read["delivery"]["headers"]["X-Anything"] == MASK and MASK in read["delivery"]["url"]
    body = {k: read[k] for k in ("name", "entity_type", "trigger", "transform", "delivery")}

    response = api.put(f"export-queues/{queue.pk}", body)

    assert response.status_code == 200, response.json()
    assert ExportQueue.objects.get().delivery == before


def test_another_host_does_not_get_the_stored_secrets(api: AdminApi, queue: ExportQueue) -> None:
    before = dict(queue.delivery)
    read = api.get(f"export-queues/{queue.pk}").json()
    moved = {**read["delivery"], "url": read["delivery"]["url"].replace("127.0.0.1", "collector.example")}

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": moved})
    headers_only = api.patch(
        f"export-queues/{queue.pk}", {"delivery": {**moved, "url": "https://collector.example/in"}}
    )

    assert response.status_code == 400 and error_fields(response) == {"delivery.url"}
    assert headers_only.status_code == 400 and error_fields(headers_only) == {"delivery.headers.X-Anything"}
    assert ExportQueue.objects.get().delivery == before

    # The signing secret never leaves the service: it is kept for another host.
    delivery = {"type": "webhook", "url": "https://collector.example/in", "secret": MASK}
    response = api.patch(f"export-queues/{queue.pk}", {"delivery": delivery})
    assert response.status_code == 200, response.json()
    assert ExportQueue.objects.get().delivery == {**delivery, "secret": SECRET}


def test_a_path_declared_public_is_not_revealed_by_sending_its_mask_back(api: AdminApi, queue: ExportQueue) -> None:
    read = api.get(f"export-queues/{queue.pk}").json()
    given_again = read["delivery"]["url"].replace(f"/{MASK}?", "/hooks/orders?")

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": {**read["delivery"], "secret_fields": []}})
    shown = api.patch(
        f"export-queues/{queue.pk}", {"delivery": {**read["delivery"], "url": given_again, "secret_fields": []}}
    )

    assert response.status_code == 400 and error_fields(response) == {"delivery.url"}
    assert shown.status_code == 200, shown.json()
    assert shown.json()["delivery"]["url"] == given_again
    assert ExportQueue.objects.get().delivery["url"].startswith(f"http://{USER}:{PASSWORD}@")


def test_only_the_path_may_be_declared(api: AdminApi, queue: ExportQueue) -> None:
    read = api.get(f"export-queues/{queue.pk}").json()

    response = api.patch(f"export-queues/{queue.pk}", {"delivery": {**read["delivery"], "secret_fields": ["x"]}})

    assert response.status_code == 400 and error_fields(response) == {"delivery.secret_fields"}


@pytest.mark.parametrize("userinfo", [True, False], ids=["credentials in the URL", "basic auth"])
def test_no_secret_reaches_the_export_log_or_a_log_line(
    api: AdminApi, tenant, client, receiver: Receiver, allow_loopback: None, caplog, userinfo: bool
) -> None:
    make_queue(tenant, "unused", delivery=hook(receiver, userinfo=userinfo))
    import_orders(client, tenant, "web-1")
    receiver.script.append("echo:401")  # a receiver that answers with everything it got
    caplog.set_level(logging.DEBUG)

    assert services.deliver(delivery_pk=ExportDelivery.objects.get().pk) == ExportStatus.FAILURE

    [got] = receiver.received
    assert got.headers["X-Anything"] == HEADER and got.headers["Authorization"] == f"Basic {BASIC}"
    assert PATH_TOKEN in got.path and URL_TOKEN in got.path  # all were sent
    attempt = ExportAttempt.objects.get()
    assert attempt.error.startswith("HTTP 401: denied POST")
    rows = [
        json.dumps(list(model.objects.values()), default=str) for model in (ExportAttempt, ExportDelivery, ExportItem)
    ]
    log = api.get("export-logs").content.decode()
    assert "HTTP 401: denied" in log
    assert_no_secret(*rows, log, caplog.text)
    assert "urllib3.connectionpool" in caplog.text  # the request's debug line was there, redacted


def test_an_ftp_password_is_kept_for_the_same_server_only(api: AdminApi) -> None:
    delivery = {"type": "ftp", "host": "ftp.acme.example", "username": "u", "password": "ftp-Secret-17"}
    body = {"name": "ftp", "entity_type": "sales", "transform": {"type": "identity"}, "delivery": delivery}
    created = api.post("export-queues", body).json()
    shown = created["delivery"]
    assert shown["password"] == MASK

    moved = api.patch(f"export-queues/{created['id']}", {"delivery": {**shown, "host": "ftp.collector.example"}})
    renamed = api.patch(f"export-queues/{created['id']}", {"delivery": {**shown, "username": "v"}})

    assert moved.status_code == 400 and error_fields(moved) == {"delivery.password"}
    assert renamed.status_code == 200, renamed.json()
    assert ExportQueue.objects.get().delivery == {**delivery, "username": "v"}
