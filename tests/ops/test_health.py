"""/health/live and /health/ready: what each check looks at, and that they need no credentials."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test import Client
from django.utils import timezone

from core.models import LiveProcess
from exports.models import ExportDelivery, ExportStatus
from ops import health
from ops.models import BeatLease, Heartbeat
from ops.services import BEAT, hold_beat_lease, record_heartbeat
from ops.tasks import beat_heartbeat
from tests.support.logs import make_delivery, make_sales_queue

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_migration_check():
    # The positive migration check is remembered per process; each test starts from scratch.
    health._migrations_applied = False
    yield
    health._migrations_applied = False


@pytest.fixture
def web() -> Client:
    return Client()


def alive(kind: str, pid: int, *, hostname: str | None = None, seen_ago: float = 0) -> str:
    """A ``core.liveness`` row, as the process's heartbeat thread writes it; returns its name."""
    host = hostname or health.this_host()
    seen = timezone.now() - timedelta(seconds=seen_ago)
    LiveProcess.objects.create(name=f"{host}:{pid}", kind=kind, hostname=host, pid=pid, started_at=seen, seen_at=seen)
    return f"{host}:{pid}"


@pytest.fixture
def beating() -> None:
    """A healthy platform: the heartbeat written, a worker alive, a beat holding the lease."""
    record_heartbeat()
    alive("worker", 101)
    hold_beat_lease(holder=alive("beat", 201), seconds=30)


def test_live_answers_ok_without_credentials(web) -> None:
    response = web.get("/health/live")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


def test_live_refuses_post(web) -> None:
    assert web.post("/health/live").status_code == 405


def test_ready_answers_200_when_every_check_passes(web, beating) -> None:
    response = web.get("/health/ready")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "ok"
    assert set(body["checks"]) == {"database", "migrations", "broker", "beat", "workers", "beats", "export_queues"}
    assert all(check["ok"] for check in body["checks"].values())
    assert body["degraded"] == []


def test_ready_is_not_cached_by_proxies(web, beating) -> None:
    assert "no-cache" in web.get("/health/ready")["Cache-Control"]


def test_ready_answers_503_without_any_heartbeat(web) -> None:
    response = web.get("/health/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["checks"]["beat"] == {"ok": False, "detail": "no heartbeat yet"}
    assert body["checks"]["database"]["ok"] is True


def test_ready_answers_503_when_the_heartbeat_is_stale(web, settings) -> None:
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 180
    record_heartbeat(at=timezone.now() - timedelta(seconds=181))
    response = web.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["beat"]["detail"].startswith("stale")


def test_a_heartbeat_just_within_the_limit_is_fresh(settings) -> None:
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 180
    record_heartbeat(at=timezone.now() - timedelta(seconds=170))
    assert health.check_beat() == (True, "ok")


def test_the_beat_check_can_be_turned_off(web, settings) -> None:
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 0
    response = web.get("/health/ready")
    assert response.status_code == 200
    assert response.json()["checks"]["beat"] == {"ok": True, "detail": "not checked"}


def test_the_heartbeat_task_writes_one_row_however_often_it_runs() -> None:
    beat_heartbeat()
    first = Heartbeat.objects.get(name=BEAT).beat_at
    beat_heartbeat()
    assert Heartbeat.objects.count() == 1
    assert Heartbeat.objects.get(name=BEAT).beat_at >= first


def test_the_heartbeat_is_scheduled_every_30_seconds_on_beat(settings) -> None:
    entry = next(e for e in settings.CELERY_BEAT_SCHEDULE.values() if e["task"] == "ops.tasks.beat_heartbeat")
    assert entry["schedule"] == 30.0
    # A heartbeat stuck behind a backlog is worthless once the next one is due (DatabaseScheduler's option name).
    assert entry["options"] == {"expire_seconds": 30}


def test_ready_answers_503_when_a_migration_is_not_applied(web, beating) -> None:
    with connection.cursor() as cursor:
        # The app's latest migration: the plan runs forward from the applied leaves.
        leaf = next(name for app, name in MigrationLoader(connection).graph.leaf_nodes() if app == "ops")
        cursor.execute("DELETE FROM django_migrations WHERE app = 'ops' AND name = %s", [leaf])
    response = web.get("/health/ready")
    assert response.status_code == 503
    assert response.json()["checks"]["migrations"] == {"ok": False, "detail": "1 not applied"}


def test_ready_answers_503_when_the_broker_is_unreachable(web, beating, settings) -> None:
    # Port 1 on the loopback: nothing listens, the connection is refused at once.
    settings.CELERY_BROKER_URL = "redis://:s3cret-password@127.0.0.1:1/0"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {}
    settings.HEALTH_BROKER_TIMEOUT_SECONDS = 0.5
    response = web.get("/health/ready")
    assert response.status_code == 503
    broker = response.json()["checks"]["broker"]
    assert broker["ok"] is False
    assert broker["detail"].startswith("unreachable")
    assert b"s3cret" not in response.content  # a URL's credentials never reach the answer


def test_the_filesystem_broker_is_ready_when_its_folders_exist(settings, tmp_path) -> None:
    for sub in ("queue", "processed"):
        (tmp_path / sub).mkdir()
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "processed_folder": str(tmp_path / "processed"),
    }
    assert health.check_broker() == (True, "ok")


def test_the_filesystem_broker_is_not_ready_when_a_folder_is_missing(settings, tmp_path) -> None:
    (tmp_path / "queue").mkdir()
    settings.CELERY_BROKER_URL = "filesystem://"
    settings.CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(tmp_path / "queue"),
        "data_folder_out": str(tmp_path / "queue"),
        "processed_folder": str(tmp_path / "processed"),
    }
    assert health.check_broker() == (False, "folder missing: processed")


def test_a_database_failure_is_reported_without_the_driver_message(beating, monkeypatch) -> None:
    def broken_cursor(*args, **kwargs):
        raise health.connections["default"].Database.OperationalError("connection to server at 10.0.0.5 failed")

    monkeypatch.setattr(health.connections["default"], "cursor", broken_cursor)
    report = health.report()
    assert report.status == "error"
    checks = report.checks
    assert checks["database"] == {"ok": False, "detail": "unreachable (OperationalError)"}


def test_health_endpoints_need_no_api_key_even_with_a_wrong_one(web, beating) -> None:
    response = web.get("/health/ready?apikey=wrong", HTTP_AUTHORIZATION="Bearer wrong")
    assert response.status_code == 200


# --- Degraded: the machine serves, but something the operator must look at is wrong ---------------------------------


def degraded(web) -> tuple[list[str], dict[str, dict[str, object]]]:
    response = web.get("/health/ready")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "degraded"
    return body["degraded"], body["checks"]


def test_no_worker_alive_on_any_machine_is_degraded(web) -> None:
    record_heartbeat()
    hold_beat_lease(holder=alive("beat", 201), seconds=30)
    names, checks = degraded(web)
    assert names == ["workers"]
    assert checks["workers"] == {"ok": False, "detail": "no worker process alive on any machine"}


def test_a_worker_on_another_machine_suffices_when_none_is_expected_here(web) -> None:
    record_heartbeat()
    hold_beat_lease(holder=alive("beat", 201), seconds=30)
    alive("worker", 101, hostname="elsewhere")
    response = web.get("/health/ready")
    assert response.json()["status"] == "ok"
    assert "none expected on this one" in response.json()["checks"]["workers"]["detail"]


def test_a_machine_whose_worker_was_killed_is_degraded_naming_the_pid(web, beating, settings) -> None:
    # The second machine's worker SIGKILLed: /health/ready must not go on answering 200 "ok".
    settings.HEALTH_EXPECT_WORKERS = 2
    alive("worker", 102, seen_ago=40)  # killed: its row stopped being renewed, and no clean shutdown removed it
    names, checks = degraded(web)
    assert names == ["workers"]
    assert checks["workers"]["detail"] == (
        "1 of 2 worker processes alive on this machine; stopped without shutting down: pid 102 40 s ago"
    )


def test_workers_on_another_machine_do_not_count_for_this_one(web, beating, settings) -> None:
    settings.HEALTH_EXPECT_WORKERS = 1
    LiveProcess.objects.filter(kind="worker").delete()
    alive("worker", 103, hostname="elsewhere")
    names, checks = degraded(web)
    assert names == ["workers"]
    assert checks["workers"]["detail"] == "0 of 1 worker processes alive on this machine"


def test_as_many_workers_as_expected_are_ok(web, beating, settings) -> None:
    settings.HEALTH_EXPECT_WORKERS = 2
    alive("worker", 102)
    assert web.get("/health/ready").json()["checks"]["workers"] == {
        "ok": True,
        "detail": "2 worker processes alive on this machine",
    }


def test_a_standby_beat_is_healthy(web, beating) -> None:
    alive("beat", 202, hostname="elsewhere")
    response = web.get("/health/ready")
    assert response.json()["status"] == "ok"
    assert response.json()["checks"]["beats"]["detail"] == "one active, 1 standing by; 1 on this machine"


def test_two_active_beats_are_degraded(web, beating) -> None:
    # The lease taken from a beat that is still alive: it stalled past its lease, and both may have sent.
    BeatLease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert hold_beat_lease(holder=alive("beat", 202, hostname="elsewhere"), seconds=30).contested
    names, checks = degraded(web)
    assert names == ["beats"]
    assert checks["beats"]["detail"].startswith("two active beats: the lease was taken 0 s ago from a beat still")


def test_no_beat_holding_the_lease_is_degraded(web, beating) -> None:
    BeatLease.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    names, checks = degraded(web)
    assert names == ["beats"]
    assert checks["beats"] == {"ok": False, "detail": "no beat holds the lease"}


def test_a_machine_expecting_a_beat_without_one_is_degraded(web, beating, settings) -> None:
    settings.HEALTH_EXPECT_BEAT = True
    LiveProcess.objects.filter(kind="beat").update(hostname="elsewhere")
    names, checks = degraded(web)
    assert names == ["beats"]
    assert checks["beats"] == {"ok": False, "detail": "no beat process alive on this machine"}


def overdue(queue, seconds: float) -> ExportDelivery:
    delivery = make_delivery(queue, status=ExportStatus.PENDING)
    ExportDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() - timedelta(seconds=seconds))
    return delivery


def test_a_queue_with_a_delivery_due_too_long_is_degraded_without_naming_it(web, beating, tenant, settings) -> None:
    # Deliveries held for minutes behind a dead worker's lease: health must not go on answering 200 "ok".
    settings.HEALTH_EXPORT_DUE_MAX_AGE_SECONDS = 300
    queue = make_sales_queue(tenant.account, "order-states")
    overdue(queue, 400)
    overdue(queue, 350)
    overdue(make_sales_queue(tenant.account, "fine"), 10)
    names, checks = degraded(web)
    assert names == ["export_queues"]
    assert checks["export_queues"] == {
        "ok": False,
        "detail": "1 export queues with 2 deliveries due for over 300 s (oldest 400 s)",
    }
    assert b"order-states" not in web.get("/health/ready").content  # no tenant's name in an open endpoint


def test_deliveries_not_yet_due_or_of_disabled_queues_are_not_overdue(web, beating, tenant) -> None:
    waiting = make_sales_queue(tenant.account, "retrying")
    delivery = overdue(waiting, 0)
    ExportDelivery.objects.filter(pk=delivery.pk).update(next_attempt_at=timezone.now() + timedelta(hours=1))
    disabled = make_sales_queue(tenant.account, "disabled")
    overdue(disabled, 4000)
    disabled.enabled = False
    disabled.save(update_fields=["enabled"])
    overdue(make_sales_queue(tenant.account, "delivered"), 4000)
    ExportDelivery.objects.filter(queue__name="delivered").update(status=ExportStatus.SUCCESS)
    assert web.get("/health/ready").json()["checks"]["export_queues"] == {"ok": True, "detail": "ok"}


def test_the_export_queue_check_can_be_turned_off(web, beating, tenant, settings) -> None:
    settings.HEALTH_EXPORT_DUE_MAX_AGE_SECONDS = 0
    overdue(make_sales_queue(tenant.account), 4000)
    assert web.get("/health/ready").json()["checks"]["export_queues"] == {"ok": True, "detail": "not checked"}


def test_not_ready_outranks_degraded_and_both_are_named(web) -> None:
    response = web.get("/health/ready")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error"
    assert body["degraded"] == ["workers", "beats"]
