"""POS checkouts through the real API: SQL queries per checkout by size, and the 20-line checkout's p50 beside
the bare endpoint fed the same bodies.

    .venv/bin/python bench/checkouts.py [--requests 200] [--clients 1] [--lines 20]

Against ``DATABASE_URL`` (default: a SQLite file in a temporary folder, the embedded default), migrated, with an
account whose export queues are those of a real shop (its checkouts collected for a daily file; its sales and stock
events sent in real time, to a web hook no worker calls here: the outbox rows are written, nothing is sent), and
one with no export queue.

1. Queries: in this process, through the POS endpoint's whole stack (middleware, authentication, the service, the
   answer, and what runs after the commit; Django's test client, used here only to count, never to time), a
   checkout of 1, 5, 20 and 50 lines of each account, counted with ``CaptureQueriesContext`` (BEGIN and COMMIT
   not counted: Django logs them on SQLite only).
2. Time: gunicorn started with the project's ``config/gunicorn.conf.py`` as deployed, and ``--requests`` distinct
   ``--lines``-line checkouts posted by ``--clients`` keep-alive clients, first to ``/bench/bare`` (reads and parses
   the body, answers 200), then to ``/api/v1/pos/checkouts`` (the account with export queues); p50 and p99 of
   both and the ratio of the p50s.

Target: queries per checkout independent of the line count and at most 10. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

# The POS benchmarks' database, tenant and gunicorn helpers (loaded by path: a module named "imports" is the app).
_spec = importlib.util.spec_from_file_location("bench_pos_setup", Path(__file__).with_name("pos_setup.py"))
setup = sys.modules["bench_pos_setup"] = importlib.util.module_from_spec(_spec)  # type: ignore[arg-type]
_spec.loader.exec_module(setup)  # type: ignore[union-attr]
harness = setup.harness

ACCOUNTS = {"bench": True, "bench-plain": False}  # identifier -> with the export queues
SIZES = (1, 5, 20, 50)
TENANT = """
from accounts import services
from accounts.models import Scope
from exports.models import ExportQueue

account, integration = services.ensure_account_and_integration(
    account_identifier=%(account)r, integration_identifier="webshop"
)
services.ensure_demo_structure(account=account)
for entity_type, trigger in (("checkouts", "daily"), ("sales", "realtime"), ("stock_events", "realtime"))[:%(queues)d]:
    ExportQueue.objects.get_or_create(
        account=account, name=f"bench {entity_type}",
        defaults={"entity_type": entity_type, "trigger": trigger, "transform": {"type": "identity"},
                  "delivery": {"type": "webhook", "url": "http://127.0.0.1:9/hook"}},
    )
_, key = services.create_api_key(account=account, integration=integration, scopes=[Scope.POS])
print(key)
"""


def body(identifier: str, lines: int) -> bytes:
    """A valid checkout of ``lines`` lines of distinct products (the shape the ledger's tests post)."""
    from tests.support.checkouts import checkout_body

    products = [(f"sku-{n:04d}", "tops", 1 + n % 3, "49.95") for n in range(lines)]
    return json.dumps(checkout_body(identifier=identifier, lines=products, timestamp=int(time.time()))).encode()


def count_queries(query: str, run_id: str) -> dict[int, int]:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    client = Client(HTTP_HOST="127.0.0.1")
    url = f"/api/v1/pos/checkouts?{query}"
    client.post(url, body(f"{run_id}-q-warm", 1), content_type="application/json")  # the register's period opens
    counts = {}
    for size in SIZES:
        with CaptureQueriesContext(connection) as queries:
            response = client.post(url, body(f"{run_id}-q{size}", size), content_type="application/json")
        if response.status_code != 201:
            raise RuntimeError(f"checkout of {size} lines: {response.status_code} {response.content[:500]!r}")
        counts[size] = sum(1 for q in queries.captured_queries if not q["sql"].startswith(("BEGIN", "COMMIT")))
    return counts


def post_all(url: str, bodies: list[bytes], clients: int, status: int) -> list[float]:
    """Every body once, ``clients`` at a time on keep-alive sessions; the latencies in milliseconds."""
    local = threading.local()
    latencies: list[float] = []

    def post(data: bytes) -> None:
        session = getattr(local, "session", None) or requests.Session()
        local.session = session
        started = time.perf_counter()
        response = session.post(url, data=data, headers={"Content-Type": "application/json"}, timeout=60)
        latencies.append((time.perf_counter() - started) * 1000)
        if response.status_code != status:
            raise RuntimeError(f"{url.split('?')[0]}: {response.status_code} {response.text[:500]}")

    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(post, bodies))
    return latencies


def describe(latencies: list[float]) -> str:
    return f"p50 {harness.percentile(latencies, 0.5):7.2f} ms  p99 {harness.percentile(latencies, 0.99):7.2f} ms"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=200, help="timed checkouts (and bare requests)")
    parser.add_argument("--clients", type=int, default=1)
    parser.add_argument("--lines", type=int, default=20, help="lines of the timed checkouts")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-checkouts-"))
    env = setup.environment(folder)
    run_id = time.strftime("%Y%m%d%H%M%S")
    harness.ensure_postgres_database(env["DATABASE_URL"])
    harness.manage(env, "migrate", "--noinput")
    queries = {}
    for account, queues in ACCOUNTS.items():
        script = TENANT % {"account": account, "queues": 3 if queues else 0}
        key = harness.manage(env, "shell", "-c", script).strip().splitlines()[-1]
        queries[account] = f"account={account}&integration=webshop&apikey={key}"

    import os

    os.environ.update(env)  # this process counts queries on the same database
    import django

    django.setup()
    print(f"database {env['DATABASE_URL'].split('@')[-1]}; logs in {folder}")
    flat = True
    for account, queues in ACCOUNTS.items():
        counts = count_queries(queries[account], f"{run_id}-{account}")
        flat = flat and len(set(counts.values())) == 1
        what = "with export queues of checkouts, sales, stock events" if queues else "with no export queue"
        print(f"queries per checkout, {what}: " + ", ".join(f"{size} lines: {n}" for size, n in counts.items()))
    print(f"  independent of the line count: {'yes' if flat else 'NO'}")
    query = queries["bench"]

    children = harness.Children(log_dir=folder, env=env)
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    workers = int(__import__("runpy").run_path(str(harness.ROOT / "config" / "gunicorn.conf.py"))["workers"])
    try:
        web = setup.start_gunicorn(children, env, folder, harness.ROOT, port, {"BENCH_BARE_ENDPOINT": "1"})
        setup.wait_ready(folder, workers, web)
        warm = [body(f"{run_id}-w{n}", args.lines) for n in range(workers * 2)]
        timed = [body(f"{run_id}-t{n}", args.lines) for n in range(args.requests)]
        post_all(f"{base}/bench/bare", warm, args.clients, 200)
        bare = post_all(f"{base}/bench/bare", timed, args.clients, 200)
        post_all(f"{base}/api/v1/pos/checkouts?{query}", warm, args.clients, 201)
        full = post_all(f"{base}/api/v1/pos/checkouts?{query}", timed, args.clients, 201)
    finally:
        children.stop_all()
    print(f"{args.requests} checkouts of {args.lines} lines, {args.clients} client(s), gunicorn {workers} workers:")
    print(f"  bare endpoint:  {describe(bare)}")
    print(f"  POS checkouts:  {describe(full)}")
    ratio = harness.percentile(full, 0.5) / harness.percentile(bare, 0.5)
    print(f"  p50 checkout / bare: {ratio:.1f}")
    return 0 if flat else 1


if __name__ == "__main__":
    sys.exit(main())
