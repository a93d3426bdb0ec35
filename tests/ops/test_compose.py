"""docker-compose.yml and the Dockerfile, checked by reading (no Docker on these machines): the services, their
commands (the README's), exactly one beat, every Celery queue consumed by some worker."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WEB_COMMAND = ["gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"]


@pytest.fixture(scope="module")
def services() -> dict[str, dict[str, Any]]:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]


def celery_role(service: dict[str, Any]) -> str | None:
    command = service.get("command") or []
    return command[3] if command[:3] == ["celery", "-A", "config"] else None


def test_the_compose_file_has_web_workers_beat_postgres_and_redis(services):
    assert {"web", "worker", "beat", "postgres", "redis", "migrate"} <= set(services)


def test_web_runs_the_dockerfiles_gunicorn_command(services):
    assert services["web"]["command"] == WEB_COMMAND
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert f"CMD {WEB_COMMAND}".replace("'", '"') in dockerfile


def test_there_is_exactly_one_beat(services):
    beats = [name for name, service in services.items() if celery_role(service) == "beat"]
    assert beats == ["beat"]
    assert services["beat"].get("deploy", {}).get("replicas", 1) == 1


def test_every_celery_queue_is_consumed_by_a_worker(services, settings):
    consumed: set[str] = set()
    for service in services.values():
        if celery_role(service) == "worker":
            command = service["command"]
            consumed |= set(command[command.index("--queues") + 1].split(","))
    wanted = {
        settings.CELERY_TASK_DEFAULT_QUEUE,
        settings.TASK_QUEUE_IMPORTS,
        settings.TASK_QUEUE_EXPORTS,
        settings.TASK_QUEUE_EXPORTS_CRON,
    }
    assert consumed == wanted


def test_imports_never_share_a_worker_with_exports(services):
    for service in services.values():
        if celery_role(service) == "worker":
            queues = set(service["command"][service["command"].index("--queues") + 1].split(","))
            assert not ({"imports"} & queues and {"exports", "exports-cron"} & queues)


def test_the_application_services_run_in_production_against_postgres_and_redis(services):
    for name, service in services.items():
        if name in ("postgres", "redis"):
            continue
        environment = service["environment"]
        assert environment["DJANGO_ENV"] == "production"
        assert (
            environment["DATABASE_URL"].startswith("postgres://") and "@postgres:5432/" in environment["DATABASE_URL"]
        )
        assert environment["CELERY_BROKER_URL"] == "redis://redis:6379/0"
        assert environment["SECRET_KEY"].startswith("${SECRET_KEY:?")  # required, never a default


def test_the_application_services_require_a_metrics_token(services):
    for name, service in services.items():
        if name not in ("postgres", "redis"):
            assert service["environment"]["METRICS_TOKEN"].startswith("${METRICS_TOKEN:?"), name  # never a default


def test_the_application_services_require_the_site_url_of_the_mails_links(services):
    for name, service in services.items():
        if name not in ("postgres", "redis"):
            assert service["environment"]["SITE_URL"].startswith("${SITE_URL:?"), name  # never a default


def test_the_client_address_is_the_one_the_proxy_in_front_appends(services):
    """The compose file puts the service behind one TLS proxy (SECURE_PROXY_SSL_HEADER): without trusting its
    X-Forwarded-For entry, every client would share the proxy's address in the failed-authentication limits."""
    environment = services["web"]["environment"]
    assert environment["SECURE_PROXY_SSL_HEADER"] == "true"
    assert environment["TRUSTED_PROXY_COUNT"] == "${TRUSTED_PROXY_COUNT:-1}"


def test_every_long_running_service_but_beat_has_a_healthcheck(services):
    for name, service in services.items():
        if name not in ("beat", "migrate"):
            assert service.get("healthcheck", {}).get("test"), name


def test_the_application_waits_for_healthy_databases_and_applied_migrations(services):
    for name in ("web", "worker", "beat"):
        depends = services[name]["depends_on"]
        assert depends["postgres"]["condition"] == "service_healthy"
        assert depends["redis"]["condition"] == "service_healthy"
        assert depends["migrate"]["condition"] == "service_completed_successfully"


def test_the_image_is_python_311_slim_runs_as_a_user_and_collects_static_files():
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert re.search(r"^FROM python:3\.11-slim$", dockerfile, re.MULTILINE)
    users = re.findall(r"^USER (\S+)$", dockerfile, re.MULTILINE)
    assert users and users[-1] not in ("root", "0")
    assert "pip install ." in dockerfile
    assert "collectstatic --noinput" in dockerfile


def test_the_build_context_leaves_out_secrets_and_local_state():
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".env", ".venv", "var", ".git"} <= set(ignored)
