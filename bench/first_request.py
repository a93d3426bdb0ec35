"""What a fresh gunicorn worker costs its first request, and how long a recycled worker takes to be ready.

    .venv/bin/python bench/first_request.py [--workers 5] [--root PATH]

Starts gunicorn with the project's ``config/gunicorn.conf.py`` (worker class, threads and preload as configured;
``GUNICORN_*`` variables apply) and one worker, on a database of its own (SQLite unless ``DATABASE_URL``), with a
reference integrator for customer discounts on 127.0.0.1. Then, ``--workers`` times: waits until the worker
reports ready (a ``post_worker_init`` hook added by the benchmark), prices a basket with a new customer (its
first request), prices another (its second), and stops the worker with SIGTERM, as ``max_requests`` or a
deploy would; the master starts the next one. It prints, per worker, the time from its fork until it could
accept a request (its start time in /proc to the hook, 10 ms resolution), and its first and second request.

``--root`` runs another checkout's code and configuration (e.g. an export of an older commit) with this
benchmark, to compare before and after. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import tempfile
import time
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness
from bench import pos_setup as setup


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--workers", type=int, default=5, help="how many workers in a row to measure")
    parser.add_argument("--root", type=Path, default=harness.ROOT, help="the checkout whose code gunicorn runs")
    args = parser.parse_args()

    from tests.support.reference_server import running

    folder = Path(tempfile.mkdtemp(prefix="bench-first-request-"))
    env = setup.environment(folder)
    children = harness.Children(log_dir=folder, env=env)
    rows: list[tuple[int, float, float, float]] = []
    with running() as reference:
        keys = setup.prepare(env, {"bench": reference.url})
        port = harness.free_port()
        base = f"http://127.0.0.1:{port}"
        try:
            web = setup.start_gunicorn(children, env, folder, args.root.resolve(), port, {"WEB_CONCURRENCY": "1"})
            seen: set[int] = set()
            for n in range(args.workers):
                ready = setup.wait_ready(folder, len(seen) + 1, web)
                [pid] = ready - seen
                seen.add(pid)
                while not (folder / f"ready-{pid}").read_text():
                    time.sleep(0.001)  # written, not yet filled in
                booted = setup.boot_seconds(folder, pid)
                timings = []
                for customer in (f"w{n}-first", f"w{n}-second"):
                    with requests.Session() as session:
                        before = time.perf_counter()
                        response = setup.price(session, base, "bench", keys["bench"], customer)
                        timings.append((time.perf_counter() - before) * 1000)
                        response.raise_for_status()
                rows.append((pid, booted, timings[0], timings[1]))
                os.kill(pid, signal.SIGTERM)
        finally:
            children.stop_all()

    print(f"gunicorn from {args.root}: one worker, recycled {args.workers} times; basket with a customer")
    print(f"  {'worker':>8s} {'fork->ready':>12s} {'1st request':>12s} {'2nd request':>12s}")
    for pid, booted, first, second in rows:
        print(f"  {pid:>8d} {booted * 1000:>10.0f}ms {first:>10.1f}ms {second:>10.1f}ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
