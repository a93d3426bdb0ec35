"""core.liveness: processes prove they are alive; a silent one is dead."""

from __future__ import annotations

import os
import socket
from datetime import timedelta

import pytest
from django.utils import timezone

from core import liveness
from core.models import LiveProcess

pytestmark = pytest.mark.django_db


def test_a_beat_writes_this_process_row_and_a_second_renews_it() -> None:
    liveness.beat_now()
    row = LiveProcess.objects.get()
    assert row.name == f"{socket.gethostname()}:{os.getpid()}"
    assert (row.pid, row.kind) == (os.getpid(), "worker")
    LiveProcess.objects.update(seen_at=timezone.now() - timedelta(seconds=60))
    liveness.beat_now()
    assert LiveProcess.objects.count() == 1
    assert LiveProcess.objects.get().seen_at > timezone.now() - timedelta(seconds=5)


def test_dead_names_the_silent_and_the_unknown_never_the_fresh(settings) -> None:
    settings.LIVENESS_TIMEOUT_SECONDS = 15
    now = timezone.now()
    for name, age in (("m1:1", 1), ("m1:2", 30)):
        LiveProcess.objects.create(
            name=name, kind="worker", hostname="m1", pid=1, started_at=now, seen_at=now - timedelta(seconds=age)
        )
    assert liveness.dead(["m1:1", "m1:2", "m2:9", ""]) == {"m1:2", "m2:9"}
    assert [p.name for p in liveness.live(hostname="m1")] == ["m1:1"]


def test_identity_is_empty_until_the_process_beats_and_stop_removes_the_row(settings) -> None:
    settings.LIVENESS_INTERVAL_SECONDS = 3600  # the thread's first loop only
    assert liveness.identity() == ""
    name = liveness.start()
    try:
        assert liveness.identity() == name
        assert LiveProcess.objects.filter(name=name).exists()
    finally:
        liveness.stop()
    assert liveness.identity() == ""
    assert not LiveProcess.objects.filter(name=name).exists()


def test_prune_removes_rows_gone_for_long() -> None:
    now = timezone.now()
    LiveProcess.objects.create(
        name="old:1", kind="worker", hostname="old", pid=1, started_at=now, seen_at=now - timedelta(hours=2)
    )
    LiveProcess.objects.create(name="new:1", kind="worker", hostname="new", pid=1, started_at=now, seen_at=now)
    assert liveness.prune() == 1
    assert list(LiveProcess.objects.values_list("name", flat=True)) == ["new:1"]


def test_reap_removes_and_names_the_silent_workers_once(settings) -> None:
    settings.LIVENESS_TIMEOUT_SECONDS = 15
    now = timezone.now()
    for name, kind, age in (("m1:1", "worker", 1), ("m1:2", "worker", 30), ("m1:3", "beat", 30)):
        LiveProcess.objects.create(
            name=name, kind=kind, hostname="m1", pid=1, started_at=now, seen_at=now - timedelta(seconds=age)
        )
    assert liveness.reap() == ["m1:2"]
    assert liveness.reap() == []
    assert sorted(LiveProcess.objects.values_list("name", flat=True)) == ["m1:1", "m1:3"]
