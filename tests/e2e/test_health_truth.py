"""/health/ready tells the truth about this machine's worker: a real Celery worker killed with SIGKILL
turns a ready machine degraded, naming the worker check, without taking it out of the load balancer."""

from __future__ import annotations

import os
import signal

import pytest
from django.test import Client

from core.models import LiveProcess
from tests.support.waiting import wait_until
from tests.support.workers import running_worker

pytestmark = [pytest.mark.celery_worker, pytest.mark.django_db(transaction=True)]

# A machine of its own: the session's other workers (another MACHINE_NAME) are neither counted nor killed.
MACHINE = "health-truth"
FAST_LIVENESS = {"LIVENESS_INTERVAL_SECONDS": "0.5", "LIVENESS_TIMEOUT_SECONDS": "1.5", "MACHINE_NAME": MACHINE}


def test_a_killed_worker_makes_its_machine_degraded(tmp_path, settings) -> None:
    settings.HEALTH_EXPECT_WORKERS = 2
    settings.MACHINE_NAME = MACHINE
    settings.LIVENESS_TIMEOUT_SECONDS = 1.5
    settings.HEALTH_BEAT_MAX_AGE_SECONDS = 0  # no beat in this test: its heartbeat is not what is looked at
    web = Client()

    def workers() -> dict[str, object]:
        response = web.get("/health/ready")
        return {"code": response.status_code, **response.json()}

    with running_worker(tmp_path, ["--pool=prefork", "--concurrency=2"], must_survive=False, env=FAST_LIVENESS) as w:
        wait_until(
            lambda: workers()["checks"]["workers"]["ok"],  # type: ignore[index]
            timeout=30,
            message="both pool processes to prove they are alive",
        )
        pids = list(LiveProcess.objects.filter(kind="worker", hostname=MACHINE).values_list("pid", flat=True))
        for pid in [w.process.pid, *pids]:  # the whole worker, as an out-of-memory kill or a lost machine does
            os.kill(pid, signal.SIGKILL)
        w.process.wait()

        def gone() -> dict[str, object] | None:
            answer = workers()
            detail = str(answer["checks"]["workers"]["detail"])  # type: ignore[index]
            return answer if detail.startswith("0 of 2") else None  # every process of the worker seen dead

        answer = wait_until(gone, timeout=30, message="/health/ready to say the worker is gone")
    assert "workers" in answer["degraded"]  # type: ignore[operator]
    assert answer["code"] == 200  # degraded, not unready: this machine's web still serves
    assert answer["status"] == "degraded"
    detail = answer["checks"]["workers"]["detail"]  # type: ignore[index]
    assert detail.startswith("0 of 2 worker processes alive on this machine; stopped without shutting down: pid")
