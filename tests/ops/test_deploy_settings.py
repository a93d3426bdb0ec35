"""Production settings (DJANGO_ENV=production): check --deploy is clean, development defaults refused; gunicorn's
worker formula. Each production case runs in a fresh process: settings are read once, at start."""

from __future__ import annotations

import json
import os
import runpy
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = """
import json, django
django.setup()
from django.conf import settings as s
names = ["DEBUG", "SECURE_SSL_REDIRECT", "SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_HSTS_SECONDS",
         "SECURE_HSTS_INCLUDE_SUBDOMAINS", "SECURE_HSTS_PRELOAD", "SECURE_CONTENT_TYPE_NOSNIFF", "X_FRAME_OPTIONS",
         "SECURE_PROXY_SSL_HEADER", "TASK_ROUTING"]
values = {name: getattr(s, name) for name in names}
values["STATICFILES_BACKEND"] = s.STORAGES["staticfiles"]["BACKEND"]
print(json.dumps(values))
"""


def production_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    # DJANGO_ALLOW_ASYNC_UNSAFE is set for the test session when the browser tests are collected: never in
    # production, and check --deploy says so.
    prefixes = (
        "SECURE_",
        "DJANGO_ENV",
        "DEBUG",
        "SECRET_KEY",
        "DJANGO_ALLOW_ASYNC_UNSAFE",
        "METRICS_TOKEN",
        "TRUSTED_PROXY_COUNT",
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {
        **base,
        "VAR_DIR": str(tmp_path / "var"),
        "STATIC_ROOT": str(tmp_path / "static"),
        "DJANGO_ENV": "production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "backoffice.example.com",
        "METRICS_TOKEN": secrets.token_urlsafe(32),
        **extra,
    }


def run(argv: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)


def test_check_deploy_is_clean_in_production(tmp_path):
    done = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], production_env(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout
    assert "WARNING" not in done.stderr


def test_production_turns_the_secure_settings_on(tmp_path):
    done = run([sys.executable, "-c", PRINT_SETTINGS], production_env(tmp_path, SECURE_PROXY_SSL_HEADER="true"))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "DEBUG": False,
        "SECURE_SSL_REDIRECT": True,
        "SESSION_COOKIE_SECURE": True,
        "CSRF_COOKIE_SECURE": True,
        "SECURE_HSTS_SECONDS": 31_536_000,
        "SECURE_HSTS_INCLUDE_SUBDOMAINS": True,
        "SECURE_HSTS_PRELOAD": True,
        "SECURE_CONTENT_TYPE_NOSNIFF": True,
        "X_FRAME_OPTIONS": "DENY",
        "SECURE_PROXY_SSL_HEADER": ["HTTP_X_FORWARDED_PROTO", "https"],
        "TASK_ROUTING": True,
        "STATICFILES_BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage",
    }


def test_turning_hsts_preload_off_keeps_check_deploy_clean(tmp_path):
    env = production_env(tmp_path, SECURE_HSTS_PRELOAD="false", SECURE_HSTS_SECONDS="300")
    done = run([sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"], env)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"SECRET_KEY": ""}, "needs SECRET_KEY"),  # the development default
        ({"SECRET_KEY": "too-short"}, "needs SECRET_KEY"),
        ({"DEBUG": "true"}, "refuses DEBUG"),
        ({"METRICS_TOKEN": ""}, "needs METRICS_TOKEN"),  # /metrics would be open to anyone who reaches it
        ({"METRICS_TOKEN": "short-guessable-token"}, "needs METRICS_TOKEN"),
    ],
)
def test_production_refuses_to_start_with_development_settings(tmp_path, env, message):
    environment = production_env(tmp_path, **env)
    for name in ("SECRET_KEY", "METRICS_TOKEN"):
        if environment[name] == "":
            del environment[name]
    done = run([sys.executable, "manage.py", "check"], environment)
    assert done.returncode != 0
    assert message in done.stderr


def test_production_needs_allowed_hosts(tmp_path):
    environment = production_env(tmp_path)
    del environment["ALLOWED_HOSTS"]
    done = run([sys.executable, "manage.py", "check"], environment)
    assert done.returncode != 0 and "needs ALLOWED_HOSTS" in done.stderr


def test_check_deploy_warns_behind_a_proxy_whose_forwarded_address_is_not_trusted(tmp_path):
    check = [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"]
    untrusted = run(check, production_env(tmp_path, SECURE_PROXY_SSL_HEADER="true"))
    assert untrusted.returncode != 0 and "ops.W001" in untrusted.stderr + untrusted.stdout

    trusted = run(check, production_env(tmp_path, SECURE_PROXY_SSL_HEADER="true", TRUSTED_PROXY_COUNT="1"))
    assert trusted.returncode == 0, trusted.stdout + trusted.stderr


def test_production_refuses_to_serve_without_metrics_token(tmp_path):
    """gunicorn runs no system check: the refusal is at settings load, where its workers import the settings."""
    environment = production_env(tmp_path)
    del environment["METRICS_TOKEN"]
    done = run([sys.executable, "-c", "import config.wsgi"], environment)
    assert done.returncode != 0 and "needs METRICS_TOKEN" in done.stderr


def test_development_defaults_stay_plain_http(settings):
    assert settings.DJANGO_ENV == "development"
    assert (settings.SECURE_SSL_REDIRECT, settings.SESSION_COOKIE_SECURE, settings.CSRF_COOKIE_SECURE) == (
        False,
        False,
        False,
    )
    assert settings.SECURE_HSTS_SECONDS == 0
    assert not hasattr(settings, "SECURE_PROXY_SSL_HEADER") or settings.SECURE_PROXY_SSL_HEADER is None


def gunicorn_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, object]:
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "config" / "gunicorn.conf.py"))


def test_gunicorn_runs_two_workers_per_cpu_plus_one_by_default(monkeypatch):
    cpus = len(os.sched_getaffinity(0))
    assert gunicorn_settings(monkeypatch)["workers"] == 2 * cpus + 1


def test_web_concurrency_sets_the_gunicorn_workers(monkeypatch):
    conf = gunicorn_settings(monkeypatch, WEB_CONCURRENCY="3")
    assert (conf["workers"], conf["accesslog"], conf["bind"]) == (3, None, "0.0.0.0:8000")


def test_gunicorn_accepts_its_configuration_file(tmp_path):
    done = run(
        [sys.executable, "-m", "gunicorn", "--check-config", "-c", "config/gunicorn.conf.py", "config.wsgi"],
        production_env(tmp_path),
    )
    assert done.returncode == 0, done.stdout + done.stderr
