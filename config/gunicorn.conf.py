"""gunicorn's settings for production: ``gunicorn -c config/gunicorn.conf.py config.wsgi``.

Read by gunicorn, not by Django; every value can be overridden from the environment.

Worker formula: ``WEB_CONCURRENCY`` if set, else 2 x CPUs + 1 (gunicorn's own advice: while one worker waits on
PostgreSQL or an integrator, another uses the CPU), each with ``GUNICORN_THREADS`` threads (gthread, default 8).
The CPUs are the ones this process may run on; a container limited by a CPU quota rather than a CPU set sees the
host's, so set WEB_CONCURRENCY there. Each thread that served a request holds one database connection
(CONN_MAX_AGE), and the integration call-log writer one more per worker: web machines x workers x (threads + 1)
must stay below PostgreSQL's max_connections (or put PgBouncer in between).

The application is preloaded in the master and warmed there (``config.warmup``) before any worker is forked.
"""

from __future__ import annotations

import os
from typing import Any

from gunicorn.config import KNOWN_SETTINGS


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


# Inside a container the service must listen on every interface; the proxy in front of it is the way in.
bind = os.environ.get("GUNICORN_BIND", "0.0.0.0:8000")
workers = int(os.environ.get("WEB_CONCURRENCY") or 2 * _cpus() + 1)
# Threads, so that a worker goes on serving while some of its requests wait on an integrator (measured
# against sync workers and gevent with a hanging integrator, docs/notes/pos.md). Each thread that served a
# request keeps its own database connection (CONN_MAX_AGE): machines x workers x (threads + 1) < max_connections.
worker_class = os.environ.get("GUNICORN_WORKER_CLASS", "gthread")
threads = int(os.environ.get("GUNICORN_THREADS", "8"))
# The application is loaded and warmed (config.warmup) once in the master, before any worker is forked: a worker
# (at start, after max_requests, after a crash) serves its first request at once. The price: a HUP reloads the
# configuration but not the code; deploy new code with a restart (or USR2 then QUIT of the old master).
preload_app = os.environ.get("GUNICORN_PRELOAD", "true").strip().lower() not in ("0", "false", "no", "off")
# Above the longest legitimate request: a 10 MB import, or a runtime integration's 30-second timeout.
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
graceful_timeout = int(os.environ.get("GUNICORN_GRACEFUL_TIMEOUT", "30"))
keepalive = int(os.environ.get("GUNICORN_KEEPALIVE", "5"))
# A worker is replaced after this many requests (jittered, so they do not all restart at once): a slow leak in
# a library never grows without bound.
max_requests = int(os.environ.get("GUNICORN_MAX_REQUESTS", "2000"))
max_requests_jitter = int(os.environ.get("GUNICORN_MAX_REQUESTS_JITTER", "200"))
# No access log on purpose: import URLs carry the apikey query parameter. Errors go to stderr.
accesslog = None
errorlog = "-"
loglevel = os.environ.get("GUNICORN_LOG_LEVEL", "info")
# The proxy addresses whose X-Forwarded-* headers gunicorn believes (comma-separated, or * on a private network
# where only the proxy can reach the service).
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "127.0.0.1,::1")
# The heartbeat files of the workers: memory, not a container's overlay disk, which can stall them.
SHARED_MEMORY = "/dev/shm"  # noqa: S108 - a directory for gunicorn's own heartbeat files, not data
if os.path.isdir(SHARED_MEMORY):
    worker_tmp_dir = SHARED_MEMORY
# Recent gunicorn masters open a control socket at one fixed path in the home directory; we use none.
if any(setting.name == "control_socket_disable" for setting in KNOWN_SETTINGS):
    control_socket_disable = True


def on_starting(server: Any) -> None:
    """Before the master listens: warm the preloaded application once; every worker is forked from it."""
    if server.cfg.preload_app:
        # Lazy on purpose, not a cycle: gunicorn reads this file before Django is configured, and warmup loads it.
        from config.warmup import warm

        server.log.info("application warmed before forking workers (ms): %s", warm())


def post_worker_init(worker: Any) -> None:
    """Without preload_app each worker loads the application itself: it warms it before accepting requests."""
    if not worker.cfg.preload_app:
        from config.warmup import warm  # lazy on purpose, as in on_starting

        worker.log.info("worker warmed (ms): %s", warm())


def child_exit(server: Any, worker: Any) -> None:
    """Prometheus multiprocess mode (``PROMETHEUS_MULTIPROC_DIR``): a dead worker's counters and histograms are
    folded into the directory's archive files and its own files removed, its live gauges dropped
    (``ops.multiproc``)."""
    directory = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if directory:
        from ops.multiproc import retire  # lazy on purpose: only in multiprocess mode

        try:
            retire(worker.pid, directory)
        except Exception:  # an exception here would stop gunicorn's master: metrics never take the web down
            server.log.exception("could not fold the metrics files of worker %s", worker.pid)
