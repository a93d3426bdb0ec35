"""The process harness every benchmark shares: the environment and database set-up, the child processes
(gunicorn, a Celery worker, any command) with their logs, waiting for a condition while they stay alive, and the
figures (percentiles).

Not a benchmark itself. A script in ``bench/`` puts the repository's root first on ``sys.path`` (so that
``imports``, ``exports``, ``ledger`` and ``integrations`` are the Django apps, not the benchmarks of those names)
and then imports this module as ``bench.harness``.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/retail_bench"
DEFAULT_BROKER_URL = "redis://127.0.0.1:6379/14"
ACCOUNT = "bench"
INTEGRATION = "webshop"
STOCK_LOCATION = "shop-1"
READY_TIMEOUT_SECONDS = 60.0
POLL_INTERVAL_SECONDS = 0.1
POSTGRES_SCHEMES = ("postgres", "postgresql", "pgsql")


# --- Processes ---------------------------------------------------------------------------------------


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def check_alive(self) -> None:
        if self.process.poll() is not None:
            raise RuntimeError(f"{self.name} exited with status {self.process.returncode}:\n{self.log()[-5000:]}")


@dataclass
class Children:
    log_dir: Path
    env: dict[str, str]
    running: list[Child] = field(default_factory=list)

    def start(self, name: str, argv: list[str], cwd: Path = ROOT) -> Child:
        log_path = self.log_dir / f"{name}.log"
        with log_path.open("wb") as log_file:
            process = subprocess.Popen(
                argv,
                cwd=cwd,
                env=self.env,
                stdin=subprocess.DEVNULL,
                stdout=log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group, so its pool processes are stopped with it
            )
        child = Child(name, process, log_path)
        self.running.append(child)
        return child

    def start_worker(self, queue: str, name: str = "worker") -> Child:
        """A Celery worker on ``queue`` alone (``WORKER_CONCURRENCY`` processes, default 2), without the gossip,
        mingle and heartbeat chatter a benchmark does not need; ready once its log says `` ready.``."""
        return self.start(name, worker_argv(queue))

    def start_gunicorn(self, port: int, workers: int | str, *extra: str) -> Child:
        """gunicorn serving ``config.wsgi`` on 127.0.0.1:``port`` with its errors in the log."""
        argv = [sys.executable, "-m", "gunicorn", "config.wsgi", "--bind", f"127.0.0.1:{port}"]
        return self.start("web", [*argv, "--workers", str(workers), "--error-logfile", "-", *extra])

    def stop_all(self) -> None:
        for child in self.running:
            if child.process.poll() is None:
                child.process.terminate()
        deadline = time.monotonic() + 20
        for child in self.running:
            with suppress(subprocess.TimeoutExpired):
                child.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            with suppress(ProcessLookupError):  # whatever is left of its process group
                os.killpg(child.process.pid, signal.SIGKILL)
            child.process.wait()
        self.running.clear()


# --- CPU accounting (Linux /proc) --------------------------------------------------------------------------

CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _stat(pid: int) -> tuple[str, int, list[int]] | None:
    """(command, parent pid, [utime, stime, cutime, cstime]) of a live process, in clock ticks."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    command = text[text.index("(") + 1 : text.rindex(")")]
    fields = text[text.rindex(")") + 2 :].split()
    return command, int(fields[1]), [int(value) for value in fields[11:15]]


def _processes() -> dict[int, tuple[str, int, list[int]]]:
    table = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) is not None:
            table[int(entry.name)] = stat
    return table


def tree_cpu_seconds(root: int, table: dict[int, tuple[str, int, list[int]]] | None = None) -> float:
    """CPU seconds (user + system) a process and its descendants have used: the live ones' own, and what the
    children they have reaped used (a gunicorn worker recycled, a PostgreSQL backend that ended)."""
    table = _processes() if table is None else table
    children: dict[int, list[int]] = {}
    for pid, (_, parent, _) in table.items():
        children.setdefault(parent, []).append(pid)
    ticks, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in table:
            ticks += sum(table[pid][2])
            todo.extend(children.get(pid, ()))
    return ticks / CLOCK_TICKS


def postgres_cpu_seconds() -> float | None:
    """CPU seconds of the local PostgreSQL server (postmaster, its backends and helpers, live and ended), or
    None when it does not run on this machine. Counts every database it serves: read it on a quiet machine."""
    table = _processes()
    roots = [
        pid
        for pid, (command, parent, _) in table.items()
        if command == "postgres" and table.get(parent, ("", 0, []))[0] != "postgres"
    ]
    return sum(tree_cpu_seconds(root, table) for root in roots) if roots else None


QUIET_WORKER = ("--without-gossip", "--without-mingle", "--without-heartbeat")


def worker_argv(queue: str) -> list[str]:
    concurrency = os.environ.get("WORKER_CONCURRENCY", "2")
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel=INFO", "--concurrency", concurrency]
    return [*argv, "--queues", queue, "--hostname", f"{queue}@%h", *QUIET_WORKER]


def wait_for(condition: Callable[[], bool], timeout: float, what: str, alive: list[Child]) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        for child in alive:
            child.check_alive()
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:g}s waiting for {what}")
        time.sleep(POLL_INTERVAL_SECONDS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def answers(url: str) -> bool:
    """Whether ``url`` answers 200 (a server still starting refuses; a busy machine may be slow)."""
    try:
        return requests.get(url, timeout=10).status_code == 200
    except requests.RequestException:
        return False


@contextmanager
def stop_on_sigterm() -> Iterator[None]:
    def raise_interrupt(_signum: int, _frame: object) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def supervise(body: Callable[[], int], cleanup: Callable[[], None]) -> int:
    """Run ``body`` (SIGTERM counts as Ctrl-C) and ``cleanup`` whatever happens: the exit status is body's,
    130 when interrupted, 1 (printed ``FAILED``) when a child died or a wait timed out."""
    try:
        with stop_on_sigterm():
            return body()
    except KeyboardInterrupt:
        print("interrupted")
        return 130
    except RuntimeError as exc:
        print(f"FAILED: {exc}")
        return 1
    finally:
        cleanup()


def at_fixed_rate(rate: float, until: float, stop: threading.Event, work: Callable[[int], None]) -> None:
    """Call ``work(n)`` at ``rate`` per second until the monotonic clock reaches ``until`` (no catching up
    beyond the schedule: a slow call delays the next ones, it does not stack them)."""
    start = time.monotonic()
    n = 0
    while not stop.is_set():
        due = start + n / rate
        if due >= until:
            return
        delay = due - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        work(n)
        n += 1


def phase_arguments(parser: argparse.ArgumentParser, *, seconds: float, rounds: int, phases: str) -> None:
    """``--seconds`` (of each phase) and ``--rounds`` (each a healthy phase and a faulty one) of the fairness
    benchmarks."""
    parser.add_argument("--seconds", type=float, default=seconds, help="length of each phase")
    parser.add_argument("--rounds", type=int, default=rounds, help=phases)


# --- Database and Django ---------------------------------------------------------------------------------


def manage(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}")
    return result.stdout


def django_env(**extra: str) -> dict[str, str]:
    """This shell's environment with ``DATABASE_URL`` (default PostgreSQL ``retail_bench``), the settings module
    and ``extra``."""
    database = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    return {**os.environ, "DATABASE_URL": database, "DJANGO_SETTINGS_MODULE": "config.settings", **extra}


def local_env(folder: Path, **extra: str) -> dict[str, str]:
    """The environment of a run kept in ``folder``: ``DATABASE_URL`` when set, else a SQLite file in it (the
    embedded default), its ``VAR_DIR``, 127.0.0.1 allowed as a destination (the local receivers and
    integrators), ``LOG_LEVEL`` WARNING, and ``extra``."""
    return {
        **os.environ,
        "DATABASE_URL": os.environ.get("DATABASE_URL") or f"sqlite:///{folder / 'db.sqlite3'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "WARNING",
        "VAR_DIR": str(folder),
        "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.1/32",
        **extra,
    }


def worker_env(queue: str, **extra: str) -> dict[str, str]:
    """``django_env`` for processes that run Celery tasks: ``CELERY_BROKER_URL`` (default Redis db 14), every task
    on this run's ``queue``, unbuffered output, ``LOG_LEVEL`` WARNING unless set."""
    defaults = {
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", DEFAULT_BROKER_URL),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "PYTHONUNBUFFERED": "1",
        "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
    }
    return django_env(**{**defaults, **extra})


def new_run_id() -> str:
    """A run's name: when it started, and a random suffix (runs on one database keep their rows apart)."""
    return f"{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:6]}"


def create_api_key(env: dict[str, str], name: str, *options: str) -> str:
    """A new API key of the bench account's integration (created with them when missing)."""
    return manage(env, "create_api_key", ACCOUNT, INTEGRATION, "--name", name, *options).strip().splitlines()[-1]


def ensure_demo_structure(env: dict[str, str]) -> None:
    """The bench account's demo market, shop and register (``accounts.services.ensure_demo_structure``)."""
    manage(
        env,
        "shell",
        "-c",
        "from accounts import services; from accounts.models import Account; "
        f"services.ensure_demo_structure(account=Account.objects.get(identifier={ACCOUNT!r}))",
    )


def migrate(env: dict[str, str]) -> None:
    """Make ``env`` this process's environment too (it reads the same database), create the PostgreSQL database
    when missing, and migrate it."""
    os.environ.update(env)
    ensure_postgres_database(env["DATABASE_URL"])
    manage(env, "migrate", "--noinput")


def setup_django(env: dict[str, str]) -> None:
    """``migrate`` ``env``'s database, then set Django up in this process on it."""
    migrate(env)
    import django

    django.setup()


def vacuum_analyze(url: str, *, checkpoint: bool = False) -> None:
    """Fresh planner statistics: each run adds tens of thousands of rows within seconds, faster than
    autovacuum notices, and plans made on stale statistics would make every run slower than the last. With
    ``checkpoint``, then a CHECKPOINT: what a bulk fill left dirty is written now, not during the measurements."""
    import psycopg  # only PostgreSQL runs need it

    if urlsplit(url).scheme not in POSTGRES_SCHEMES:
        return
    with psycopg.connect(url.replace("pgsql://", "postgresql://", 1), autocommit=True) as conn:
        conn.execute("VACUUM (ANALYZE)")
        if checkpoint:
            conn.execute("CHECKPOINT")


def ensure_postgres_database(url: str) -> None:
    """Create the database of a PostgreSQL URL when it does not exist."""
    import psycopg  # only PostgreSQL runs need it
    from psycopg import sql

    parts = urlsplit(url)
    if parts.scheme not in POSTGRES_SCHEMES:
        return
    name = parts.path.lstrip("/")
    maintenance = urlunsplit((parts.scheme.replace("pgsql", "postgresql"), parts.netloc, "/postgres", "", ""))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone() is None:
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
            print(f"created database {name}")


def redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        parts = parts._replace(netloc=parts.netloc.replace(f":{parts.password}@", ":***@"))
    return urlunsplit(parts)


def line_amounts(amount: Any, vat: Any) -> dict[str, Any]:
    """The amounts of a sale's line item sold at its price (docs/amounts.md: the line's, no discount, no sales
    tax): what the checkout benchmarks post."""
    return {
        "retail_price": amount,
        "base_price": amount,
        "sub_total": amount,
        "total": amount,
        "total_tax_amount": vat,
        "vat_amount": vat,
        "sales_tax_amount": 0,
    }


# --- Figures ---------------------------------------------------------------------------------------------


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with at least ``fraction`` of the values at or below it."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]
