"""The beat lease (ops.services.hold_beat_lease, ops.beat.LeasedScheduler): one holder, a standby, takeovers."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from core import liveness
from core.models import LiveProcess
from ops import services
from ops.models import BeatLease

pytestmark = pytest.mark.django_db


def run_out(name: str = services.BEAT) -> None:
    BeatLease.objects.filter(name=name).update(expires_at=timezone.now() - timedelta(seconds=1))


def test_the_first_beat_takes_the_lease() -> None:
    state = services.hold_beat_lease(holder="a:1", seconds=30)
    assert state.held
    lease = BeatLease.objects.get()
    assert lease.holder == "a:1"
    assert lease.expires_at > timezone.now()


def test_a_second_beat_stands_by_while_the_lease_runs() -> None:
    services.hold_beat_lease(holder="a:1", seconds=30)
    state = services.hold_beat_lease(holder="b:2", seconds=30)
    assert not state.held
    assert state.holder == "a:1"
    assert BeatLease.objects.get().holder == "a:1"


def test_the_holder_renews_its_lease() -> None:
    services.hold_beat_lease(holder="a:1", seconds=30)
    run_out()
    assert services.hold_beat_lease(holder="a:1", seconds=30).held
    assert BeatLease.objects.get().expires_at > timezone.now()


def test_a_standby_takes_a_lease_that_ran_out() -> None:
    services.hold_beat_lease(holder="a:1", seconds=30)
    run_out()
    state = services.hold_beat_lease(holder="b:2", seconds=30)
    assert state.held
    assert state.took_over_from == "a:1"
    assert not state.contested  # a:1 never proved it is alive: it is dead
    assert not services.hold_beat_lease(holder="a:1", seconds=30).held  # the old holder, back, stands by
    lease = BeatLease.objects.get()
    assert (lease.holder, lease.previous_holder, lease.contested_at) == ("b:2", "a:1", None)


def test_a_lease_taken_from_a_holder_still_alive_is_contested() -> None:
    liveness.beat_now(liveness.BEAT)  # this process proves it is alive (its row), as a beat's thread does
    holder = LiveProcess.objects.get().name
    services.hold_beat_lease(holder=holder, seconds=30)
    run_out()
    state = services.hold_beat_lease(holder="b:2", seconds=30)
    assert state.held and state.contested
    assert BeatLease.objects.get().contested_at is not None


def test_a_released_lease_is_taken_at_once() -> None:
    services.hold_beat_lease(holder="a:1", seconds=30)
    assert services.release_beat_lease(holder="a:1")
    assert services.hold_beat_lease(holder="b:2", seconds=30).held


def test_only_the_holder_can_release_the_lease() -> None:
    services.hold_beat_lease(holder="a:1", seconds=30)
    assert not services.release_beat_lease(holder="b:2")
    assert not services.hold_beat_lease(holder="b:2", seconds=30).held


def test_pruning_removes_processes_gone_for_an_hour() -> None:
    now = timezone.now()
    for name, seen in (("old:1", now - timedelta(hours=2)), ("new:2", now)):
        LiveProcess.objects.create(name=name, kind="worker", hostname=name[:3], pid=1, started_at=seen, seen_at=seen)
    from ops.tasks import prune_live_processes

    assert prune_live_processes() == 1
    assert list(LiveProcess.objects.values_list("name", flat=True)) == ["new:2"]


def test_pruning_is_scheduled_on_beat(settings) -> None:
    tasks = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "ops.tasks.prune_live_processes" in tasks
    assert settings.CELERY_BEAT_SCHEDULER == "ops.beat:LeasedScheduler"


def test_a_beat_that_starts_leading_sends_the_heartbeat_at_once(monkeypatch) -> None:
    from config.celery import app
    from ops.beat import HEARTBEAT_ENTRY, LeasedScheduler

    sent: list[tuple[str, float]] = []
    monkeypatch.setattr("ops.beat.close_old_connections", lambda: None)  # the test's connection stays open
    monkeypatch.setattr(app, "send_task", lambda name, expires: sent.append((name, expires)))
    scheduler = LeasedScheduler.__new__(LeasedScheduler)  # the lease logic alone: no schedule read, no broker
    scheduler.app = app
    scheduler._holder = "a:1"
    monkeypatch.setattr(scheduler, "_reload", lambda: None)

    assert scheduler._hold()
    assert scheduler._hold()  # renewing: no second one

    heartbeat = settings_entry(HEARTBEAT_ENTRY)
    assert sent == [(heartbeat["task"], float(heartbeat["schedule"]))]


def test_a_standby_sends_no_heartbeat(monkeypatch) -> None:
    from config.celery import app
    from ops.beat import LeasedScheduler

    services.hold_beat_lease(holder="b:2", seconds=30)
    sent: list[str] = []
    monkeypatch.setattr("ops.beat.close_old_connections", lambda: None)
    monkeypatch.setattr(app, "send_task", lambda name, expires: sent.append(name))
    scheduler = LeasedScheduler.__new__(LeasedScheduler)
    scheduler.app = app
    scheduler._holder = "a:1"

    assert not scheduler._hold()
    assert sent == []


def settings_entry(name: str) -> dict:
    from django.conf import settings

    return settings.CELERY_BEAT_SCHEDULE[name]
