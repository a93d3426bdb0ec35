"""The receiving examples of docs/receiving-webhooks.md (docs/examples/receiving/: Python, Node, PHP), each run as
its own server on 127.0.0.1 and sent a real signed web hook export by our delivery: the real one verifies, a
tampered body does not. Node and PHP must be installed (CI installs php-cli: .ci/run); a missing one fails."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import requests
from rest_framework.test import APIClient

from exports import services
from exports.models import ExportDelivery, ExportQueue, ExportStatus
from imports import services as import_services
from imports.models import ImportItem, ImportStatus
from tests.support.ports import free_port
from tests.support.receivers import Receiver, running_receiver
from tests.support.tenants import Tenant

pytestmark = pytest.mark.django_db

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples" / "receiving"
SECRET = "whsec_" + base64.b64encode(b"receiving-examples-secret-32byte").decode()
STARTUP_SECONDS = 20


def _required(program: str) -> str:
    found = shutil.which(program)
    assert found, f"{program} is not installed: the receiving examples need it (see .ci/run)"
    return found


@pytest.fixture(scope="session")
def node_modules() -> Path:
    """The Node example's packages, installed with ``npm ci`` once per lock file into a cache directory."""
    npm = _required("npm")
    lock = (EXAMPLES / "node" / "package-lock.json").read_bytes()
    cache = Path(os.environ.get("VAR_DIR") or tempfile.gettempdir()) / "receiving-node"
    target = cache / hashlib.sha256(lock).hexdigest()[:16]
    if not (target / "node_modules" / "standardwebhooks").is_dir():
        cache.mkdir(parents=True, exist_ok=True)
        work = Path(tempfile.mkdtemp(dir=cache))
        for name in ("package.json", "package-lock.json"):
            shutil.copy(EXAMPLES / "node" / name, work / name)
        subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=work, check=True, capture_output=True, timeout=300)
        try:
            work.rename(target)
        except OSError:  # another session installed it meanwhile
            shutil.rmtree(work, ignore_errors=True)
    return target / "node_modules"


def _accepting(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class Example:
    language: str
    url: str


@pytest.fixture(params=["python", "node", "php"])
def example(request: pytest.FixtureRequest) -> Iterator[Example]:
    language: str = request.param
    port = free_port()
    env = {**os.environ, "WEBHOOK_SECRET": SECRET, "PORT": str(port)}
    if language == "python":
        command = [sys.executable, str(EXAMPLES / "python" / "receiver.py")]
    elif language == "node":
        env["NODE_PATH"] = str(request.getfixturevalue("node_modules"))
        command = [_required("node"), str(EXAMPLES / "node" / "receiver.js")]
    else:
        command = [_required("php"), "-S", f"127.0.0.1:{port}", str(EXAMPLES / "php" / "receiver.php")]
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + STARTUP_SECONDS
        while not _accepting(port):
            assert process.poll() is None, process.stderr.read().decode() if process.stderr else ""
            assert time.monotonic() < deadline, f"the {language} example did not listen within {STARTUP_SECONDS} s"
            time.sleep(0.05)
        yield Example(language, f"http://127.0.0.1:{port}/hooks/orders")
    finally:
        process.terminate()
        process.wait(timeout=10)


@pytest.fixture
def capture() -> Iterator[Receiver]:
    with running_receiver() as receiver:
        yield receiver


def _queue(tenant: Tenant, name: str, url: str) -> ExportQueue:
    return ExportQueue.objects.create(
        account=tenant.account,
        name=name,
        entity_type="incoming_order_state_changes",
        trigger="realtime",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": url, "secret": SECRET, "read_timeout": 5},
    )


def _import_an_order(client: APIClient, tenant: Tenant) -> None:
    order = {
        "order_identifier": "web-1",
        "basket": {
            "currency": "DKK",
            "line_items": [{"product_identifier": "1001", "name": "Æbleskiver", "quantity": 2, "price": 49.95}],
        },
    }
    response = client.post(
        f"/imports/incoming_orders?{tenant.query(stock_location='shop-1')}", {"orders": [order]}, format="json"
    )
    assert response.status_code == 200
    pending = ImportItem.objects.filter(account=tenant.account, status=ImportStatus.PENDING)
    import_services.materialise_items(account_id=tenant.account.pk, item_ids=list(pending.values_list("id", flat=True)))


def test_each_example_verifies_a_real_export_and_refuses_a_tampered_body(
    client: APIClient, tenant: Tenant, settings: object, example: Example, capture: Receiver
) -> None:
    settings.OUTBOUND_ALLOWED_NETWORKS = ["127.0.0.1/32"]  # type: ignore[attr-defined]
    to_example = _queue(tenant, "to the example", example.url)
    to_capture = _queue(tenant, "captured", capture.url)
    _import_an_order(client, tenant)

    # Our delivery, straight to the example: it succeeds only when the example verified it (204).
    delivery = ExportDelivery.objects.get(queue=to_example)
    assert services.deliver(delivery_pk=delivery.pk) == ExportStatus.SUCCESS
    assert delivery.attempt_log.get().status_code == 204

    # The same export as captured on the way, sent again as it came and with its body changed.
    assert services.deliver(delivery_pk=ExportDelivery.objects.get(queue=to_capture).pk) == ExportStatus.SUCCESS
    [got] = capture.received
    headers = {name: got.headers[name] for name in ("webhook-id", "webhook-timestamp", "webhook-signature")}
    headers["Content-Type"] = "application/json"
    again = requests.post(example.url, data=got.body, headers=headers, timeout=10)
    assert again.status_code == 204
    body = json.loads(got.body)
    [key] = body
    body[key]["order"]["basket"]["line_items"][0]["price"] = 0.01
    tampered = json.dumps(body).encode()
    refused = requests.post(example.url, data=tampered, headers=headers, timeout=10)
    assert refused.status_code == 400
    resigned = requests.post(example.url, data=got.body, headers={**headers, "webhook-id": "msg_other"}, timeout=10)
    assert resigned.status_code == 400
