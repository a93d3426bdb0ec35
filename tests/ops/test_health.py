"""/health/live and /health/ready: what each check looks at, and that they need no credentials."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.utils import timezone

from ops import health
from ops.models import Heartbeat
from ops.services import BEAT, record_heartbeat
from ops.tasks import beat_heartbeat

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


@pytest.fixture
def beating() -> None:
    record_heartbeat()


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
    assert set(body["checks"]) == {"database", "migrations", "broker", "beat"}
    assert all(check["ok"] for check in body["checks"].values())


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
        cursor.execute("DELETE FROM django_migrations WHERE app = 'ops' AND name = '0001_ops_heartbeat'")
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
    ok, checks = health.readiness()
    assert ok is False
    assert checks["database"] == {"ok": False, "detail": "unreachable (OperationalError)"}


def test_health_endpoints_need_no_api_key_even_with_a_wrong_one(web, beating) -> None:
    response = web.get("/health/ready?apikey=wrong", HTTP_AUTHORIZATION="Bearer wrong")
    assert response.status_code == 200
