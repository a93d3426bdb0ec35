"""``manage.py runall``: the web server, a Celery worker and Celery beat in one foreground command, and on the
embedded default (no ``CELERY_BROKER_URL``) the embedded broker they share (``ops.embedded_broker``).

Each child's output is prefixed with its name. runall supervises them: a worker, beat or broker that dies is
started again after a delay (``RUNALL_RESTART_DELAY_SECONDS``, doubling up to ``RUNALL_RESTART_MAX_DELAY_SECONDS``,
back to the first once it has run ``RUNALL_STABLE_SECONDS``); after ``RUNALL_MAX_RESTARTS`` restarts within
``RUNALL_RESTART_WINDOW_SECONDS`` runall gives up on that child, says so loudly and keeps the web server serving.
The web server is the one child runall cannot do without (gunicorn's master already replaces its own workers):
when it stops, the others are stopped and the command exits non-zero, so that a supervisor (or the person at the
terminal) sees it. SIGINT and SIGTERM stop every child: the web server, worker and beat first, the broker last.

Settings: ``RUN_BIND`` (default 127.0.0.1:8000), ``WEB_CONCURRENCY`` (gunicorn workers, default 2),
``WORKER_CONCURRENCY`` (Celery worker processes, default 2). The one worker consumes every Celery queue
(``worker_queues`` below), so queue routing (``TASK_ROUTING``) needs no second worker here.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from celery import Celery, current_app
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from gunicorn.config import KNOWN_SETTINGS

from ops import embedded_broker

# How long the children get to finish their current work after a stop signal before they are killed.
STOP_TIMEOUT_SECONDS = 20.0


# Whose death stops runall; every other child is restarted.
ESSENTIAL = "web"
# Celery's consumer logs this when the broker connection breaks in a way it does not recover from; the worker may
# stay alive without consuming, so runall treats the line as the worker's death.
STUCK_MARKER = "Unrecoverable error"
POLL_SECONDS = 0.2


@dataclass
class RestartPolicy:
    """When to start a dead child again, or to give up on it: a pure function of its exits, so tested alone."""

    first_delay: float
    max_delay: float
    stable_after: float
    max_restarts: int
    window: float
    delay: float = field(init=False)
    restarts: deque[float] = field(init=False, default_factory=deque)

    def __post_init__(self) -> None:
        self.delay = self.first_delay

    @classmethod
    def from_settings(cls) -> RestartPolicy:
        return cls(
            first_delay=settings.RUNALL_RESTART_DELAY_SECONDS,
            max_delay=settings.RUNALL_RESTART_MAX_DELAY_SECONDS,
            stable_after=settings.RUNALL_STABLE_SECONDS,
            max_restarts=settings.RUNALL_MAX_RESTARTS,
            window=settings.RUNALL_RESTART_WINDOW_SECONDS,
        )

    def after_exit(self, *, now: float, ran_for: float) -> float | None:
        """Seconds to wait before the next start, or None: too many restarts in the window, give up."""
        if ran_for >= self.stable_after:
            self.delay = self.first_delay
        while self.restarts and now - self.restarts[0] > self.window:
            self.restarts.popleft()
        if len(self.restarts) >= self.max_restarts:
            return None
        self.restarts.append(now)
        delay = self.delay
        self.delay = min(self.delay * 2, self.max_delay)
        return delay


@dataclass
class Child:
    name: str
    argv: list[str]
    process: subprocess.Popen[bytes] | None = None
    reader: threading.Thread | None = field(default=None, repr=False)
    policy: RestartPolicy | None = field(default=None, repr=False)
    started_at: float = 0.0
    restart_at: float | None = None  # dead, waiting for its restart
    given_up: bool = False
    restarts: int = 0
    # Set by its output reader when a line says the child is broken while it keeps running (STUCK_MARKER).
    stuck: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None


def gunicorn_extra_args() -> list[str]:
    """Arguments only some gunicorn versions know.

    Recent gunicorn masters open a control socket at one fixed path in the home directory,
    so that two servers on one machine (a benchmark beside ``make run``) would contend for it; we use none.
    """
    known = {flag for setting in KNOWN_SETTINGS for flag in setting.cli or ()}
    return ["--no-control-socket"] if "--no-control-socket" in known else []


def embedded_broker_child() -> Child | None:
    """The embedded broker, when the settings use it and no other process serves its socket already (a second
    redis-server on the same path would take the socket from the first)."""
    directory = Path(settings.EMBEDDED_BROKER_DIR)
    if not settings.EMBEDDED_BROKER or embedded_broker.answers(directory):
        return None
    directory.mkdir(parents=True, exist_ok=True)
    return Child("broker", embedded_broker.server_argv(directory))


def worker_queues(app: Celery | None = None) -> list[str]:
    """Every queue a task can be sent to, the default first: what a single worker must consume to run them all
    (runall, a small installation). ``app`` defaults to the current Celery app (``config.celery.app``, made
    current when the settings package loads), which ops, below config in the layers, does not import."""
    conf = (app or current_app).conf
    queues = [str(conf.task_default_queue)]
    for route in (conf.task_routes or {}).values():
        name = route.get("queue") if isinstance(route, dict) else None
        if name and name not in queues:
            queues.append(str(name))
    return queues


def child_commands() -> list[Child]:
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
    help = "Run gunicorn, a Celery worker and Celery beat together (and the embedded broker); restart what dies."

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            broker = embedded_broker_child()
        except RuntimeError as exc:  # no binary, or a socket path over the kernel's limit
            raise CommandError(str(exc)) from exc
        children = ([broker] if broker is not None else []) + child_commands()
        for child in children:
            if child.name != ESSENTIAL:
                child.policy = RestartPolicy.from_settings()
        self.width = max(len(child.name) for child in children)
        self.output_lock = threading.Lock()
        self.env = {
            # This machine runs a worker of WORKER_CONCURRENCY processes and a beat: /health/ready expects them.
            "HEALTH_EXPECT_WORKERS": str(settings.WORKER_CONCURRENCY),
            "HEALTH_EXPECT_BEAT": "true",
            **os.environ,
            "PYTHONUNBUFFERED": "1",
            "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE,
        }
        stop_signal: list[int] = []

        def on_signal(signum: int, _frame: object) -> None:
            if not stop_signal:
                stop_signal.append(signum)

        previous = {sig: signal.signal(sig, on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
        failed: Child | None = None
        try:
            if broker is not None:
                # Everything else connects to it at start: it answers first.
                self._start(broker)
                assert broker.process is not None
                try:
                    embedded_broker.wait_until_answering(Path(settings.EMBEDDED_BROKER_DIR), broker.process)
                except RuntimeError as exc:
                    raise CommandError(str(exc)) from exc
            for child in children:
                if child is not broker:
                    self._start(child)
            failed = self._supervise(children, stop_signal)
            if stop_signal:
                self._say(f"received {signal.Signals(stop_signal[0]).name}, stopping")
            signum = stop_signal[0] if stop_signal else signal.SIGTERM
            _stop_all([c for c in children if c is not broker], signum)
            if broker is not None:
                _stop_all([broker], signal.SIGTERM)
        finally:
            _kill_leftovers(children)
            for child in children:
                if child.reader is not None:
                    child.reader.join(timeout=2)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        if failed is not None:
            raise CommandError(f"{failed.name} stopped unexpectedly", returncode=1)

    def _supervise(self, children: list[Child], stop_signal: list[int]) -> Child | None:
        """Until a stop signal (None) or the web server's death (that child): restart what dies."""
        while not stop_signal:
            now = time.monotonic()
            for child in children:
                if child.given_up:
                    continue
                if child.restart_at is not None:
                    if now >= child.restart_at:
                        child.restart_at = None
                        child.restarts += 1
                        self._start(child, again=True)
                    continue
                assert child.process is not None
                if child.process.poll() is None:
                    if not (child.policy is not None and child.stuck.is_set()):
                        continue
                    # Alive but no longer consuming (docs/operations.md): as good as dead.
                    self._say(f"{child.name} reported an unrecoverable error; killing it")
                    _kill_group(child.process)
                    child.process.wait()
                returncode = child.process.returncode
                # A Celery worker killed by SIGKILL leaves its pool processes behind, in its session.
                _kill_group(child.process)
                if child.policy is None:
                    self._say(f"{child.name} exited with status {returncode}, stopping the others")
                    return child
                delay = child.policy.after_exit(now=now, ran_for=now - child.started_at)
                if delay is None:
                    child.given_up = True
                    self._say(
                        f"GIVING UP on {child.name}: it exited with status {returncode} after "
                        f"{child.policy.max_restarts} restarts within {child.policy.window:g}s; the web server "
                        f"keeps serving, but {child.name} stays down until runall is started again"
                    )
                else:
                    child.restart_at = now + delay
                    self._say(f"{child.name} exited with status {returncode}; restarting it in {delay:g}s")
            time.sleep(POLL_SECONDS)
        return None

    def _start(self, child: Child, *, again: bool = False) -> None:
        # A session of its own: a Ctrl-C at the terminal reaches the children once, through us, not twice
        # (a second SIGINT makes Celery's shutdown a cold one), and its whole group can be killed.
        child.process = subprocess.Popen(  # noqa: S603 - argv is fixed above
            child.argv,
            cwd=settings.BASE_DIR,
            env=self.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        child.started_at = time.monotonic()
        child.stuck = threading.Event()
        assert child.process.stdout is not None
        child.reader = threading.Thread(
            target=_copy_output,
            args=(child.process.stdout, f"{child.name:<{self.width}} | ", self.output_lock, child.stuck),
            daemon=True,
        )
        child.reader.start()
        self._say(f"{'restarted' if again else 'started'} {child.name} (pid {child.pid})")

    def _say(self, message: str) -> None:
        with self.output_lock:
            self.stdout.write(f"runall: {message}")
            self.stdout.flush()


def _copy_output(stream: IO[bytes], prefix: str, lock: threading.Lock, stuck: threading.Event) -> None:
    for raw in iter(stream.readline, b""):
        line = raw.decode("utf-8", errors="replace").rstrip("\n")
        if STUCK_MARKER in line:
            stuck.set()
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
            with contextlib.suppress(ChildProcessError):
                child.process.wait()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
