"""Soak under faults (docs/operations.md): sustained imports, POS checkouts and real-time web hook exports
while a Celery worker is killed every minute and Redis is restarted once; at the end nothing is lost.

    .venv/bin/python bench/soak.py [--minutes 10] [--import-rate 2] [--orders-per-import 5] [--checkout-rate 4]

CI would run ``--minutes 2``. Real processes: gunicorn (``WEB_CONCURRENCY``, default 2) and a Celery worker
(``WORKER_CONCURRENCY``, default 2) on a queue of this run, against ``DATABASE_URL`` (default PostgreSQL
``retail_soak``, created and migrated) and a private ``redis-server`` on a free port of 127.0.0.1 (nothing on
disk, so a restart loses every queued task, as a crashed broker would; the machine's Redis is untouched). A
web hook receiver in this process stands for the integrator; each entity type the load creates (checkouts,
sales, stock events) has a real-time export queue of its own pointing at it.

Load, at a fixed rate for ``--minutes``: ``POST /imports/incoming_orders`` (``--orders-per-import`` distinct
orders each) and ``POST /api/v1/pos/checkouts`` (one sale of two lines each). A request that fails (a
connection error or a 5xx while Redis is down) is sent again, as a client would; both endpoints are
idempotent by identifier. Faults: every minute the worker gets SIGKILL (its whole process group: no chance to
requeue or ack anything) and is started again; once, half-way through, Redis is killed and started empty.
A beat thread calls the two sweepers (``sweep_pending_imports``, ``sweep_exports``) every few seconds, as the
beat would, with short grace periods (the environment below), so the run can drain in minutes; a killed worker's
leases are taken over once it is unseen (`LIVENESS_TIMEOUT_SECONDS`).

After the load, a drain period (``--drain-timeout``) lets the sweepers catch up, then the checks:
- every imported order materialised exactly once (``IncomingOrder`` rows per identifier == 1);
- every accepted checkout stored exactly once;
- every export item of the run either delivered (its delivery id received by the web hook at least once) or
  logged ``failure``; a delivery id received more than once is a duplicate the outbox design allows (at least
  once; receivers drop repeats by ``webhook-id``), counted and printed separately, not a failure.
It prints the counts, p50/p99 latencies (import request, checkout request, commit -> receipt) and the loss
count, and exits 1 unless the loss count is 0. Every process it starts is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import signal
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness
from bench import imports as bench_imports
from tests.support.private_redis import PrivateRedis

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/retail_soak"
REGISTER = "reg-1"
ENTITY_TYPES = ("checkouts", "sales", "stock_events")
SWEEP_INTERVAL_SECONDS = 3.0
WINDOW_SECONDS = 15.0  # the report's commit -> receipt by when the item was committed
# Short grace periods: what a killed worker or a lost task leaves pending is taken up again within seconds, so
# the run drains in minutes (production keeps the defaults). Shared by bench/soak_embedded.py.
SHORT_SWEEPS = {"IMPORT_SWEEP_GRACE_SECONDS": "10", "EXPORT_SWEEP_GRACE_SECONDS": "10", "EXPORT_RETRY_BASE_DELAY": "2"}


# --- A private run -------------------------------------------------------------------------------------


def start_private_run(
    name: str, run_id: str, redis_server: PrivateRedis, database_url: str, **extra: str
) -> tuple[dict[str, str], dict[str, str]]:
    """A run on its own Redis and its own Celery queue ``{name}-{run_id}`` (the soaks', bench/scaleout.py's): the
    environment (``worker_env``; ``DATABASE_URL`` when set, else ``database_url``; every task on that queue; the web
    hook receiver in this process allowed; ``extra``), printed; the database migrated; an API key of each scope
    ("imports", "pos"); fresh planner statistics; Django set up in this process. Returns the environment and the
    keys by scope."""
    env = harness.worker_env(
        f"{name}-{run_id}",
        DATABASE_URL=os.environ.get("DATABASE_URL", database_url),
        CELERY_BROKER_URL=redis_server.url,
        TASK_ROUTING="false",  # every task on this run's private queue, whatever the machine's settings
        OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32",  # the web hook receiver in this process
        **extra,
    )
    print(f"run {run_id}: database {harness.redacted(env['DATABASE_URL'])}, private Redis on :{redis_server.port}")
    harness.migrate(env)
    api_keys = {
        scope: harness.create_api_key(env, f"{name} {scope} {run_id}", *options)
        for scope, options in (("imports", ()), ("pos", ("--scope", "pos")))
    }
    harness.vacuum_analyze(env["DATABASE_URL"])
    harness.setup_django(env)
    return env, api_keys


# --- Load --------------------------------------------------------------------------------------------


@dataclass
class Stats:
    lock: threading.Lock = field(default_factory=threading.Lock)
    import_latencies: list[float] = field(default_factory=list)
    checkout_latencies: list[float] = field(default_factory=list)
    imported: list[str] = field(default_factory=list)  # order identifiers the server accepted
    checkouts: list[str] = field(default_factory=list)  # checkout identifiers the server accepted
    retried_requests: int = 0
    worker_crashes: int = 0  # worker processes that died or gave up by themselves (restarted by the supervisor)
    given_up: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)

    def event(self, started: float, text: str) -> None:
        line = f"[{time.monotonic() - started:6.1f}s] {text}"
        print(line, flush=True)
        with self.lock:
            self.events.append(line)


def checkout_body(identifier: str, n: int) -> dict[str, Any]:
    """One sale of two lines at 25% VAT (prices including VAT), paid by card: the shape of
    tests/ledger/test_checkouts.py ``checkout_body``."""
    rate = Decimal("0.25")
    lines = [(f"sku-{n % 40:04d}", "tops", 1 + n % 3, Decimal("100.00")), ("sku-9000", "mugs", 1, Decimal("49.95"))]
    line_items = []
    for number, (product_id, group, quantity, price) in enumerate(lines, start=1):
        amount = (quantity * price).quantize(Decimal("0.01"))
        vat = (amount * rate / (1 + rate)).quantize(Decimal("0.01"))
        line_items.append(
            {
                "line_item_id": f"li-{number}",
                "id": product_id,
                "product_group": group,
                "quantity": quantity,
                **harness.line_amounts(amount, vat),
                "taxes": [{"amount": vat, "rate": rate, "name": "VAT", "type": "vat"}],
            }
        )
    total = sum((line["total"] for line in line_items), Decimal(0))
    vat_total = sum((line["vat_amount"] for line in line_items), Decimal(0))
    return {
        "identifier": identifier,
        "timing": {"timestamp": int(time.time()), "timezone": "Europe/Copenhagen"},
        "source": {"register_id": REGISTER, "cashier_id": "cashier-7", "cashier_name": "AB"},
        "base_currency_code": "DKK",
        "payments": [{"amount": total, "identifier": "pay-1", "payment_type": "card.external", "success": True}],
        "sales": [
            {
                "identifier": f"{identifier}-s1",
                "sequence_number": n + 1,
                "basket": {
                    "base_price": total,
                    "sub_total": total,
                    "total": total,
                    "total_discounts": Decimal(0),
                    "total_tax_amount": vat_total,
                    "vat_amount": vat_total,
                    "sales_tax_amount": Decimal(0),
                    "is_return": False,
                    "line_items": line_items,
                    "taxes": [{"amount": vat_total, "rate": rate, "name": "VAT", "type": "vat"}],
                },
            }
        ],
    }


def _decimal_as_number(value: Any) -> Any:
    if isinstance(value, Decimal):
        return float(value) if value != value.to_integral_value() else int(value)
    raise TypeError(type(value))


def post_until_accepted(
    session: requests.Session, url: str, body: bytes, ok: Callable[[requests.Response], bool], stats: Stats, what: str
) -> float | None:
    """POST until the server accepts (as a client would while Redis or a worker is down); the latency of the
    accepted request, or None after the retries ran out."""
    for attempt in range(20):
        t0 = time.perf_counter()
        try:
            response = session.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=30)
        except requests.RequestException as exc:
            problem = f"{type(exc).__name__}"
        else:
            if ok(response):
                return time.perf_counter() - t0
            problem = f"{response.status_code} {response.text[:300]}"
            if response.status_code < 500:  # a 4xx will not get better
                break
        with stats.lock:
            stats.retried_requests += 1
        time.sleep(min(0.2 * 2**attempt, 3.0))
    with stats.lock:
        stats.given_up.append(f"{what}: {problem}")
    return None


# --- The run -----------------------------------------------------------------------------------------


class Load:
    """The soak's load: order imports and POS checkouts posted at fixed rates from threads (one HTTP session per
    thread), each accepted request's latency and identifiers recorded in ``stats``. Shared by ``bench/soak.py``
    and ``bench/soak_embedded.py``."""

    def __init__(
        self,
        *,
        args: argparse.Namespace,
        run_id: str,
        import_url: str,
        checkout_url: str,
        stats: Stats,
        stop: threading.Event,
        started: float,
    ) -> None:
        self.args = args
        self.run_id = run_id
        self.import_url = import_url
        self.checkout_url = checkout_url
        self.stats = stats
        self.stop = stop
        self.started = started
        self.until = started + args.minutes * 60
        self.local = threading.local()

    @classmethod
    def begin(cls, args: argparse.Namespace, run_id: str, import_url: str, checkout_url: str) -> Load:
        """A load whose clock starts now, with fresh ``stats`` and its own ``stop`` event."""
        urls = {"import_url": import_url, "checkout_url": checkout_url}
        return cls(args=args, run_id=run_id, stats=Stats(), stop=threading.Event(), started=time.monotonic(), **urls)

    def run(
        self,
        *,
        server: harness.Child,
        alongside: list[threading.Thread] | None = None,
        background: list[threading.Thread],
        progress: bool = False,
    ) -> tuple[float, bool]:
        """Start the load's threads, the threads ``alongside`` it and the ``background`` ones; wait for the load
        while ``server`` stays alive (``progress``: counts printed every minute); drain; stop the background.
        Returns the load's seconds and whether it drained."""
        threads = [*self.threads(), *(alongside or [])]
        for thread in [*threads, *background]:
            thread.start()
        last_print = time.monotonic()
        while any(t.is_alive() for t in threads):
            server.check_alive()
            for t in threads:
                t.join(timeout=0.5)
            if progress and time.monotonic() - last_print >= 60:
                last_print = time.monotonic()
                with self.stats.lock:
                    done = (len(self.stats.import_latencies), len(self.stats.checkout_latencies))
                    again = self.stats.retried_requests
                self.stats.event(self.started, f"imports {done[0]}, checkouts {done[1]}, requests sent again {again}")
        load_seconds = time.monotonic() - self.started
        self.stats.event(self.started, "load over; draining")
        drained = drain(self.args, self.run_id, self.stats, self.started)
        self.stop.set()
        for thread in background:
            thread.join(timeout=30)
        return load_seconds, drained

    def session(self) -> requests.Session:
        if getattr(self.local, "session", None) is None:
            self.local.session = requests.Session()
        return self.local.session  # type: ignore[no-any-return]

    def one_import(self, n: int) -> None:
        identifiers = [f"soak-{self.run_id}-o{n:06d}-{i}" for i in range(self.args.orders_per_import)]
        orders = [bench_imports.make_order(random.Random(n * 100 + i), ident) for i, ident in enumerate(identifiers)]
        body = json.dumps({"orders": orders}).encode()
        latency = post_until_accepted(
            self.session(),
            self.import_url,
            body,
            lambda r: r.status_code == 200 and r.json().get("status") == "OK",
            self.stats,
            f"import {n}",
        )
        if latency is not None:
            with self.stats.lock:
                self.stats.import_latencies.append(latency)
                self.stats.imported.extend(identifiers)

    def one_checkout(self, n: int) -> None:
        identifier = f"soak-{self.run_id}-c{n:06d}"
        body = json.dumps(checkout_body(identifier, n), default=_decimal_as_number).encode()
        latency = post_until_accepted(
            self.session(), self.checkout_url, body, lambda r: r.status_code in (200, 201), self.stats, f"checkout {n}"
        )
        if latency is not None:
            with self.stats.lock:
                self.stats.checkout_latencies.append(latency)
                self.stats.checkouts.append(identifier)

    def thread(self, rate: float, work: Callable[[int], None], name: str) -> threading.Thread:
        def loop() -> None:
            try:
                harness.at_fixed_rate(rate, self.until, self.stop, work)
            except Exception:
                self.stats.event(self.started, f"{name} load thread crashed:\n{traceback.format_exc()}")
                self.stop.set()

        return threading.Thread(target=loop, daemon=True)

    def threads(self) -> list[threading.Thread]:
        return [
            self.thread(self.args.import_rate, self.one_import, "import"),
            self.thread(self.args.checkout_rate, self.one_checkout, "checkout"),
        ]


def load_arguments(
    parser: argparse.ArgumentParser, *, minutes: float, import_rate: float, checkout_rate: float
) -> None:
    """The options of the load (``Load``) and of the drain after it, shared with bench/soak_embedded.py."""
    parser.add_argument("--minutes", type=float, default=minutes, help="of load (CI: 2)")
    parser.add_argument("--import-rate", type=float, default=import_rate, help="import requests per second")
    parser.add_argument("--orders-per-import", type=int, default=5)
    parser.add_argument("--checkout-rate", type=float, default=checkout_rate, help="checkouts per second")
    parser.add_argument("--drain-timeout", type=float, default=300.0, help="seconds for the sweepers to catch up")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    load_arguments(parser, minutes=10.0, import_rate=2.0, checkout_rate=4.0)
    parser.add_argument("--kill-every", type=float, default=60.0, help="seconds between worker kills")
    args = parser.parse_args()

    run_id = harness.new_run_id()
    queue = f"soak-{run_id}"
    log_dir = Path(tempfile.mkdtemp(prefix=f"bench-soak-{run_id}-"))
    redis_server = PrivateRedis(log_dir)
    # The default lease: a killed worker's leases are taken over once it is unseen (core.liveness), and a
    # shorter lease would shorten the task's time below a web hook's timeouts (one send a task, exports.W002).
    env, api_keys = start_private_run("soak", run_id, redis_server, DEFAULT_DATABASE_URL, **SHORT_SWEEPS)
    from accounts import services as account_services
    from accounts.models import Account
    from exports.models import ExportQueue
    from ops.management.commands.runall import gunicorn_extra_args
    from tests.support.receivers import running_receiver

    account = Account.objects.get(identifier=harness.ACCOUNT)
    account_services.ensure_demo_structure(account=account)
    # Queues of earlier runs point at receivers that are gone.
    ExportQueue.objects.filter(account=account, name__startswith="soak-").delete()

    children = harness.Children(log_dir=log_dir, env=env)
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    credentials = {"account": harness.ACCOUNT, "integration": harness.INTEGRATION}
    import_url = (
        f"{base}/imports/incoming_orders?"
        f"{urlencode({**credentials, 'stock_location': harness.STOCK_LOCATION, 'apikey': api_keys['imports']})}"
    )
    checkout_url = f"{base}/api/v1/pos/checkouts?{urlencode({**credentials, 'apikey': api_keys['pos']})}"
    worker_argv = harness.worker_argv(queue)
    queues: list[ExportQueue] = []

    def serve() -> int:
        with running_receiver() as receiver:
            queues.extend(create_realtime_queues(account=account, run_id=run_id, url=receiver.url))
            redis_server.start()
            web = children.start_gunicorn(port, os.environ.get("WEB_CONCURRENCY", "2"), *gunicorn_extra_args())
            worker = children.start("worker-0", worker_argv)
            harness.wait_for(lambda: harness.answers(f"{base}/admin/login/"), 60, "gunicorn", [web])
            harness.wait_for(lambda: " ready." in worker.log(), 60, "the Celery worker", [worker])
            print(f"logs in {log_dir}; web on {base}; queue {queue}; receiver {receiver.url}")
            return run(args, run_id, import_url, checkout_url, children, worker_argv, web, redis_server, receiver)

    def stop() -> None:
        children.stop_all()
        redis_server.kill()
        ExportQueue.objects.filter(pk__in=[q.pk for q in queues]).delete()
        print(f"stopped gunicorn, the Celery worker and Redis; logs kept in {log_dir}")

    return harness.supervise(serve, stop)


def create_realtime_queues(*, account: Any, run_id: str, url: str) -> list[Any]:
    """A real-time web hook queue to ``url`` per entity type the load creates (``soak-<run>-<type>``)."""
    from exports import services as export_services

    return [
        export_services.create_queue(
            account=account,
            name=f"soak-{run_id}-{entity_type}",
            entity_type=entity_type,
            delivery={"type": "webhook", "url": url},
        )[0]
        for entity_type in ENTITY_TYPES
    ]


def create_hourly_sales_queue(*, account: Any, name: str, url: str) -> Any:
    """A web hook queue to ``url`` of the sales of each hour (the cron window both stacks or the embedded beat
    start)."""
    from exports import services as export_services

    queue, _ = export_services.create_queue(
        account=account, name=name, entity_type="sales", trigger="hourly", delivery={"type": "webhook", "url": url}
    )
    return queue


def run(
    args: argparse.Namespace,
    run_id: str,
    import_url: str,
    checkout_url: str,
    children: Any,
    worker_argv: list[str],
    web: Any,
    redis_server: PrivateRedis,
    receiver: Any,
) -> int:
    from exports.tasks import sweep_exports
    from imports.tasks import sweep_pending_imports

    load = Load.begin(args, run_id, import_url, checkout_url)
    stats, stop, started = load.stats, load.stop, load.started
    load_until = load.until  # the load threads stop then
    workers = [children.running[-1]]

    def beat() -> None:
        """What the beat does for recovery: both sweepers, every few seconds (errors while Redis is down are
        the point of the exercise: the next sweep tries again)."""
        while not stop.wait(SWEEP_INTERVAL_SECONDS):
            for sweep in (sweep_pending_imports, sweep_exports):
                try:
                    sweep()
                except Exception as exc:
                    stats.event(started, f"sweep {sweep.name} failed ({type(exc).__name__}); the next one retries")

    worker_lock = threading.Lock()  # the fault script and the supervisor both replace the worker

    def replace_worker(reason: str) -> None:
        with worker_lock:
            victim = workers[-1]
            with contextlib.suppress(ProcessLookupError):  # already gone: what is left of its group
                os.killpg(victim.process.pid, signal.SIGKILL)
            victim.process.wait()
            stats.event(started, f"{reason}: worker {victim.name} (pid {victim.process.pid}, its process group)")
            fresh = children.start(f"worker-{len(workers)}", worker_argv)
            workers.append(fresh)
        harness.wait_for(lambda: " ready." in fresh.log(), 60, "the restarted worker", [fresh])
        stats.event(started, f"worker {fresh.name} ready")

    def faults() -> None:
        redis_at = started + args.minutes * 30 + args.kill_every / 4  # half-way, away from a worker kill
        next_kill = started + args.kill_every
        redis_done = False
        # Until every kill due within the load (the last one may land as the load ends: the drain then
        # starts on a fresh worker) and the Redis restart are done.
        while not stop.is_set() and (next_kill <= load_until or not redis_done):
            now = time.monotonic()
            if now >= next_kill:
                replace_worker("SIGKILL")
                next_kill += args.kill_every
            elif not redis_done and now >= redis_at:
                redis_server.kill()
                stats.event(started, "Redis killed (every queued task in it is gone)")
                time.sleep(3)
                redis_server.start()
                stats.event(started, "Redis started again, empty")
                redis_done = True
            time.sleep(0.2)

    def supervisor() -> None:
        """What a restart policy (systemd ``Restart=always``, compose ``restart: unless-stopped``) does: a
        worker that exits, or stops consuming after an unrecoverable error, is started again. Each such
        crash (not one of the fault script's kills) is counted and reported."""
        while not stop.wait(1.0):
            current = workers[-1]
            exited = current.process.poll() is not None
            if exited or "Unrecoverable error" in _log_tail(current.log_path):
                with stats.lock:
                    stats.worker_crashes += 1
                status = f"exited with status {current.process.returncode}" if exited else "unrecoverable error"
                replace_worker(f"supervisor restart ({status})")

    print(
        f"load for {args.minutes:g} min: {args.import_rate:g} imports/s of {args.orders_per_import} orders, "
        f"{args.checkout_rate:g} checkouts/s; worker SIGKILL every {args.kill_every:g} s; Redis restart once"
    )
    load_seconds, drained = load.run(
        server=web,
        alongside=[threading.Thread(target=faults, daemon=True)],
        background=[threading.Thread(target=beat, daemon=True), threading.Thread(target=supervisor, daemon=True)],
    )
    return report(args, run_id, stats, receiver, load_seconds, drained)


def _run_state(run_id: str) -> dict[str, Any]:
    from exports.models import ExportItem, ExportStatus
    from imports.models import ImportItem, ImportStatus

    imports = _count_by(ImportItem.objects.filter(identifier__startswith=f"soak-{run_id}-"), "status")
    exports = _count_by(ExportItem.objects.filter(queue__name__startswith=f"soak-{run_id}-"), "status")
    return {
        "imports": imports,
        "exports": exports,
        "pending": imports.get(ImportStatus.PENDING, 0) + exports.get(ExportStatus.PENDING, 0),
    }


def drain(args: argparse.Namespace, run_id: str, stats: Stats, started: float) -> bool:
    """Wait (the beat thread keeps sweeping) until nothing of the run is pending, or the drain timeout."""
    deadline = time.monotonic() + args.drain_timeout
    last_print = 0.0
    while True:
        state = _run_state(run_id)
        if state["pending"] == 0:
            stats.event(started, f"drained: imports {state['imports']}, exports {state['exports']}")
            time.sleep(1)  # the receiver's last requests
            return True
        if time.monotonic() > deadline:
            stats.event(started, f"drain timed out: imports {state['imports']}, exports {state['exports']}")
            return False
        if time.monotonic() - last_print > 10:
            stats.event(started, f"draining: imports {state['imports']}, exports {state['exports']}")
            last_print = time.monotonic()
        time.sleep(1)


def report(
    args: argparse.Namespace, run_id: str, stats: Stats, receiver: Any, load_seconds: float, drained: bool
) -> int:

    from exports.models import ExportItem, ExportStatus
    from ledger.models import Checkout
    from orders.models import IncomingOrder

    percentile = harness.percentile

    # Imports: every accepted order materialised exactly once; checkouts: every accepted checkout stored once.
    orders_stored, orders_missing, orders_duplicated = _exactly_once(
        IncomingOrder.objects.filter(order_identifier__startswith=f"soak-{run_id}-"), "order_identifier", stats.imported
    )
    checkouts_stored, checkouts_missing, checkouts_duplicated = _exactly_once(
        Checkout.objects.filter(identifier__startswith=f"soak-{run_id}-"), "identifier", stats.checkouts
    )

    # Exports: receipts by webhook-id (the delivery id).
    with receiver.lock:
        received = list(receiver.received)
    receipts: Counter[str] = Counter()
    first_receipt: dict[str, float] = {}
    for got in received:
        delivery_id = {k.lower(): v for k, v in got.headers.items()}.get("webhook-id", "")
        receipts[delivery_id] += 1
        first_receipt.setdefault(delivery_id, got.at)
    items = list(
        ExportItem.objects.filter(queue__name__startswith=f"soak-{run_id}-").values_list(
            "entity_type", "status", "delivery__delivery_id", "created_at"
        )
    )
    per_type: dict[str, Counter[str]] = {}
    export_lost = 0
    latencies: list[float] = []
    # Commit -> receipt by the window of the run its item was committed in: the faults' cost, where it falls.
    windows: dict[int, list[float]] = {}
    started = min((created_at.timestamp() for *_, created_at in items), default=0.0)
    for entity_type, status, delivery_id, created_at in items:
        counts = per_type.setdefault(entity_type, Counter())
        counts["items"] += 1
        if status == ExportStatus.SUCCESS and delivery_id in receipts:
            counts["delivered"] += 1
            latencies.append(first_receipt[delivery_id] - created_at.timestamp())
            window = int((created_at.timestamp() - started) // WINDOW_SECONDS)
            windows.setdefault(window, []).append(latencies[-1])
        elif status == ExportStatus.FAILURE:
            counts["logged failed"] += 1
        else:  # pending after the drain, or "success" the receiver never saw
            counts["lost"] += 1
            export_lost += 1
    duplicate_receipts = sum(n - 1 for n in receipts.values() if n > 1)
    duplicated_deliveries = sum(1 for n in receipts.values() if n > 1)

    loss = len(orders_missing) + len(checkouts_missing) + export_lost + len(stats.given_up)
    doubled = len(orders_duplicated) + len(checkouts_duplicated)

    def ms(values: list[float], q: float) -> str:
        return f"{percentile(values, q) * 1000:.0f}" if values else "-"

    width = 44
    print()
    print(f"soak {run_id}: {load_seconds:.0f} s of load, drained: {'yes' if drained else 'NO'}")
    print("-" * 78)
    for line in stats.events:
        if "SIGKILL" in line or "Redis" in line or "supervisor" in line:
            print(f"fault   {line}")
    print("-" * 78)
    print(f"{'what':<{width}}{'count':>10}")
    rows: list[tuple[str, int]] = [
        ("import requests accepted", len(stats.import_latencies)),
        ("orders accepted", len(stats.imported)),
        ("orders materialised (distinct)", orders_stored),
        ("orders materialised more than once", len(orders_duplicated)),
        ("orders missing", len(orders_missing)),
        ("checkouts accepted", len(stats.checkouts)),
        ("checkouts stored (distinct)", checkouts_stored),
        ("checkouts stored more than once", len(checkouts_duplicated)),
        ("checkouts missing", len(checkouts_missing)),
        ("requests sent again (error or 5xx)", stats.retried_requests),
        ("requests given up", len(stats.given_up)),
        ("worker crashes by themselves (restarted)", stats.worker_crashes),
    ]
    for entity_type in sorted(per_type):
        counts = per_type[entity_type]
        rows += [
            (f"export {entity_type}: items", counts["items"]),
            (f"export {entity_type}: delivered", counts["delivered"]),
            (f"export {entity_type}: logged failed", counts["logged failed"]),
            (f"export {entity_type}: lost", counts["lost"]),
        ]
    rows += [
        ("web hook requests received", len(received)),
        ("deliveries received more than once", duplicated_deliveries),
        ("duplicate receipts (same webhook-id; allowed)", duplicate_receipts),
    ]
    for name, value in rows:
        print(f"{name:<{width}}{value:>10}")
    print("-" * 78)
    print(f"{'latency (ms)':<{width}}{'p50':>10}{'p99':>10}{'n':>10}")
    for name, values in (
        ("import request", stats.import_latencies),
        ("checkout request", stats.checkout_latencies),
        ("export commit -> receipt", latencies),
    ):
        print(f"{name:<{width}}{ms(values, 0.5):>10}{ms(values, 0.99):>10}{len(values):>10}")
    for window in sorted(windows):
        name = f"  committed at {window * WINDOW_SECONDS:.0f}-{(window + 1) * WINDOW_SECONDS:.0f} s"
        values = windows[window]
        print(f"{name:<{width}}{ms(values, 0.5):>10}{ms(values, 0.99):>10}{len(values):>10}")
    print("-" * 78)
    print(f"LOSS: {loss}   (exactly-once violations: {doubled})")
    for problem in stats.given_up[:10]:
        print(f"  given up: {problem}")
    for identifier in (orders_missing + checkouts_missing)[:10]:
        print(f"  missing: {identifier}")
    return 0 if loss == 0 and doubled == 0 and drained else 1


def _count_by(rows: Any, field: str) -> dict[Any, int]:
    from django.db.models import Count

    return dict(rows.values_list(field).annotate(n=Count("id")).order_by())


def _exactly_once(rows: Any, field: str, accepted: list[str]) -> tuple[int, list[str], list[str]]:
    """How many distinct identifiers the rows have, the accepted ones no row has (missing), and those of more
    than one row (duplicated)."""
    counts = _count_by(rows, field)
    return len(counts), [i for i in accepted if counts.get(i, 0) == 0], [i for i, n in counts.items() if n > 1]


def _log_tail(path: Path, size: int = 64 * 1024) -> str:
    """The end of a log file (a worker's log grows by every task; only its latest lines matter)."""
    try:
        with path.open("rb") as log:
            log.seek(0, os.SEEK_END)
            log.seek(max(0, log.tell() - size))
            return log.read().decode(errors="replace")
    except FileNotFoundError:
        return ""


if __name__ == "__main__":
    sys.exit(main())
