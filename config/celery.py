"""The Celery application: configured from Django settings (``CELERY_*``), tasks found in each app.

Queue routing (``TASK_ROUTING``, on in production) sends imports, real-time exports and cron exports to queues
of their own (``CELERY_TASK_ROUTES`` in the settings); every other task goes to ``CELERY_TASK_DEFAULT_QUEUE``.
"""

from __future__ import annotations

import os
from typing import Any

from celery import Celery, Task
from celery.signals import (
    task_postrun,
    task_prerun,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
    worker_shutdown,
)
from django.db import close_old_connections

from core import liveness

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@task_prerun.connect
@task_postrun.connect
def close_old_database_connections(sender: Task | None = None, **kwargs: Any) -> None:
    """A task ends its database connections as a web request does: only a broken one, or one older than
    ``CONN_MAX_AGE`` (SQLite's is 0: every task). Celery's Django fix-up would close them around every task
    (``CELERY_DB_REUSE_MAX`` in the settings holds it back), and a new PostgreSQL connection per import task
    cost more than the task's own queries (docs/benchmarks.md, imports)."""
    if sender is not None and not getattr(sender.request, "is_eager", False):
        close_old_connections()


@worker_process_init.connect
def prove_pool_process_alive(**kwargs: Any) -> None:
    """Each prefork pool process proves it is alive (``core.liveness``): what it leases names it, and a process
    killed mid-send is seen dead within ``LIVENESS_TIMEOUT_SECONDS``."""
    liveness.start()


@worker_process_shutdown.connect
def pool_process_gone(**kwargs: Any) -> None:
    liveness.stop()


@worker_ready.connect
def prove_worker_alive(sender: Any = None, **kwargs: Any) -> None:
    """The solo and threads pools run tasks in the worker's own process: it proves itself alive."""
    pool = getattr(sender, "pool", None)
    if pool is not None and type(pool).__module__ != "celery.concurrency.prefork":
        liveness.start()


@worker_shutdown.connect
def worker_gone(**kwargs: Any) -> None:
    liveness.stop()
