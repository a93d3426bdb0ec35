"""A real `celery worker` subprocess on the test database, on a queue of its own, for the end-to-end tests; and
the switches that send this process's tasks to another queue or broker."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings

WORKER_READY_TIMEOUT_SECONDS = 60.0
WORKER_STOP_TIMEOUT_SECONDS = 20.0
LOG_TAIL_CHARS = 20_000


@dataclass
class CeleryWorkerProcess:
    process: subprocess.Popen[bytes]
    log_path: Path
    queue: str
    database_name: str

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def log_tail(self) -> str:
        text = self.log()
        return text if len(text) <= LOG_TAIL_CHARS else "...\n" + text[-LOG_TAIL_CHARS:]

    def is_ready(self) -> bool:
        # "celery@<hostname> ready." is the worker's own signal that it consumes; it runs without gossip,
        # mingle or heartbeat (nothing to answer a remote ping with), so its log is what we watch.
        return " ready." in self.log()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # warm shutdown: the current task finishes
            try:
                self.process.wait(timeout=WORKER_STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def use_queue(queue: str) -> Callable[[], None]:
    """Send this process's tasks to ``queue``; returns the undo. Settings are loaded already, so the Celery
    app's configuration is changed, and its cached queue and router objects dropped."""
    from config.celery import app

    previous = app.conf.task_default_queue

    def apply(name: str) -> None:
        app.conf.task_default_queue = name
        for cached in ("queues", "default_queue", "router"):
            app.amqp.__dict__.pop(cached, None)

    apply(queue)
    return lambda: apply(previous)


@contextmanager
def tasks_to(queue: str) -> Iterator[None]:
    """``use_queue`` for the block: this process's tasks go to ``queue``, and afterwards where they went before."""
    restore = use_queue(queue)
    try:
        yield
    finally:
        restore()


def use_broker(url: str) -> Callable[[], None]:
    """Publish this process's tasks to the broker at ``url``; returns the undo. Celery reads
    ``CELERY_BROKER_URL`` from the environment before its configuration, so the write URL (which publishing
    uses and the environment leaves unset) is what changes; the app's connection and producer pools are
    dropped so the next publish connects to the new broker."""
    from config.celery import app

    previous = app.conf.get("broker_write_url")

    def apply(write_url: str | None) -> None:
        app.conf.broker_write_url = write_url
        app._pool = None
        app.amqp._producer_pool = None

    apply(url)
    return lambda: apply(previous)


@contextmanager
def running_worker(
    log_dir: Path, pool_args: list[str], *, must_survive: bool = True, env: dict[str, str] | None = None
) -> Iterator[CeleryWorkerProcess]:
    """A ``celery worker`` subprocess on the test database and a queue of its own, ready on entry. Its death
    before the end fails the test, unless ``must_survive`` is false (a test that kills it). ``env`` adds to
    or overrides its environment (e.g. ``CELERY_BROKER_URL``)."""
    extra_env = env or {}
    from django.db import connection

    queue = f"e2e-{uuid.uuid4().hex[:12]}"
    database_name = str(connection.settings_dict["NAME"])
    log_path = log_dir / "worker.log"
    env = {
        **os.environ,
        # Not settings.SETTINGS_MODULE: it is None while a test overrides settings.
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        "DATABASE_NAME": database_name,
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        # The sweeper test hands over items as soon as they are pending.
        "IMPORT_SWEEP_GRACE_SECONDS": "0",
        # Exports: web hooks go to a receiver on 127.0.0.1; retries and leases short enough to watch.
        "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.1/32",
        "EXPORT_RETRY_BASE_DELAY": "0.2",
        "EXPORT_LEASE_SECONDS": "3",
        "EXPORT_SWEEP_GRACE_SECONDS": "0",
        "PYTHONUNBUFFERED": "1",
        **extra_env,
    }
    argv = [
        sys.executable,
        "-m",
        # ``celery`` with the check of every export against its published schema (tests/support/export_checks.py).
        "tests.support.checked_worker",
        "-A",
        "config",
        "worker",
        *pool_args,
        "--loglevel=INFO",
        "--queues",
        queue,
        "--hostname",
        f"{queue}@%h",
        # Nothing to synchronise with: this worker is alone on its queue.
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with log_path.open("wb") as log_file:
        process = subprocess.Popen(
            argv,
            cwd=settings.BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    worker = CeleryWorkerProcess(process=process, log_path=log_path, queue=queue, database_name=database_name)
    try:
        deadline = time.monotonic() + WORKER_READY_TIMEOUT_SECONDS
        while not worker.is_ready():
            if process.poll() is not None:
                pytest.fail(f"the Celery worker exited with status {process.returncode}:\n{worker.log_tail()}")
            if time.monotonic() > deadline:
                pytest.fail(
                    f"the Celery worker was not ready within {WORKER_READY_TIMEOUT_SECONDS:g}s:\n{worker.log_tail()}"
                )
            time.sleep(0.1)
        yield worker
        if must_survive and process.poll() is not None:
            pytest.fail(f"the Celery worker died during the tests:\n{worker.log_tail()}")
    finally:
        worker.stop()
