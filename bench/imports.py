"""Import throughput: the full path (HTTP -> ImportItem -> Celery -> IncomingOrder) against a bare endpoint.

    .venv/bin/python bench/imports.py [--orders 10000] [--batch-size 100] [--clients 4] [--bare-only]

It starts its own gunicorn (``WEB_CONCURRENCY`` workers, default 2) and Celery worker (``WORKER_CONCURRENCY``,
default 2) on a free port of 127.0.0.1 and a Celery queue of its own, against ``DATABASE_URL`` (default
PostgreSQL ``retail_bench``, created when missing and migrated) and ``CELERY_BROKER_URL`` (default Redis db 14).
The same request bodies (``--orders`` distinct orders of 3 line items, ``--batch-size`` per request) are posted
by ``--clients`` threads with keep-alive sessions, first to ``/bench/bare`` (reads the body, parses the JSON,
answers 200; the median of ``--bare-rounds`` rounds), then to ``/imports/incoming_orders``. It prints orders
per second of both, their ratio, and the import endpoint's request latency (p50, p99). The full path's clock
runs from the first POST until every ImportItem of the run is ``success``; an item that fails, or no progress
for ``--stall-timeout`` seconds, fails the run. Every process it starts is stopped at the end, whatever happens.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import (
    ACCOUNT,
    INTEGRATION,
    POLL_INTERVAL_SECONDS,
    READY_TIMEOUT_SECONDS,
    STOCK_LOCATION,
    Child,
    Children,
    answers,
    create_api_key,
    ensure_demo_structure,
    free_port,
    migrate,
    new_run_id,
    percentile,
    postgres_cpu_seconds,
    redacted,
    supervise,
    tree_cpu_seconds,
    vacuum_analyze,
    wait_for,
    worker_env,
)

# --- Orders ------------------------------------------------------------------------------------------

PRODUCTS = [
    (f"sku-{n:04d}", f"{adjective} {noun}", round(random.Random(n).uniform(9, 899), 2))
    for n, (adjective, noun) in enumerate(
        (a, b)
        for a in ("Organic", "Classic", "Slim", "Wool", "Linen", "Recycled", "Nordic", "Everyday")
        for b in ("T-shirt", "Coffee", "Mug", "Scarf", "Sneakers", "Backpack", "Candle", "Notebook", "Lamp")
    )
]
FIRST_NAMES = ("Anne", "Mads", "Sofie", "Lars", "Freja", "Jonas", "Ida", "Emil")
LAST_NAMES = ("Berg", "Hansen", "Nielsen", "Jensen", "Holm", "Dahl", "Lund")
CITIES = (("København", "2100"), ("Aarhus", "8000"), ("Odense", "5000"), ("Aalborg", "9000"))


def make_order(rng: random.Random, identifier: str) -> dict[str, Any]:
    line_items = []
    for product_id, name, price in rng.sample(PRODUCTS, 3):
        item: dict[str, Any] = {
            "product_identifier": product_id,
            "variant_identifier": f"{product_id}-{rng.choice(('s', 'm', 'l'))}",
            "barcode": f"57{rng.randrange(10**10, 10**11)}",
            "name": name,
            "quantity": rng.randint(1, 4),
            "price": price,
        }
        if rng.random() < 0.2:
            item["discounts"] = [{"name": "Member price", "type": "percentage", "amount": 0.1}]
        line_items.append(item)
    basket: dict[str, Any] = {"currency": "DKK", "line_items": line_items}
    if rng.random() < 0.1:
        basket["discounts"] = [{"name": "Voucher", "type": "amount", "amount": 50.0}]
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    order: dict[str, Any] = {
        "order_identifier": identifier,
        "basket": basket,
        "customer": {
            "customer_identifier": f"c-{rng.randrange(10**6)}",
            "name": f"{first} {last}",
            "email": f"{first.lower()}.{last.lower()}@example.com",
            "phone_number": f"+45{rng.randrange(10**7, 10**8)}",
        },
    }
    if rng.random() < 0.6:
        order["payment"] = {"reference": f"pay_{uuid.UUID(int=rng.getrandbits(128)).hex}"}
        if rng.random() < 0.5:
            city, postal_code = rng.choice(CITIES)
            order["shipping"] = {
                "address": {
                    "name": f"{first} {last}",
                    "street": f"Vestergade {rng.randint(1, 99)}",
                    "city": city,
                    "postal_code": postal_code,
                    "country_code": "DK",
                },
                "method_id": "gls-parcelshop",
                "method_title": "GLS Pakkeshop",
            }
    return order


def request_bodies(prefix: str, orders: int, batch_size: int, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    all_orders = [make_order(rng, f"{prefix}-{i:06d}") for i in range(orders)]
    return [
        json.dumps({"orders": all_orders[start : start + batch_size]}).encode()
        for start in range(0, orders, batch_size)
    ]


# --- Load ----------------------------------------------------------------------------------------------


@dataclass
class PostResult:
    started: float
    finished: float
    latencies: list[float]


def post_all(url: str, bodies: list[bytes], clients: int, check: Callable[[requests.Response], None]) -> PostResult:
    """Post every body once, ``clients`` at a time, each client thread with its own keep-alive session."""
    local = threading.local()
    latencies: list[float] = []
    lock = threading.Lock()

    def post(body: bytes) -> None:
        session = getattr(local, "session", None)
        if session is None:
            session = local.session = requests.Session()
        t0 = time.perf_counter()
        response = session.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=120)
        elapsed = time.perf_counter() - t0
        check(response)
        with lock:
            latencies.append(elapsed)

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=clients) as pool:
        list(pool.map(post, bodies))  # re-raises the first failure
    return PostResult(started, time.perf_counter(), latencies)


def expect_ok(response: requests.Response) -> None:
    if response.status_code != 200 or response.json().get("status") != "OK":
        raise RuntimeError(f"{response.request.url}: {response.status_code} {response.text[:1000]}")


# --- The run -------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--orders", type=int, default=10_000)
    parser.add_argument("--batch-size", type=int, default=100)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--bare-rounds", type=int, default=3, help="rounds of the bare endpoint; the median counts")
    parser.add_argument("--timeout", type=float, default=900.0, help="for the worker to finish, in seconds")
    parser.add_argument(
        "--stall-timeout", type=float, default=60.0, help="fail when no item finishes for this long, in seconds"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bare-only", action="store_true", help="measure the bare endpoint only")
    args = parser.parse_args()

    run_id = new_run_id()
    queue = f"bench-{run_id}"
    env = worker_env(queue, BENCH_BARE_ENDPOINT="1")
    print(f"run {run_id}: database {redacted(env['DATABASE_URL'])}, broker {redacted(env['CELERY_BROKER_URL'])}")
    migrate(env)  # this process reads the same database too (the count of finished items)
    api_key = create_api_key(env, f"bench {run_id}")
    ensure_demo_structure(env)
    vacuum_analyze(env["DATABASE_URL"])

    import django

    django.setup()
    from ops.management.commands.runall import gunicorn_extra_args

    log_dir = Path(tempfile.mkdtemp(prefix=f"bench-imports-{run_id}-"))
    children = Children(log_dir=log_dir, env=env)
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    query = urlencode(
        {"stock_location": STOCK_LOCATION, "account": ACCOUNT, "integration": INTEGRATION, "apikey": api_key}
    )
    import_url = f"{base}/imports/incoming_orders?{query}"
    bare_url = f"{base}/bench/bare"

    def serve() -> int:
        web = children.start_gunicorn(port, os.environ.get("WEB_CONCURRENCY", "2"), *gunicorn_extra_args())
        worker = children.start_worker(queue)
        print(f"logs in {log_dir}; web on {base}; queue {queue}")
        wait_for(lambda: answers(f"{base}/admin/login/"), READY_TIMEOUT_SECONDS, "gunicorn", [web])
        wait_for(lambda: " ready." in worker.log(), READY_TIMEOUT_SECONDS, "the Celery worker", [worker])
        return run(args, run_id, import_url, bare_url, [web, worker])

    def stop() -> None:
        children.stop_all()
        print(f"stopped gunicorn and the Celery worker; logs kept in {log_dir}")

    return supervise(serve, stop)


def run(args: argparse.Namespace, run_id: str, import_url: str, bare_url: str, alive: list[Child]) -> int:
    from django.db.models import Count, Max

    from accounts.models import Account
    from imports.models import ImportItem, ImportKind, ImportStatus

    prefix = f"bench-{run_id}-o"
    bodies = request_bodies(prefix, args.orders, args.batch_size, args.seed)
    orders = args.orders
    print(
        f"{orders} orders in {len(bodies)} requests of up to {args.batch_size} "
        f"({sum(map(len, bodies)) / len(bodies) / 1024:.0f} KiB each), {args.clients} client threads"
    )

    # Warm-up: every gunicorn worker and client connection handles a request before the clock starts.
    warm_up = request_bodies(f"bench-{run_id}-w", args.clients * 2, 1, args.seed + 1)
    post_all(bare_url, warm_up, args.clients, expect_ok)

    # The bare path is short enough for noise to matter: the median of a few rounds.
    rounds = sorted(
        (post_all(bare_url, bodies, args.clients, expect_ok) for _ in range(args.bare_rounds)),
        key=lambda r: r.finished - r.started,
    )
    bare = rounds[len(rounds) // 2]
    bare_rate = orders / (bare.finished - bare.started)
    print(
        f"bare endpoint:  {bare_rate:10.1f} orders/s  ({bare.finished - bare.started:.2f} s, median of "
        f"{len(rounds)} rounds; request p50 {percentile(bare.latencies, 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(bare.latencies, 0.99) * 1000:.0f} ms)"
    )
    if args.bare_only:
        return 0

    account = Account.objects.get(identifier=ACCOUNT)
    items = ImportItem.objects.filter(account=account, kind=ImportKind.INCOMING_ORDER)
    # The import warm-up also proves the whole pipeline before the clock starts.
    baseline = items.aggregate(last=Max("id"))["last"] or 0
    post_all(import_url, warm_up, args.clients, expect_ok)
    warm_items = items.filter(id__gt=baseline, identifier__startswith=f"bench-{run_id}-w-")
    wait_for(
        lambda: warm_items.filter(status=ImportStatus.SUCCESS).count() == len(warm_up),
        READY_TIMEOUT_SECONDS,
        "the warm-up orders to be imported",
        alive,
    )
    baseline = items.aggregate(last=Max("id"))["last"] or 0
    run_items = items.filter(id__gt=baseline, identifier__startswith=f"{prefix}-")

    web, worker = alive
    cpu_before = _cpu(web, worker)
    full = post_all(import_url, bodies, args.clients, expect_ok)
    deadline = time.monotonic() + args.timeout
    last_progress, last_done = time.monotonic(), -1
    while True:
        counts = dict(run_items.values_list("status").annotate(n=Count("id")).order_by())
        finished = counts.get(ImportStatus.SUCCESS, 0)
        if finished == orders:
            break
        if counts.get(ImportStatus.FAILURE) or counts.get(ImportStatus.REJECTED):
            print(f"FAILED: some items did not succeed: {counts}")
            return 1
        now = time.monotonic()
        if finished != last_done:
            last_progress, last_done = now, finished
        elif now - last_progress > args.stall_timeout:
            # No beat runs here, so an item that a task passed over stays pending for good.
            print(f"FAILED: no item finished for {args.stall_timeout:g}s, the rest looks stranded: {counts}")
            return 1
        if now > deadline:
            print(f"FAILED: not all items succeeded within {args.timeout:g}s: {counts}")
            return 1
        for child in alive:
            child.check_alive()
        time.sleep(POLL_INTERVAL_SECONDS)
    done = time.perf_counter()
    cpu_after = _cpu(web, worker)
    full_rate = orders / (done - full.started)
    accepted_rate = orders / (full.finished - full.started)
    print(
        f"full path:      {full_rate:10.1f} orders/s  ({done - full.started:.2f} s from the first POST until "
        f"every item is success; the POSTs alone took {full.finished - full.started:.2f} s, "
        f"{accepted_rate:.1f} orders/s)"
    )
    print(
        f"import request latency: p50 {percentile(full.latencies, 0.5) * 1000:.0f} ms, "
        f"p99 {percentile(full.latencies, 0.99) * 1000:.0f} ms ({len(full.latencies)} requests)"
    )
    print(f"ratio full/bare: {full_rate / bare_rate:.3f} (the bare endpoint is {bare_rate / full_rate:.1f}x faster)")
    used = {name: cpu_after[name] - cpu_before[name] for name in cpu_after if cpu_before.get(name) is not None}
    per_thousand = {name: seconds * 1000 / orders for name, seconds in used.items()}
    cores = os.cpu_count() or 1
    print(
        "CPU per 1,000 orders during the full path: "
        + ", ".join(f"{name} {seconds:.3f} s" for name, seconds in per_thousand.items())
        + f" (total {sum(per_thousand.values()):.3f} s; this bench's own client threads not counted)"
    )
    if per_thousand:
        # What the processes' CPU per order allows on this machine's cores if they did nothing else.
        ceiling = cores * 1000 / sum(per_thousand.values())
        print(
            f"ceiling from that CPU on {cores} cores: {ceiling:.0f} orders/s (full/bare {ceiling / bare_rate:.3f}); "
            + ", ".join(f"{name} alone {cores * 1000 / s:.0f}" for name, s in per_thousand.items() if s)
        )
    return 0


def _cpu(web: Child, worker: Child) -> dict[str, float | None]:
    """CPU seconds used so far by gunicorn (master and workers), the Celery worker (and its pool) and the local
    PostgreSQL server (None when it is not local)."""
    return {
        "web": tree_cpu_seconds(web.process.pid),
        "worker": tree_cpu_seconds(worker.process.pid),
        "postgresql": postgres_cpu_seconds(),
    }


if __name__ == "__main__":
    sys.exit(main())
