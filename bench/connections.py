"""PostgreSQL connections one machine opens: real gunicorn, a Celery worker and beat at the documented
defaults, under enough concurrent requests that every web thread serves one, counted in ``pg_stat_activity``.

    .venv/bin/python bench/connections.py [--pool | --no-pool] [--seconds 15] [--clients 64]

Against ``DATABASE_URL`` (default PostgreSQL ``retail_ops`` on 127.0.0.1, migrated here) and ``CELERY_BROKER_URL``
(default Redis db 14 on 127.0.0.1). gunicorn runs ``config/gunicorn.conf.py`` unchanged (2 x CPUs + 1 workers, 8
threads); the worker consumes the four production queues with Celery's default concurrency (the CPUs); beat runs
the leased scheduler. Prints the most connections seen with the web alone under load, then with the worker and
beat added, under load again. ``--pool`` is ``DATABASE_POOL=true``; the default is a connection per thread
(CONN_MAX_AGE 60), as the service's.
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
import urllib.request
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
QUEUES = "celery,imports,exports,exports-cron"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def count(dsn: str, database: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> pg_backend_pid()", [database]
        ).fetchone()
    return int(row[0]) if row else 0


def load(url: str, clients: int, seconds: float, dsn: str, database: str) -> int:
    """``clients`` threads GET ``url`` for ``seconds``; returns the most connections seen meanwhile."""
    stop = time.monotonic() + seconds
    peak = 0

    def client() -> None:
        while time.monotonic() < stop:
            try:
                urllib.request.urlopen(url, timeout=10).read()  # noqa: S310 - our own server on 127.0.0.1
            except OSError:
                time.sleep(0.05)  # a 503 (no worker yet) or a refused connection: keep the load on

    threads = [threading.Thread(target=client, daemon=True) for _ in range(clients)]
    for thread in threads:
        thread.start()
    while time.monotonic() < stop:
        peak = max(peak, count(dsn, database))
        time.sleep(0.25)
    for thread in threads:
        thread.join()
    return max(peak, count(dsn, database))


def wait_for(url: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            urllib.request.urlopen(url, timeout=2).read()  # noqa: S310
            return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout:g} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pool", action=argparse.BooleanOptionalAction, default=False)
    parser.add_argument("--seconds", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=64)
    args = parser.parse_args()

    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/retail_ops")
    database = database_url.rsplit("/", 1)[1]
    dsn = database_url.replace(f"/{database}", "/postgres")
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", "redis://127.0.0.1:6379/14"),
        "DATABASE_POOL": "true" if args.pool else "false",
        "TASK_ROUTING": "true",
        "GUNICORN_BIND": f"127.0.0.1:{port}",
        "HEALTH_BEAT_MAX_AGE_SECONDS": "0",
        "PYTHONUNBUFFERED": "1",
    }
    env.pop("WEB_CONCURRENCY", None)  # gunicorn's own formula, as documented
    python = sys.executable
    subprocess.run([python, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=env, check=True)
    before = count(dsn, database)
    log_path = Path(os.environ.get("CONNECTIONS_LOG", os.devnull))
    logs = log_path.open("wb")
    started: list[subprocess.Popen[bytes]] = []

    def start(argv: list[str]) -> None:
        started.append(subprocess.Popen(argv, cwd=ROOT, env=env, stdout=logs, stderr=logs, start_new_session=True))

    try:
        start([python, "-m", "gunicorn", "-c", "config/gunicorn.conf.py", "config.wsgi"])
        url = f"http://127.0.0.1:{port}/health/ready"
        wait_for(f"http://127.0.0.1:{port}/health/live")
        web = load(url, args.clients, args.seconds, dsn, database) - before
        start([python, "-m", "celery", "-A", "config", "worker", "-l", "warning", "--queues", QUEUES])
        start([python, "-m", "celery", "-A", "config", "beat", "-l", "warning"])
        time.sleep(10)  # the worker's pool processes and beat start, prove alive, send and run the first tasks
        idle = count(dsn, database) - before
        everything = load(url, args.clients, args.seconds, dsn, database) - before
    finally:
        for process in started:
            with_group = os.getpgid(process.pid)
            os.killpg(with_group, signal.SIGTERM)
        for process in started:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
        logs.close()
    cpus = len(os.sched_getaffinity(0))
    print(
        f"pool={'on' if args.pool else 'off'} cpus={cpus} gunicorn workers={2 * cpus + 1} threads=8 "
        f"celery concurrency={cpus}"
    )
    print(f"web alone under load: {web} connections")
    print(f"web + worker + beat, idle after load: {idle}; under load: {everything}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
