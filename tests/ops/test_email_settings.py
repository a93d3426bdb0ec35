"""The mail relay and the notifications' settings are read from the environment, in config/settings.py."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NAMES = (
    "EMAIL_HOST",
    "EMAIL_PORT",
    "EMAIL_HOST_USER",
    "EMAIL_HOST_PASSWORD",
    "EMAIL_USE_TLS",
    "EMAIL_USE_SSL",
    "EMAIL_TIMEOUT",
    "DEFAULT_FROM_EMAIL",
    "NOTIFY_BREAKER_OPEN_SECONDS",
    "NOTIFY_DIGEST_HOUR",
    "NOTIFY_MAX_MAILS_PER_RUN",
)
PRINT = (
    "import django, json; django.setup(); from django.conf import settings; "
    f"print(json.dumps({{name: getattr(settings, name) for name in {NAMES!r}}}))"
)


def _load(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("EMAIL_", "DEFAULT_FROM", "NOTIFY_"))}
    return subprocess.run(
        [sys.executable, "-c", PRINT],
        cwd=ROOT,
        env={**base, "PYTHONPATH": str(ROOT), "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_mail_settings_are_read_from_the_environment(tmp_path):
    done = _load(
        tmp_path,
        EMAIL_HOST="smtp.example.com",
        EMAIL_PORT="587",
        EMAIL_HOST_USER="mailer",
        EMAIL_HOST_PASSWORD="s3cret-relay",
        EMAIL_USE_TLS="true",
        EMAIL_TIMEOUT="4.5",
        DEFAULT_FROM_EMAIL="Retail <noreply@example.com>",
        NOTIFY_BREAKER_OPEN_SECONDS="600",
        NOTIFY_DIGEST_HOUR="7",
        NOTIFY_MAX_MAILS_PER_RUN="50",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {
        "EMAIL_HOST": "smtp.example.com",
        "EMAIL_PORT": 587,
        "EMAIL_HOST_USER": "mailer",
        "EMAIL_HOST_PASSWORD": "s3cret-relay",
        "EMAIL_USE_TLS": True,
        "EMAIL_USE_SSL": False,
        "EMAIL_TIMEOUT": 4.5,
        "DEFAULT_FROM_EMAIL": "Retail <noreply@example.com>",
        "NOTIFY_BREAKER_OPEN_SECONDS": 600,
        "NOTIFY_DIGEST_HOUR": 7,
        "NOTIFY_MAX_MAILS_PER_RUN": 50,
    }


def test_without_the_environment_the_relay_is_localhost_with_a_ten_second_timeout(tmp_path):
    done = _load(tmp_path)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.splitlines()[-1])
    assert (loaded["EMAIL_HOST"], loaded["EMAIL_PORT"], loaded["EMAIL_TIMEOUT"]) == ("localhost", 25, 10.0)
    assert (loaded["NOTIFY_BREAKER_OPEN_SECONDS"], loaded["NOTIFY_DIGEST_HOUR"]) == (900, 6)


def test_settings_refuse_tls_and_ssl_together_and_an_unbounded_timeout(tmp_path):
    both = _load(tmp_path, EMAIL_USE_TLS="true", EMAIL_USE_SSL="true")
    assert both.returncode != 0
    assert "EMAIL_USE_TLS and EMAIL_USE_SSL are exclusive" in both.stderr
    unbounded = _load(tmp_path, EMAIL_TIMEOUT="0")
    assert unbounded.returncode != 0
    assert "EMAIL_TIMEOUT must be positive" in unbounded.stderr
    late = _load(tmp_path, NOTIFY_DIGEST_HOUR="24")
    assert late.returncode != 0
    assert "NOTIFY_DIGEST_HOUR 0 to 23" in late.stderr
