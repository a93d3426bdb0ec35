"""Two real ``celery beat`` processes on one database and broker: one sends the periodic tasks, the
other stands by; killed with SIGKILL, the active one is replaced by the standby within the lease, and no periodic
task is sent twice in one interval."""

from __future__ import annotations

import itertools
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

from core import liveness
from core.models import LiveProcess
from ops.models import BeatLease
from tests.support.waiting import wait_until

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

SWEEP_INTERVAL_SECONDS = 2.0
LEASE_SECONDS = 3.0


@dataclass
class Beat:
    process: subprocess.Popen[bytes]
    log_path: Path

    @property
    def name(self) -> str:
        return f"{liveness.machine()}:{self.process.pid}"

    def lines(self) -> list[dict[str, object]]:
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            if line.startswith("{"):
                entries.append(json.loads(line))
        return entries

    def said(self, words: str) -> bool:
        return any(words in str(entry["message"]) for entry in self.lines())

    def sweeps_sent(self) -> list[datetime]:
        return [
            datetime.fromisoformat(str(entry["time"]))
            for entry in self.lines()
            if "Sending due task exports-sweep " in str(entry["message"])
        ]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


@pytest.fixture
def start_beat(tmp_path: Path) -> Iterator[object]:
    started: list[Beat] = []
    queue = f"e2e-beat-{uuid.uuid4().hex[:12]}"  # what these beats send goes to a queue nobody consumes

    def start(label: str) -> Beat:
        log_path = tmp_path / f"beat-{label}.log"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
            "DATABASE_NAME": str(connection.settings_dict["NAME"]),
            "CELERY_TASK_DEFAULT_QUEUE": queue,
            "BEAT_LEASE_SECONDS": str(LEASE_SECONDS),
            "EXPORT_SWEEP_INTERVAL_SECONDS": str(SWEEP_INTERVAL_SECONDS),
            "LIVENESS_INTERVAL_SECONDS": "0.5",
            "LIVENESS_TIMEOUT_SECONDS": "1.5",
            "LOG_FORMAT": "json",
            "PYTHONUNBUFFERED": "1",
        }
        argv = [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO"]
        argv += ["--schedule", str(tmp_path / f"schedule-{label}")]
        with log_path.open("wb") as log_file:
            process = subprocess.Popen(
                argv, cwd=settings.BASE_DIR, env=env, stdin=subprocess.DEVNULL, stdout=log_file, stderr=log_file
            )
        beat = Beat(process=process, log_path=log_path)
        started.append(beat)
        return beat

    yield start
    for beat in started:
        beat.stop()


def log_of(*beats: Beat) -> str:
    return "\n\n".join(beat.log_path.read_text(errors="replace")[-6000:] for beat in beats)


def test_one_beat_sends_the_other_stands_by_and_takes_over_when_it_is_killed(start_beat) -> None:
    # Started together, as beat on two machines after a deploy: exactly one takes the lease.
    beats = [start_beat("a"), start_beat("b")]
    wait_until(
        lambda: all(beat.said("beat: active") or beat.said("beat: standby") for beat in beats),
        timeout=60,
        message="both beats to settle",
    )
    active = [beat for beat in beats if beat.said("beat: active")]
    assert len(active) == 1, log_of(*beats)
    first, second = active[0], next(beat for beat in beats if beat is not active[0])
    wait_until(lambda: len(first.sweeps_sent()) >= 3, timeout=30, message="the active beat to send sweeps")
    assert second.sweeps_sent() == [], log_of(second)
    assert set(LiveProcess.objects.filter(kind="beat").values_list("name", flat=True)) == {first.name, second.name}

    first.process.send_signal(signal.SIGKILL)
    first.process.wait()
    wait_until(
        lambda: second.said(f"took the schedule over from {first.name}"),
        timeout=30,
        message="the standby to take over",
    )
    wait_until(lambda: len(second.sweeps_sent()) >= 2, timeout=30, message="the new active beat to send sweeps")

    lease = BeatLease.objects.get()
    assert (lease.holder, lease.previous_holder, lease.contested_at) == (second.name, first.name, None)
    # Every send of the sweep, by either beat, at least most of an interval after the one before: none twice.
    sends = sorted(first.sweeps_sent() + second.sweeps_sent())
    gaps = [(later - earlier).total_seconds() for earlier, later in itertools.pairwise(sends)]
    assert min(gaps) > SWEEP_INTERVAL_SECONDS * 0.75, (gaps, log_of(first, second))

    second.stop()  # a clean shutdown gives the lease up and removes its liveness row, even mid-publish
    assert second.process.returncode == 0, log_of(second)
    assert not LiveProcess.objects.filter(name=second.name).exists()
    assert not BeatLease.objects.filter(holder=second.name, expires_at__gt=datetime.now().astimezone()).exists()
