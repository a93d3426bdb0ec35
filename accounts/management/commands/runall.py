"""``manage.py runall``: the web server, a Celery worker and Celery beat in one foreground command.

Each child's output is prefixed with its name. SIGINT and SIGTERM are passed on to every child; when one
child stops by itself the others are stopped too and the command exits non-zero, so that a supervisor
(or the person at the terminal) sees it.

Settings: ``RUN_BIND`` (default 127.0.0.1:8000), ``WEB_CONCURRENCY`` (gunicorn workers, default 2),
``WORKER_CONCURRENCY`` (Celery worker processes, default 2). The one worker consumes every Celery queue
(``config.celery.worker_queues``), so queue routing (``TASK_ROUTING``) needs no second worker here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import IO, Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

# How long the children get to finish their current work after a stop signal before they are killed.
STOP_TIMEOUT_SECONDS = 20.0


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    reader: threading.Thread | None = field(default=None, repr=False)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None


def gunicorn_extra_args() -> list[str]:
    """Arguments only some gunicorn versions know.

    Recent gunicorn masters open a control socket at one fixed path in the home directory,
    so that two servers on one machine (a benchmark beside ``make run``) would contend for it; we use none.
    """
    from gunicorn.config import KNOWN_SETTINGS

    known = {flag for setting in KNOWN_SETTINGS for flag in setting.cli or ()}
    return ["--no-control-socket"] if "--no-control-socket" in known else []


def child_commands() -> list[Child]:
    from config.celery import worker_queues

    python = sys.executable
    return [
        Child(
            "web",
            [
                python,
                "-m",
                "gunicorn",
                # The production configuration (threaded workers, the application preloaded and warmed), with
                # runall's own bind and worker count below.
                "--config",
                str(settings.BASE_DIR / "config" / "gunicorn.conf.py"),
                "config.wsgi",
                "--bind",
                settings.RUN_BIND,
                "--workers",
                str(settings.WEB_CONCURRENCY),
                # No --access-logfile on purpose: import URLs carry the apikey query parameter.
                "--error-logfile",
                "-",
                *gunicorn_extra_args(),
            ],
        ),
        Child(
            "worker",
            [
                python,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "-l",
                "info",
                "--concurrency",
                str(settings.WORKER_CONCURRENCY),
                # One worker for everything: it consumes every routed queue, not only the default one.
                "--queues",
                ",".join(worker_queues()),
            ],
        ),
        Child("beat", [python, "-m", "celery", "-A", "config", "beat", "-l", "info"]),
    ]


class Command(BaseCommand):
    help = "Run gunicorn, a Celery worker and Celery beat together; stop all when one stops."

    def handle(self, *args: Any, **options: Any) -> None:
        children = child_commands()
        width = max(len(child.name) for child in children)
        output_lock = threading.Lock()
        stop_signal: list[int] = []

        def on_signal(signum: int, _frame: object) -> None:
            if not stop_signal:
                stop_signal.append(signum)

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        env = {**os.environ, "PYTHONUNBUFFERED": "1", "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE}
        try:
            for child in children:
                # A session of their own: a Ctrl-C at the terminal reaches the children once, through us,
                # not twice (a second SIGINT makes Celery's shutdown a cold one).
                child.process = subprocess.Popen(  # noqa: S603 - argv is fixed above
                    child.argv,
                    cwd=settings.BASE_DIR,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                assert child.process.stdout is not None
                child.reader = threading.Thread(
                    target=_copy_output,
                    args=(child.process.stdout, f"{child.name:<{width}} | ", output_lock),
                    daemon=True,
                )
                child.reader.start()
            self._say(output_lock, f"started {', '.join(f'{c.name} (pid {c.pid})' for c in children)}")

            failed: Child | None = None
            while not stop_signal and failed is None:
                for child in children:
                    assert child.process is not None
                    if child.process.poll() is not None:
                        failed = child
                        break
                else:
                    time.sleep(0.2)

            if stop_signal:
                signum = stop_signal[0]
                self._say(output_lock, f"received {signal.Signals(signum).name}, stopping")
            else:
                assert failed is not None and failed.process is not None
                signum = signal.SIGTERM
                self._say(
                    output_lock,
                    f"{failed.name} exited with status {failed.process.returncode}, stopping the others",
                )
            _stop_all(children, signum)
        finally:
            _kill_leftovers(children)
            for child in children:
                if child.reader is not None:
                    child.reader.join(timeout=2)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        if failed is not None:
            raise CommandError(f"{failed.name} stopped unexpectedly", returncode=1)

    def _say(self, lock: threading.Lock, message: str) -> None:
        with lock:
            self.stdout.write(f"runall: {message}")
            self.stdout.flush()


def _copy_output(stream: IO[bytes], prefix: str, lock: threading.Lock) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        with lock:
            sys.stdout.write(prefix + line + "\n")
            sys.stdout.flush()
    stream.close()


def _stop_all(children: list[Child], signum: int, timeout: float = STOP_TIMEOUT_SECONDS) -> None:
    """Send ``signum`` to every running child, wait up to ``timeout`` for all, then kill the rest."""
    running = [c.process for c in children if c.process is not None and c.process.poll() is None]
    for process in running:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signum)
    deadline = time.monotonic() + timeout
    for process in running:
        try:
            process.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _kill_group(process)
            process.wait()


def _kill_leftovers(children: list[Child]) -> None:
    """Whatever still runs in a child's session (a gunicorn or Celery pool process included) is killed."""
    for child in children:
        if child.process is not None:
            _kill_group(child.process)
            child.process.wait()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
