"""Exports behind a circuit breaker per endpoint; queues disabled after days of failure."""

from __future__ import annotations

import importlib
import socket
import threading
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.utils import timezone

from core import breaker
from core.models import BreakerState, CircuitBreaker
from exports import circuit, services
from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus
from tests.support.admin import admin_url
from tests.support.imports import import_orders
from tests.support.outbound import cool_down_over
from tests.support.queues import make_queue
from tests.support.receivers import Receiver, closed_port
from tests.support.tenants import make_tenant

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _settings(settings: Any) -> None:
    settings.BREAKER_FAILURE_THRESHOLD = 2
    settings.BREAKER_COOLDOWN_SECONDS = 30
    settings.EXPORT_RETRY_BASE_DELAY = 0.01
    settings.EXPORT_QUEUE_DISABLE_AFTER_DAYS = 5


def due(*deliveries: ExportDelivery) -> None:
    ExportDelivery.objects.filter(pk__in=[d.pk for d in deliveries]).update(
        next_attempt_at=timezone.now() - timedelta(seconds=1)
    )


def deliver(delivery: ExportDelivery) -> str | None:
    due(delivery)
    return services.deliver(delivery_pk=delivery.pk)


def open_breaker(tenant: Any, client: Any, receiver: Receiver, count: int = 3) -> list[ExportDelivery]:
    """A queue to ``receiver`` answering 503 twice: the first delivery's two attempts open the breaker.
    Returns the ``count`` deliveries, oldest first."""
    receiver.script = [503, 503]
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, *[f"web-{n}" for n in range(count)])
    deliveries = list(ExportDelivery.objects.order_by("pk"))
    assert deliver(deliveries[0]) == ExportStatus.PENDING
    assert deliver(deliveries[0]) == ExportStatus.PENDING
    assert len(receiver.received) == 2
    return deliveries


def test_an_open_breaker_pauses_a_delivery_without_any_request(tenant, client, allow_loopback, receiver):
    _, second, _ = open_breaker(tenant, client, receiver)
    state = CircuitBreaker.objects.get()
    assert state.state == BreakerState.OPEN

    assert services.deliver(delivery_pk=second.pk) == ExportStatus.PENDING

    assert len(receiver.received) == 2  # the receiver counted no request
    second.refresh_from_db()
    assert second.attempts == 0
    assert not ExportAttempt.objects.filter(delivery=second).exists()
    assert second.paused_until == state.open_until
    assert second.next_attempt_at == state.open_until
    assert second.pause_reason.startswith("paused: endpoint circuit open until ")
    assert second.lease_until is None
    assert ExportItem.objects.get(delivery=second).status == ExportStatus.PENDING


def test_a_paused_delivery_keeps_its_retry_budget(tenant, client, allow_loopback, receiver):
    first, _, _ = open_breaker(tenant, client, receiver)
    first.refresh_from_db()
    assert first.attempts == 2
    for _ in range(5):  # the breaker stays open: none of these is an attempt
        assert deliver(first) == ExportStatus.PENDING
    first.refresh_from_db()
    assert first.attempts == 2
    assert first.status_code == 503  # the last real attempt's outcome stays
    cool_down_over()

    assert deliver(first) == ExportStatus.SUCCESS  # the trial call
    first.refresh_from_db()
    assert first.attempts == 3
    assert (first.paused_until, first.pause_reason) == (None, "")
    assert list(ExportAttempt.objects.filter(delivery=first).values_list("number", "ok")) == [
        (1, False),
        (2, False),
        (3, True),
    ]
    assert CircuitBreaker.objects.get().state == BreakerState.CLOSED


def test_the_spec_retry_rule_still_gives_five_real_attempts(tenant, client, allow_loopback, receiver):
    receiver.script = [503] * 10
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    delivery = ExportDelivery.objects.get()
    for _ in range(30):
        if deliver(delivery) == ExportStatus.FAILURE:
            break
        cool_down_over()  # each trial fails and opens it again; a paused run in between costs nothing
        deliver(delivery)
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts, len(receiver.received)) == (ExportStatus.FAILURE, 5, 5)


def test_a_failed_trial_opens_it_again_and_pauses_the_others(tenant, client, allow_loopback, receiver):
    _, second, third = open_breaker(tenant, client, receiver)
    receiver.script = [503]
    cool_down_over()
    assert deliver(second) == ExportStatus.PENDING  # the trial: 503
    assert len(receiver.received) == 3
    assert deliver(third) == ExportStatus.PENDING  # paused
    assert len(receiver.received) == 3
    assert CircuitBreaker.objects.get().trips == 2


def test_a_refusal_of_the_request_is_no_failure_of_the_destination(tenant, client, allow_loopback, receiver):
    receiver.script = [400, 401, 404]
    make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1", "web-2", "web-3", "web-4")
    statuses = [deliver(d) for d in ExportDelivery.objects.order_by("pk")]
    assert statuses == [ExportStatus.FAILURE] * 3 + [ExportStatus.SUCCESS]
    assert len(receiver.received) == 4


def test_another_tenant_sending_to_the_same_host_is_not_paused(tenant, client, allow_loopback, receiver):
    open_breaker(tenant, client, receiver, count=1)
    other = make_tenant("globex")
    make_queue(other, receiver.url)
    import_orders(client, other, "web-9")
    delivery = ExportDelivery.objects.get(account=other.account)
    assert deliver(delivery) == ExportStatus.SUCCESS
    assert len(receiver.received) == 3


@pytest.mark.parametrize("status", [503, 500])
def test_a_broken_endpoint_does_not_pause_a_healthy_one_of_the_account_on_the_same_origin(
    tenant, client, allow_loopback, receiver, status
):
    origin = receiver.url.rsplit("/", 1)[0]
    receiver.always["/broken"] = status
    broken = make_queue(tenant, f"{origin}/broken", name="broken")
    healthy = make_queue(tenant, f"{origin}/healthy", name="healthy")
    import_orders(client, tenant, "web-1", "web-2")
    for delivery in ExportDelivery.objects.filter(queue=broken).order_by("pk"):  # a 500 is not retried: 2 deliveries
        assert deliver(delivery) in (ExportStatus.PENDING, ExportStatus.FAILURE)
    assert CircuitBreaker.objects.get().state == BreakerState.OPEN
    import_orders(client, tenant, "web-3")

    for delivery in ExportDelivery.objects.filter(queue=healthy).order_by("pk"):
        assert deliver(delivery) == ExportStatus.SUCCESS
    assert deliver(ExportDelivery.objects.filter(queue=broken).order_by("pk")[2]) == ExportStatus.PENDING

    paths = [got.path for got in receiver.received]
    assert paths.count("/healthy") == 3 and paths.count("/broken") == 2  # the paused one sent nothing
    assert not ExportDelivery.objects.filter(queue=healthy).exclude(status=ExportStatus.SUCCESS).exists()
    assert ExportDelivery.objects.filter(queue=healthy, paused_until__isnull=False).count() == 0
    assert breaker.allow(circuit.key_of(healthy) or "").allowed
    assert "closed: no failure" in circuit.describe(healthy) and "open until" in circuit.describe(broken)


def test_a_host_refusing_connections_pauses_the_accounts_other_endpoints_there(tenant, client, allow_loopback):
    origin = f"http://127.0.0.1:{closed_port()}"
    orders = make_queue(tenant, f"{origin}/orders", name="orders")
    stock = make_queue(tenant, f"{origin}/stock", name="stock")
    other = make_tenant("globex")
    theirs = make_queue(other, f"{origin}/orders")
    import_orders(client, tenant, "web-1")
    import_orders(client, other, "web-9")
    first = ExportDelivery.objects.get(queue=orders)
    assert deliver(first) == ExportStatus.PENDING and deliver(first) == ExportStatus.PENDING  # refused twice

    assert deliver(ExportDelivery.objects.get(queue=stock)) == ExportStatus.PENDING
    assert deliver(ExportDelivery.objects.get(queue=theirs)) == ExportStatus.PENDING

    paused = ExportDelivery.objects.get(queue=stock)
    assert paused.attempts == 0 and not ExportAttempt.objects.filter(delivery=paused).exists()
    assert paused.pause_reason.startswith("paused: host circuit (connections failing) open until")
    tried = ExportDelivery.objects.get(queue=theirs)  # another account's breaker of that host is its own
    assert tried.paused_until is None and ExportAttempt.objects.filter(delivery=tried).count() == 1
    assert "connections to the host: open until" in circuit.describe(stock)


def test_a_breaker_keyed_per_origin_before_strands_no_delivery_and_is_deleted(tenant, client, allow_loopback, receiver):
    queue = make_queue(tenant, receiver.url)
    old_key = f"acct:{tenant.account.pk}|{breaker.origin(receiver.url)}"
    CircuitBreaker.objects.create(
        key=old_key, state=BreakerState.OPEN, failures=5, open_until=timezone.now() + timedelta(minutes=5)
    )
    import_orders(client, tenant, "web-1")

    assert deliver(ExportDelivery.objects.get(queue=queue)) == ExportStatus.SUCCESS

    breaker.record_failure(circuit.key_of(queue) or "", error="kept")
    migration = importlib.import_module("core.migrations.0003_breakers_per_endpoint")
    migration.delete_origin_keys(django_apps, None)
    assert list(CircuitBreaker.objects.values_list("key", flat=True)) == [circuit.key_of(queue)]


def test_endpoint_keys_tell_endpoints_apart_and_stay_short_and_secret_free(tenant, settings) -> None:
    def key(**delivery: Any) -> str | None:
        queue = ExportQueue(account=tenant.account, delivery=delivery)
        return circuit.key_of(queue)

    hook = "https://erp.example.com/hooks/path-Secret-1?sig=query-Secret-2"
    keys = {
        "hook": key(type="webhook", url=hook),
        "hook, other path": key(type="webhook", url="https://erp.example.com/hooks/other"),
        "ftp out": key(type="ftp", host="files.example.com", username="u", path="out/{date}/{delivery_id}.{ext}"),
        "ftp in": key(type="ftp", host="files.example.com", username="u", path="in/{delivery_id}.{ext}"),
        "ftp, other user": key(type="ftp", host="files.example.com", username="v", path="out/{delivery_id}.{ext}"),
        "sftp": key(type="sftp", host="files.example.com", username="u", path="out/{delivery_id}.{ext}"),
        "mail to ops": key(type="email", recipients=["ops@acme.example"]),
        "mail to erp": key(type="email", recipients=["erp@acme.example", "ops@acme.example"]),
    }
    long_host = ".".join(["a" * 60] * 4) + ".example"

    assert len(set(keys.values())) == len(keys) and None not in keys.values()
    assert key(type="webhook", url="HTTPS://ERP.example.com:443/hooks/path-Secret-1?sig=query-Secret-2") == keys["hook"]
    assert key(type="ftp", host="files.example.com", username="u", path="out/{date}/x") == keys["ftp out"]
    assert key(type="email", recipients=["ops@acme.example", "ERP@acme.example"]) == keys["mail to erp"]
    assert keys["hook"].startswith(f"acct:{tenant.account.pk}|https://erp.example.com:443|")
    assert "Secret" not in keys["hook"]
    long_key = key(type="webhook", url=f"https://{long_host}/{'p' * 5000}")
    assert long_key is not None and len(long_key) <= 300
    assert long_key != key(type="webhook", url=f"https://{long_host}/{'q' * 5000}")


@pytest.fixture
def silent_server() -> Iterator[dict[str, Any]]:
    """A TCP server on 127.0.0.1 that counts connections and closes each at once (a broken FTP/SFTP/SMTP
    server)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    state: dict[str, Any] = {"port": listener.getsockname()[1], "connections": 0}

    def serve() -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:
                return
            state["connections"] += 1
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield state
    finally:
        listener.close()


def _file_queue(tenant: Any, kind: str, port: int) -> ExportQueue:
    delivery: dict[str, Any] = {"type": kind, "host": "127.0.0.1", "port": port, "username": "u", "password": "p"}
    if kind == "sftp":
        delivery["insecure_accept_any_host_key"] = True
    if kind == "email":
        delivery = {"type": "email", "recipients": ["ops@example.com"]}
    return ExportQueue.objects.create(
        account=tenant.account,
        name=kind,
        entity_type="incoming_order_state_changes",
        transform={"type": "identity"},
        delivery=delivery,
    )


@pytest.mark.parametrize("kind", ["ftp", "sftp", "email"])
def test_a_broken_file_or_mail_server_opens_the_breaker_and_is_not_connected_to_again(
    tenant, client, allow_loopback, settings, silent_server, kind
):
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", silent_server["port"], 5
    _file_queue(tenant, kind, silent_server["port"])
    import_orders(client, tenant, "web-1", "web-2", "web-3")
    first, second, third = ExportDelivery.objects.order_by("pk")
    assert deliver(first) == ExportStatus.FAILURE  # not retried (spec: only web hooks), but counted
    assert deliver(second) == ExportStatus.FAILURE
    assert silent_server["connections"] == 2

    assert deliver(third) == ExportStatus.PENDING
    assert silent_server["connections"] == 2
    third.refresh_from_db()
    assert third.attempts == 0 and third.paused_until is not None
    target = circuit.target_of(ExportQueue.objects.get())
    assert target is not None
    # A file server that closes at once never spoke: its host's connections failed. The relay greeted nothing
    # either, but smtplib reports a disconnection, which counts on the endpoint (relay and recipients).
    opened = CircuitBreaker.objects.get(state=BreakerState.OPEN).key
    assert opened == (target.key if kind == "email" else target.host)


# --- Auto-disable ---------------------------------------------------------------------------------------


def failing_for(queue: ExportQueue, days: float) -> None:
    ExportQueue.objects.filter(pk=queue.pk).update(failing_since=timezone.now() - timedelta(days=days))


def test_a_failure_marks_when_the_queue_started_failing_and_a_success_clears_it(
    tenant, client, allow_loopback, receiver
):
    receiver.script = [400]
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1", "web-2")
    first, second = ExportDelivery.objects.order_by("pk")
    deliver(first)
    queue.refresh_from_db()
    assert queue.failing_since is not None
    deliver(second)
    queue.refresh_from_db()
    assert queue.failing_since is None


def test_a_queue_failing_for_the_set_days_is_disabled_with_its_reason(tenant, client, allow_loopback, receiver):
    receiver.script = [400]
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1", "web-2")
    first, second = ExportDelivery.objects.order_by("pk")
    failing_for(queue, 5.1)

    assert deliver(first) == ExportStatus.FAILURE

    queue.refresh_from_db()
    assert not queue.enabled
    assert queue.disabled_at is not None
    assert queue.disabled_reason.startswith("disabled automatically: every delivery has failed since")
    # As Svix: a disabled destination receives nothing; what was waiting ends failed with the reason.
    second.refresh_from_db()
    assert second.status == ExportStatus.FAILURE and second.error == queue.disabled_reason
    assert ExportItem.objects.get(delivery=second).message == queue.disabled_reason
    import_orders(client, tenant, "web-3")
    assert not ExportItem.objects.filter(element_key__startswith="web-3").exists()
    assert len(receiver.received) == 1


def test_a_queue_failing_for_less_is_kept(tenant, client, allow_loopback, receiver):
    receiver.script = [400]
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    failing_for(queue, 4.9)
    deliver(ExportDelivery.objects.get())
    queue.refresh_from_db()
    assert queue.enabled and queue.disabled_at is None


def test_a_queue_paused_by_its_breaker_for_the_set_days_is_disabled(tenant, client, allow_loopback, receiver):
    _, second, _ = open_breaker(tenant, client, receiver)
    queue = ExportQueue.objects.get()
    failing_for(queue, 6)
    deliver(second)  # paused, then ended by the disable
    queue.refresh_from_db()
    assert not queue.enabled and queue.disabled_reason
    second.refresh_from_db()
    assert (second.status, second.attempts) == (ExportStatus.FAILURE, 0)


def test_zero_days_never_disables(tenant, client, allow_loopback, receiver, settings):
    settings.EXPORT_QUEUE_DISABLE_AFTER_DAYS = 0
    receiver.script = [400]
    queue = make_queue(tenant, receiver.url)
    import_orders(client, tenant, "web-1")
    failing_for(queue, 365)
    deliver(ExportDelivery.objects.get())
    queue.refresh_from_db()
    assert queue.enabled


def disabled_queue(tenant: Any, client: Any, receiver: Receiver) -> ExportQueue:
    open_breaker(tenant, client, receiver, count=1)
    queue = ExportQueue.objects.get()
    assert circuit.disable_queue(queue=queue, reason="disabled automatically: test")
    queue.refresh_from_db()
    return queue


def test_the_api_shows_why_a_queue_was_disabled(tenant, client, allow_loopback, receiver, api):
    queue = disabled_queue(tenant, client, receiver)
    body = api.get(f"export-queues/{queue.pk}").json()
    assert body["enabled"] is False
    assert body["disabled_reason"] == "disabled automatically: test"
    assert body["disabled_at"] is not None


def test_the_enable_endpoint_enables_it_and_closes_the_breaker(tenant, client, allow_loopback, receiver, api):
    queue = disabled_queue(tenant, client, receiver)
    assert CircuitBreaker.objects.exists()
    response = api.post(f"export-queues/{queue.pk}/enable")
    assert response.status_code == 200, response.content
    assert (response.json()["enabled"], response.json()["disabled_reason"]) == (True, "")
    assert not CircuitBreaker.objects.exists()
    import_orders(client, tenant, "web-5")
    delivery = ExportDelivery.objects.get(items__element_key__startswith="web-5")
    assert deliver(delivery) == ExportStatus.SUCCESS


def test_patching_enabled_true_does_the_same(tenant, client, allow_loopback, receiver, api):
    queue = disabled_queue(tenant, client, receiver)
    response = api.patch(f"export-queues/{queue.pk}", {"enabled": True})
    assert response.status_code == 200, response.content
    queue.refresh_from_db()
    assert queue.enabled and queue.disabled_at is None and queue.disabled_reason == ""
    assert breaker.allow(circuit.key_of(queue) or "").allowed
    assert not CircuitBreaker.objects.exists()


def test_another_account_cannot_enable_the_queue(tenant, client, allow_loopback, receiver, other_tenant):
    queue = disabled_queue(tenant, client, receiver)
    response = client.post(f"/api/v1/export-queues/{queue.pk}/enable/?{other_tenant.query(other_tenant.admin_key)}")
    assert response.status_code == 404


def test_the_export_log_shows_a_paused_delivery(tenant, client, allow_loopback, receiver, api):
    _, second, _ = open_breaker(tenant, client, receiver)
    services.deliver(delivery_pk=second.pk)
    item = ExportItem.objects.get(delivery=second)
    body = api.get(f"export-logs/{item.pk}").json()
    assert body["status"] == "pending"
    assert body["paused_until"] is not None
    assert body["pause_reason"].startswith("paused: endpoint circuit open until")


def test_the_admin_shows_why_a_queue_was_disabled(tenant, client, allow_loopback, receiver, admin_client):
    queue = disabled_queue(tenant, client, receiver)
    page = admin_client.get(admin_url(ExportQueue, "change", queue.pk)).content.decode()
    assert "disabled automatically: test" in page


def test_the_admin_action_enables_it_and_closes_the_breaker(tenant, client, allow_loopback, receiver, admin_client):
    queue = disabled_queue(tenant, client, receiver)
    response = admin_client.post(
        admin_url(ExportQueue, "changelist"),
        {"action": "enable_queues", "_selected_action": [str(queue.pk)]},
        follow=True,
    )
    assert "Enabled 1 queue(s)." in response.content.decode()
    queue.refresh_from_db()
    assert queue.enabled and queue.disabled_reason == ""
    assert not CircuitBreaker.objects.exists()


def test_the_admin_shows_a_paused_delivery(tenant, client, allow_loopback, receiver, admin_client):
    _, second, _ = open_breaker(tenant, client, receiver)
    services.deliver(delivery_pk=second.pk)
    page = admin_client.get(admin_url(ExportDelivery, "change", second.pk)).content.decode()
    assert "paused: endpoint circuit open until" in page


def test_the_admin_queue_page_shows_the_destination_breaker(tenant, client, allow_loopback, receiver, admin_client):
    open_breaker(tenant, client, receiver, count=1)
    page = admin_client.get(admin_url(ExportQueue, "change", ExportQueue.objects.get().pk)).content.decode()
    assert "open until" in page and "2 failure(s) in a row" in page


def test_items_retried_while_the_queue_is_disabled_are_not_sent(tenant, client, allow_loopback, receiver, api):
    queue = disabled_queue(tenant, client, receiver)
    sent = len(receiver.received)
    assert api.post(f"export-queues/{queue.pk}/retry", {}).json() == {"retried": 1}
    delivery = ExportDelivery.objects.filter(status=ExportStatus.PENDING).get()
    assert deliver(delivery) == ExportStatus.FAILURE
    delivery.refresh_from_db()
    assert delivery.error.startswith("not sent: the export queue is disabled")
    assert len(receiver.received) == sent


def test_a_cron_window_is_paused_before_its_file_is_rendered(
    tenant, client, allow_loopback, silent_server, monkeypatch
):
    from exports.transforms import REGISTRY as TRANSFORMS

    queue = _file_queue(tenant, "ftp", silent_server["port"])
    ExportQueue.objects.filter(pk=queue.pk).update(trigger="hourly")
    queue.refresh_from_db()
    import_orders(client, tenant, "web-1", "web-2")
    for _ in range(2):
        breaker.record_failure(circuit.key_of(queue) or "", error="timeout")
    rendered: list[object] = []
    real = TRANSFORMS["identity"].render_to
    monkeypatch.setattr(TRANSFORMS["identity"], "render_to", lambda *a, **k: rendered.append(a) or real(*a, **k))
    assert services.run_cron() == 1
    window = ExportDelivery.objects.get()

    assert services.deliver(delivery_pk=window.pk) == ExportStatus.PENDING

    window.refresh_from_db()
    assert (window.attempts, silent_server["connections"], rendered) == (0, 0, [])
    assert window.paused_until == CircuitBreaker.objects.get().open_until


def test_a_trial_delivery_that_crashes_gives_the_trial_to_the_next_one(
    tenant, client, allow_loopback, receiver, monkeypatch
):
    from exports.deliveries import REGISTRY

    _, second, third = open_breaker(tenant, client, receiver)
    cool_down_over()
    real = REGISTRY["webhook"].deliver

    def crash(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(REGISTRY["webhook"], "deliver", crash)
    assert deliver(second) == ExportStatus.FAILURE  # recorded as an internal error, as any bug
    monkeypatch.setattr(REGISTRY["webhook"], "deliver", real)
    assert deliver(third) == ExportStatus.SUCCESS  # the trial, not a pause until the first one's lease ends
