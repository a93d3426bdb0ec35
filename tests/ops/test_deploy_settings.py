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
         "SECURE_PROXY_SSL_HEADER", "TASK_ROUTING", "DEMO_RECEIVER", "OUTBOUND_ALLOWED_NETWORKS"]
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
        "SITE_URL": "https://backoffice.example.com",
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
    # DEMO_RECEIVER=true is ignored: the demo's receiver is never routed in production.
    environment = production_env(tmp_path, SECURE_PROXY_SSL_HEADER="true", DEMO_RECEIVER="true")
    done = run([sys.executable, "-c", PRINT_SETTINGS], environment)
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
        "DEMO_RECEIVER": False,
        "OUTBOUND_ALLOWED_NETWORKS": [],
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


@pytest.mark.parametrize("value", [None, "", "  "])
def test_production_needs_site_url(tmp_path, value):
    """The mails' links would otherwise name the machine's local address, which no reader can open."""
    environment = production_env(tmp_path)
    if value is None:
        del environment["SITE_URL"]
    else:
        environment["SITE_URL"] = value
    done = run([sys.executable, "manage.py", "check"], environment)
    assert done.returncode != 0 and "DJANGO_ENV=production needs SITE_URL" in done.stderr


def site_url_at_start(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The settings loaded in a fresh development process with ``env``; prints SITE_URL."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_ENV", "SITE_URL", "RUN_BIND"))}
    probe = "import django; django.setup(); from django.conf import settings; print(settings.SITE_URL)"
    return run([sys.executable, "-c", probe], {**base, "VAR_DIR": str(tmp_path / "var"), **env})


@pytest.mark.parametrize(
    "value",
    [
        "backoffice.example.com",  # no scheme
        "ftp://backoffice.example.com",
        "https://",  # no host
        "https://backoffice.example.com/backoffice/",  # a path: the pages' paths are added to it
        "https://backoffice.example.com?next=/",
        "https://backoffice.example.com:99999",
        "https://ops:secret@backoffice.example.com",  # credentials, mailed to every member
    ],
)
def test_a_bad_site_url_is_refused_at_start(tmp_path, value):
    done = site_url_at_start(tmp_path, SITE_URL=value)
    assert done.returncode != 0
    assert "ImproperlyConfigured: SITE_URL must be the back-office's public base URL" in done.stderr
    assert "secret" not in done.stderr


@pytest.mark.parametrize(
    ("env", "site_url"),
    [
        ({"SITE_URL": "https://backoffice.example.com"}, "https://backoffice.example.com"),
        ({"SITE_URL": "http://shop.example.com:8080/"}, "http://shop.example.com:8080"),  # the slash dropped
        ({}, "http://127.0.0.1:8000"),  # runall's default bind
        ({"RUN_BIND": "0.0.0.0:9000"}, "http://localhost:9000"),  # every interface: this machine's name
        ({"RUN_BIND": "unix:/run/retail.sock"}, "http://localhost:8000"),
    ],
)
def test_site_url_is_the_setting_else_where_runall_serves(tmp_path, env, site_url):
    done = site_url_at_start(tmp_path, **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == site_url


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


# --- Threaded workers, the application preloaded and warmed ---------------------------------------------------


def test_gunicorn_runs_threaded_workers_with_the_application_preloaded_by_default(monkeypatch):
    for name in ("GUNICORN_WORKER_CLASS", "GUNICORN_THREADS", "GUNICORN_PRELOAD"):
        monkeypatch.delenv(name, raising=False)
    conf = gunicorn_settings(monkeypatch)
    assert (conf["worker_class"], conf["threads"], conf["preload_app"]) == ("gthread", 8, True)


def test_the_worker_class_threads_and_preload_follow_the_environment(monkeypatch):
    conf = gunicorn_settings(monkeypatch, GUNICORN_WORKER_CLASS="sync", GUNICORN_THREADS="2", GUNICORN_PRELOAD="false")
    assert (conf["worker_class"], conf["threads"], conf["preload_app"]) == ("sync", 2, False)


# What gunicorn does with preload_app: load config.wsgi in the master, then call the hooks of the configuration.
WARM = """
import json, runpy, sys, threading
conf = runpy.run_path("config/gunicorn.conf.py")
import config.wsgi
before = set(sys.modules)

class Log:
    lines = []
    def info(self, message, *args):
        self.lines.append(message %% args)

class Process:
    class cfg:
        preload_app = %(preload)s
    log = Log()

conf[%(hook)r](Process)
from django.db import connections
views = ("config.urls", "pos.pos_api", "integrations.pos_api", "ledger.api.checkouts")
print(json.dumps({
    "imported": [name for name in views if name in sys.modules and name not in before],
    "threads": [thread.name for thread in threading.enumerate()],
    "open_connections": [alias for alias in connections if connections[alias].connection is not None],
    "log": Process.log.lines,
}))
"""


def test_the_master_warms_the_preloaded_application_without_a_connection_or_a_thread_to_share(tmp_path):
    done = run([sys.executable, "-c", WARM % {"preload": True, "hook": "on_starting"}], production_env(tmp_path))
    assert done.returncode == 0, done.stderr
    warmed = json.loads(done.stdout)
    # The URL configuration (every view module) is imported before any worker is forked: no request pays for it.
    assert warmed["imported"] == ["config.urls", "pos.pos_api", "integrations.pos_api", "ledger.api.checkouts"]
    # Nothing a forked worker would share with its siblings.
    assert (warmed["threads"], warmed["open_connections"]) == (["MainThread"], [])
    [line] = warmed["log"]
    assert line.startswith("application warmed before forking workers (ms): {'urls': ")
    assert "'request': " in line  # the internal request was served (production host and HTTPS rules applied)


def test_without_preload_each_worker_warms_itself_before_serving(tmp_path):
    done = run([sys.executable, "-c", WARM % {"preload": False, "hook": "post_worker_init"}], production_env(tmp_path))
    assert done.returncode == 0, done.stderr
    warmed = json.loads(done.stdout)
    assert warmed["imported"] == ["config.urls", "pos.pos_api", "integrations.pos_api", "ledger.api.checkouts"]
    assert warmed["log"][0].startswith("worker warmed (ms): ")


def test_a_preloaded_worker_does_not_warm_again(tmp_path):
    done = run([sys.executable, "-c", WARM % {"preload": True, "hook": "post_worker_init"}], production_env(tmp_path))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["log"] == []


def test_runall_serves_with_the_production_gunicorn_configuration():
    from ops.management.commands.runall import child_commands

    web = next(child for child in child_commands() if child.name == "web")
    assert web.argv[web.argv.index("--config") + 1] == str(ROOT / "config" / "gunicorn.conf.py")
