"""Queue routing: imports, real-time exports and cron exports on queues of their own when TASK_ROUTING is on;
everything on the default queue otherwise (the test harness's private queue keeps working)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import pytest
from django.utils import timezone

from config.celery import app
from exports import services
from exports.models import ExportDelivery, ExportQueue
from ops.management.commands.runall import child_commands, worker_queues
from tests.support.workers import use_queue

ROOT = Path(__file__).resolve().parents[2]
TASKS = [
    "imports.tasks.materialise_import_items",
    "imports.tasks.sweep_pending_imports",
    "exports.tasks.deliver",
    "exports.tasks.sweep_exports",
    "exports.tasks.run_cron_exports",
    "exports.tasks.deliver_cron",
    "exports.tasks.prune_export_logs",
    "imports.tasks.prune_import_logs",
    "integrations.tasks.prune_integration_calls",
]
PROBE = """
import json, django
django.setup()
from config.celery import app
from ops.management.commands.runall import worker_queues
print(json.dumps({
    "routes": {name: app.amqp.router.route({}, name)["queue"].name for name in %r},
    "worker_queues": worker_queues(),
}))
""" % (TASKS,)  # noqa: UP031


def routing_in_a_fresh_process(tmp_path: Path, **env: str) -> dict[str, object]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TASK_", "CELERY_", "DJANGO_ENV"))}
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env={**base, "VAR_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def route(name: str) -> str:
    return app.amqp.router.route({}, name)["queue"].name


def test_with_routing_on_each_kind_of_work_has_its_queue(tmp_path):
    routes = routing_in_a_fresh_process(tmp_path, TASK_ROUTING="true")["routes"]
    assert routes == {
        "imports.tasks.materialise_import_items": "imports",
        "imports.tasks.sweep_pending_imports": "imports",
        "exports.tasks.deliver": "exports",
        "exports.tasks.sweep_exports": "exports",
        "exports.tasks.run_cron_exports": "exports-cron",
        "exports.tasks.deliver_cron": "exports-cron",
        "exports.tasks.prune_export_logs": "celery",
        "imports.tasks.prune_import_logs": "celery",
        "integrations.tasks.prune_integration_calls": "celery",
    }


def test_production_routes_by_default_and_queue_names_come_from_the_environment(tmp_path):
    probe = routing_in_a_fresh_process(
        tmp_path,
        DJANGO_ENV="production",
        SECRET_KEY="k" * 60,
        ALLOWED_HOSTS="example.com",
        SITE_URL="https://example.com",
        METRICS_TOKEN="m" * 40,
        TASK_QUEUE_IMPORTS="acme-imports",
        CELERY_TASK_DEFAULT_QUEUE="acme-default",
    )
    assert probe["routes"]["imports.tasks.materialise_import_items"] == "acme-imports"  # type: ignore[index]
    assert probe["routes"]["exports.tasks.prune_export_logs"] == "acme-default"  # type: ignore[index]
    assert probe["worker_queues"] == ["acme-default", "acme-imports", "exports", "exports-cron"]


def test_without_routing_every_task_goes_to_the_default_queue(settings):
    assert settings.CELERY_TASK_ROUTES == {}
    assert {route(name) for name in TASKS} == {app.conf.task_default_queue}
    assert worker_queues() == [app.conf.task_default_queue]


def test_the_test_harness_private_queue_still_takes_every_task():
    restore = use_queue("e2e-private")
    try:
        assert {route(name) for name in TASKS} == {"e2e-private"}
        assert worker_queues() == ["e2e-private"]
    finally:
        restore()


def test_runall_has_its_one_worker_consume_every_queue():
    queues = ["celery", "imports", "exports", "exports-cron"]
    with mock.patch("ops.management.commands.runall.worker_queues", return_value=queues):
        worker = next(child for child in child_commands() if child.name == "worker")
    assert worker.argv[worker.argv.index("--queues") + 1] == "celery,imports,exports,exports-cron"


@pytest.mark.django_db
def test_a_cron_window_is_handed_to_the_cron_task_and_a_real_time_delivery_to_the_other(tenant):
    queue = ExportQueue.objects.create(
        account=tenant.account,
        name="q",
        entity_type="sales",
        transform={"type": "identity"},
        delivery={"type": "webhook", "url": "https://example.com/hook"},
    )
    now = timezone.now() - timezone.timedelta(minutes=5)
    cron = ExportDelivery.objects.create(
        account=tenant.account, queue=queue, delivery_id="msg_c", window="2026-03-01", next_attempt_at=now
    )
    realtime = ExportDelivery.objects.create(
        account=tenant.account, queue=queue, delivery_id="msg_r", next_attempt_at=now
    )
    ExportDelivery.objects.update(created_at=now, handed_off_at=now)
    with (
        mock.patch("exports.tasks.deliver.apply_async") as deliver,
        mock.patch("exports.tasks.deliver_cron.apply_async") as deliver_cron,
    ):
        assert services.sweep() == 2
    assert deliver.call_args.args[0] == (queue.pk, [realtime.pk])
    assert deliver_cron.call_args.args[0] == (queue.pk, [cron.pk])
