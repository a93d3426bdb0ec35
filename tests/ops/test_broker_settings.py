"""The broker gives a killed worker's unacknowledged messages back within minutes, never while a task may still run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parents[2]


def test_redis_gives_unacknowledged_messages_back_after_the_visibility_timeout_not_an_hour():
    assert settings.CELERY_BROKER_URL.startswith("redis")  # the embedded broker and production's Redis alike
    timeout = settings.CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"]
    assert timeout == settings.BROKER_VISIBILITY_TIMEOUT_SECONDS == 900
    assert settings.EXPORT_TASK_TIME_LIMIT < timeout < 3600


def _load_settings(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EXPORT_", "DJANGO_ENV", "BROKER_", "LIVENESS_"))}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        cwd=ROOT,
        env={**base, "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_settings_refuse_a_visibility_timeout_a_running_task_could_outlive(tmp_path):
    done = _load_settings(tmp_path, BROKER_VISIBILITY_TIMEOUT_SECONDS="300")
    assert done.returncode != 0
    assert "BROKER_VISIBILITY_TIMEOUT_SECONDS must be longer than EXPORT_TASK_TIME_LIMIT" in done.stderr


def test_settings_refuse_a_liveness_timeout_within_one_heartbeat(tmp_path):
    done = _load_settings(tmp_path, LIVENESS_INTERVAL_SECONDS="20", LIVENESS_TIMEOUT_SECONDS="15")
    assert done.returncode != 0
    assert "LIVENESS_INTERVAL_SECONDS must be above 0 and below LIVENESS_TIMEOUT_SECONDS" in done.stderr
