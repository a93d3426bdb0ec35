"""Two stacks on one database and one broker, as operators outgrow one machine.

    .venv/bin/python bench/scaleout.py [--check] [--saturate 1500] [--receiver-ms 200] [--queue-concurrency 64]
                                       [--seconds 60] [--rate 10] [--failover-only | --throughput-only]

A "stack" is what one machine runs: gunicorn and a Celery worker (``WORKER_CONCURRENCY`` processes, default 2),
with ``MACHINE_NAME`` ``stack-1`` or ``stack-2`` (``core.liveness``: the two are told apart on one host). Both use
``DATABASE_URL`` (default PostgreSQL ``retail_scaleout``, created and migrated) and a private ``redis-server`` on a
free port of 127.0.0.1. A web hook receiver in this process stands for the integrator.

1. **Throughput of a saturated queue.** ``--saturate`` outgoing orders are committed while no worker runs (one
   real-time web hook queue; the receiver answers after ``--receiver-ms``); then the worker of one stack starts and
   the time from its first receipt to its last gives deliveries per second. The same again with the workers of both
   stacks. Printed: both rates and their ratio. The defaults are a partner 200 ms away whose queue allows 64 sends
   at once: what another machine adds is worker processes (the account's share grows with them), and on this one
   host the two stacks share its cores. With sends that take 20 ms the run is bound by the CPU both stacks share
   (measured 73 and 58 deliveries/s), and with the default bound of 16 sends at once by the queue's bound, 80/s at
   200 ms, whatever the number of machines (56 and 52); docs/benchmarks.md.
2. **Failover.** Both stacks serve; beat runs on stack 1 and, started by hand as an operator would, on stack 2 too.
   For ``--seconds``, checkouts (one sale each, exported in real time by a queue whose receiver answers after
   ``--slow-ms``) and order imports are posted alternately to both gunicorns at ``--rate`` each. Half-way, once the
   worker of stack 2 holds a delivery's lease, it gets SIGKILL (its whole process group) and is started again 30 s
   later. At the end an hourly cron queue's window is started on both stacks at the same instant
   (``manage.py run_cron_exports``). Printed: the time from the kill to the receipt of every delivery the dead worker
   held (the takeover), the periodic tasks both beats sent, and the checks below.

With ``--check`` (``.ci/run``) it exits 1 unless: every imported order materialised once, every checkout stored
once, every export item delivered, no delivery received twice except those the dead worker held (the documented
re-send under the same delivery id), the takeover under 30 s, one cron delivery for the window, the export sweep
sent no more often than one beat sends it, and two stacks delivered more per second than one (unless
``--failover-only``, which CI uses: throughput figures need a quiet machine).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness, soak
from bench import imports as bench_imports
from tests.support.private_redis import PrivateRedis

DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/retail_scaleout"
TAKEOVER_LIMIT_SECONDS = 30.0
RESTART_AFTER_SECONDS = 30.0
SWEEP_TASK = "exports.tasks.sweep_exports"


class Stack:
    """One machine's processes: gunicorn and a Celery worker (and, when asked, a beat), ``MACHINE_NAME`` its own."""

    def __init__(self, number: int, log_dir: Path, env: dict[str, str], queue: str) -> None:
        self.name = f"stack-{number}"
        self.children = harness.Children(log_dir=log_dir, env={**env, "MACHINE_NAME": self.name})
        self.queue = queue
        self.port = harness.free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.worker: harness.Child | None = None
        self.beat: harness.Child | None = None
        self.starts = 0

    def start_web(self) -> harness.Child:
        web = self.children.start_gunicorn(self.port, os.environ.get("WEB_CONCURRENCY", "2"))
        web.name = f"{self.name}-web"
        return web

    def start_worker(self) -> harness.Child:
        self.starts += 1
        argv = harness.worker_argv(self.queue)
        argv[argv.index("--hostname") + 1] = f"{self.name}@%h"  # one Celery node name per stack
        self.worker = self.children.start(f"{self.name}-worker-{self.starts}", argv)
        harness.wait_for(lambda: " ready." in self.worker_log(), 60, f"the worker of {self.name}", [self.worker])
        return self.worker

    def worker_log(self) -> str:
        return self.worker.log() if self.worker is not None else ""

    def start_beat(self) -> harness.Child:
        argv = [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel=INFO"]
        self.beat = self.children.start(f"{self.name}-beat", argv)
        return self.beat

    def kill_worker(self) -> None:
        assert self.worker is not None
        os.killpg(self.worker.process.pid, signal.SIGKILL)
        self.worker.process.wait()

    def stop_worker(self) -> None:
        if self.worker is not None and self.worker.process.poll() is None:
            self.worker.process.terminate()
            self.worker.process.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless every check holds (CI)")
    parser.add_argument("--saturate", type=int, default=1500, help="entities of the throughput phase, per round")
    parser.add_argument("--receiver-ms", type=float, default=200.0, help="the throughput receiver's answer time")
    parser.add_argument("--seconds", type=float, default=60.0, help="of load in the failover phase")
    parser.add_argument("--rate", type=float, default=10.0, help="checkouts and imports per second, each")
    parser.add_argument("--slow-ms", type=float, default=300.0, help="the failover receiver's answer time")
    parser.add_argument("--drain-timeout", type=float, default=180.0)
    parser.add_argument(
        "--failover-only", action="store_true", help="skip the throughput phase (CI: its figures need a quiet machine)"
    )
    parser.add_argument("--throughput-only", action="store_true", help="skip the failover phase")
    parser.add_argument(
        "--queue-concurrency", type=int, default=64, help="the throughput queue's own bound of sends at once"
    )
    args = parser.parse_args()

    run_id = harness.new_run_id()
    queue = f"scaleout-{run_id}"
    log_dir = Path(tempfile.mkdtemp(prefix=f"bench-scaleout-{run_id}-"))
    redis_server = PrivateRedis(log_dir)
    # LOG_LEVEL INFO: the beats' "Sending due task" lines are counted.
    env, keys = soak.start_private_run("scaleout", run_id, redis_server, DEFAULT_DATABASE_URL, LOG_LEVEL="INFO")
    from accounts import services as account_services
    from accounts.models import Account
    from exports.models import ExportQueue
    from tests.support.receivers import running_receiver

    account = Account.objects.get(identifier=harness.ACCOUNT)
    shop = account_services.ensure_demo_structure(account=account)
    ExportQueue.objects.filter(account=account, name__startswith="scaleout-").delete()  # earlier runs' receivers
    stacks = [Stack(1, log_dir, env, queue), Stack(2, log_dir, env, queue)]

    def body() -> int:
        redis_server.start()
        one = two = 0.0
        if not args.failover_only:
            with running_receiver() as receiver:
                receiver.delay = args.receiver_ms / 1000
                one, two = throughput(args, run_id, account, shop, stacks, receiver)
        failures: list[str] = []
        if not args.throughput_only:
            with running_receiver() as receiver:
                receiver.delay = args.slow_ms / 1000
                failures = failover(args, run_id, account, stacks, receiver, keys)
        if not args.failover_only:
            print(f"saturated queue: {one:.1f} deliveries/s with one stack, {two:.1f} with two ({two / one:.2f}x)")
            if two <= one:
                failures.append(f"two stacks delivered {two:.1f}/s, not more than one stack's {one:.1f}/s")
        for failure in failures:
            print(f"CHECK FAILED: {failure}")
        print(f"logs in {log_dir}")
        return 1 if failures and args.check else 0

    def cleanup() -> None:
        for stack in stacks:
            stack.children.stop_all()
        redis_server.kill()
        ExportQueue.objects.filter(account=account, name__startswith=f"scaleout-{run_id}").delete()

    return harness.supervise(body, cleanup)


# --- 1. Throughput -----------------------------------------------------------------------------------------


def throughput(
    args: argparse.Namespace, run_id: str, account: Any, shop: Any, stacks: list[Stack], receiver: Any
) -> tuple[float, float]:
    """Deliveries per second of a saturated queue with the workers of one stack, then of both."""
    from django.db import transaction

    from exports import services as export_services
    from exports.models import ExportQueue
    from orders import services as order_services

    rates: list[float] = []
    for round_number, working in ((1, stacks[:1]), (2, stacks)):
        name = f"scaleout-{run_id}-throughput-{round_number}"
        queue, _ = export_services.create_queue(
            account=account,
            name=name,
            entity_type="outgoing_orders",
            delivery={"type": "webhook", "url": receiver.url},
            concurrency=args.queue_concurrency,
        )
        for n in range(args.saturate):
            with transaction.atomic():
                order_services.create_outgoing_order(
                    account=account,
                    stock_location=shop,
                    order={"order_identifier": f"{name}-{n}", "basket": {"line_items": [], "total": n}},
                )
        seen = len(receiver.received)
        for stack in working:
            stack.start_worker()

        def received(seen: int = seen) -> list[float]:
            with receiver.lock:
                return [got.at for got in receiver.received[seen:]]

        alive = [stack.worker for stack in working if stack.worker is not None]
        harness.wait_for(lambda: len(received()) >= args.saturate, 600, f"{args.saturate} deliveries", alive)
        times = sorted(received())[: args.saturate]
        rate = (len(times) - 1) / max(times[-1] - times[0], 1e-6)
        rates.append(rate)
        print(f"round {round_number}: {len(working)} stack(s), {args.saturate} deliveries at {rate:.1f}/s")
        for stack in working:
            stack.stop_worker()
        ExportQueue.objects.filter(pk=queue.pk).update(enabled=False)
    return rates[0], rates[1]


# --- 2. Failover ---------------------------------------------------------------------------------------------


def failover(
    args: argparse.Namespace, run_id: str, account: Any, stacks: list[Stack], receiver: Any, keys: dict[str, str]
) -> list[str]:
    from exports import services as export_services

    prefix = f"scaleout-{run_id}"
    export_services.create_queue(
        account=account, name=f"{prefix}-sales", entity_type="sales", delivery={"type": "webhook", "url": receiver.url}
    )
    cron_queue = soak.create_hourly_sales_queue(account=account, name=f"{prefix}-hourly", url=receiver.url)
    for stack in stacks:
        web = stack.start_web()
        harness.wait_for(lambda s=stack: harness.answers(f"{s.base}/health/live"), 60, f"{stack.name}'s web", [web])
        stack.start_worker()
    stacks[0].start_beat()
    time.sleep(2)
    stacks[1].start_beat()  # the second beat, started by hand on the second machine
    beats_started = time.monotonic()
    print(
        f"failover: two stacks, two beats; {args.rate:g} checkouts/s and {args.rate:g} imports/s for {args.seconds:g} s"
    )

    accepted: dict[str, list[str]] = {"orders": [], "checkouts": []}
    problems: list[str] = []
    lock = threading.Lock()
    stop = threading.Event()
    started = time.monotonic()
    until = started + args.seconds
    credentials = {"account": harness.ACCOUNT, "integration": harness.INTEGRATION}

    def post(url: str, payload: dict[str, Any], kind: str, identifiers: list[str]) -> None:
        body = json.dumps(payload, default=soak._decimal_as_number).encode()
        for _attempt in range(10):
            try:
                response = requests.post(url, data=body, headers={"Content-Type": "application/json"}, timeout=30)
            except requests.RequestException:
                time.sleep(0.5)
                continue
            if response.status_code < 300:
                with lock:
                    accepted[kind].extend(identifiers)
                return
            if response.status_code < 500:
                break
            time.sleep(0.5)
        with lock:
            problems.append(f"a {kind} request was not accepted")

    def checkout(n: int) -> None:
        stack = stacks[n % 2]
        identifier = f"{prefix}-c{n:05d}"
        url = f"{stack.base}/api/v1/pos/checkouts?{urlencode({**credentials, 'apikey': keys['pos']})}"
        post(url, soak.checkout_body(identifier, n), "checkouts", [identifier])

    def one_import(n: int) -> None:
        stack = stacks[n % 2]
        identifier = f"{prefix}-o{n:05d}"
        query = urlencode({**credentials, "stock_location": harness.STOCK_LOCATION, "apikey": keys["imports"]})
        order = bench_imports.make_order(random.Random(n), identifier)
        post(f"{stack.base}/imports/incoming_orders?{query}", {"orders": [order]}, "orders", [identifier])

    threads = [
        threading.Thread(target=harness.at_fixed_rate, args=(args.rate, until, stop, work), daemon=True)
        for work in (checkout, one_import)
    ]
    for thread in threads:
        thread.start()

    # Half-way: wait until the worker of stack 2 holds a lease, then kill it.
    killed_at, held = kill_mid_delivery(stacks[1], started + args.seconds / 2, until + 30)
    restarted = threading.Thread(target=restart_later, args=(stacks[1], killed_at), daemon=True)
    restarted.start()
    for thread in threads:
        thread.join()
    restarted.join()

    cron_deliveries = start_cron_on_both(stacks, cron_queue)
    drained = drain(prefix, args.drain_timeout)
    beats_seconds = time.monotonic() - beats_started
    failures = report(prefix, accepted, receiver, killed_at, held, cron_deliveries, drained, stacks, beats_seconds)
    return problems + failures


def kill_mid_delivery(stack: Stack, not_before: float, give_up: float) -> tuple[float, set[str]]:
    """SIGKILL the stack's worker once it holds a delivery's lease (after ``not_before``); the delivery ids it held."""
    from django.utils import timezone

    from exports.models import ExportDelivery, ExportStatus

    while time.monotonic() < not_before:
        time.sleep(0.2)
    while True:
        held = set(
            ExportDelivery.objects.filter(
                status=ExportStatus.PENDING, lease_until__gt=timezone.now(), lease_owner__startswith=f"{stack.name}:"
            ).values_list("delivery_id", flat=True)
        )
        if held or time.monotonic() > give_up:
            break
        time.sleep(0.05)
    stack.kill_worker()
    killed_at = time.time()
    print(f"SIGKILL: the worker of {stack.name}, holding {len(held)} lease(s)")
    return killed_at, held


def restart_later(stack: Stack, killed_at: float) -> None:
    time.sleep(max(0.0, killed_at + RESTART_AFTER_SECONDS - time.time()))
    stack.start_worker()
    print(f"the worker of {stack.name} started again")


def start_cron_on_both(stacks: list[Stack], cron_queue: Any) -> dict[str, int]:
    """``manage.py run_cron_exports`` on both stacks at the same instant; the cron queue's deliveries by window then
    (the beats' own cron runs may have started a window already: one delivery per window either way)."""
    from django.db.models import Count

    from exports.models import ExportDelivery

    commands = [
        subprocess.Popen(
            [sys.executable, "manage.py", "run_cron_exports"],
            cwd=harness.ROOT,
            env=stack.children.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        for stack in stacks
    ]
    for command in commands:
        _, error = command.communicate(timeout=120)
        if command.returncode != 0:
            print(f"run_cron_exports failed: {error.decode(errors='replace')[-2000:]}")
    windows = ExportDelivery.objects.filter(queue=cron_queue).values_list("window").annotate(n=Count("id"))
    return dict(windows.order_by())


def drain(prefix: str, timeout: float) -> bool:
    from exports.models import ExportItem, ExportStatus
    from imports.models import ImportItem, ImportStatus

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pending = (
            ImportItem.objects.filter(identifier__startswith=prefix, status=ImportStatus.PENDING).count()
            # The real-time queue's items (the hourly queue's wait for their window by design).
            + ExportItem.objects.filter(queue__name=f"{prefix}-sales", status=ExportStatus.PENDING).count()
        )
        if not pending:
            time.sleep(1)  # the receiver's last requests
            return True
        time.sleep(1)
    return False


def report(
    prefix: str,
    accepted: dict[str, list[str]],
    receiver: Any,
    killed_at: float,
    held: set[str],
    cron_deliveries: dict[str, int],
    drained: bool,
    stacks: list[Stack],
    beats_seconds: float,
) -> list[str]:
    from django.conf import settings

    from exports.models import ExportItem, ExportStatus
    from ledger.models import Checkout
    from orders.models import IncomingOrder

    failures: list[str] = []
    orders = Counter(
        IncomingOrder.objects.filter(order_identifier__startswith=prefix).values_list("order_identifier", flat=True)
    )
    checkouts = Counter(Checkout.objects.filter(identifier__startswith=prefix).values_list("identifier", flat=True))
    for kind, stored in (("orders", orders), ("checkouts", checkouts)):
        missing = [i for i in accepted[kind] if stored[i] == 0]
        doubled = [i for i, n in stored.items() if n > 1]
        print(
            f"{kind}: {len(accepted[kind])} accepted, {len(stored)} stored, {len(missing)} missing, "
            f"{len(doubled)} twice"
        )
        if missing or doubled:
            failures.append(f"{kind}: {len(missing)} missing, {len(doubled)} stored twice")

    with receiver.lock:
        received = list(receiver.received)
    receipts: Counter[str] = Counter()
    at: dict[str, list[float]] = {}
    for got in received:
        delivery_id = {k.lower(): v for k, v in got.headers.items()}.get("webhook-id", "")
        receipts[delivery_id] += 1
        at.setdefault(delivery_id, []).append(got.at)
    items = list(
        ExportItem.objects.filter(queue__name=f"{prefix}-sales").values_list("status", "delivery__delivery_id")
    )
    lost = sum(1 for status, delivery_id in items if status != ExportStatus.SUCCESS or delivery_id not in receipts)
    twice = {delivery_id for delivery_id, n in receipts.items() if n > 1}
    print(f"sales exported: {len(items)} items, {lost} not delivered, {len(twice)} delivery ids received twice")
    if lost or not drained:
        failures.append(f"{lost} export item(s) not delivered (drained: {drained})")
    if twice - held:
        failures.append(f"{len(twice - held)} delivery id(s) received twice that the dead worker did not hold")

    if not held:
        failures.append("the killed worker held no lease: nothing to take over was measured")
    else:
        # The first receipt after the kill of each delivery it held (a send it finished in the moment between the
        # look at its leases and the kill counts as taken over at once).
        delivered = {d for status, d in items if status == ExportStatus.SUCCESS}
        taken_over = [
            min((t for t in at.get(d, []) if t >= killed_at), default=killed_at if d in delivered else float("inf"))
            - killed_at
            for d in held
        ]
        worst = max(taken_over)
        print(f"takeover: the {len(held)} delivery(ies) the dead worker held received {worst:.1f} s after the kill")
        if worst >= TAKEOVER_LIMIT_SECONDS:
            failures.append(f"takeover took {worst:.1f} s (limit {TAKEOVER_LIMIT_SECONDS:g} s)")
    print(f"cron: deliveries by window, started on both stacks at once: {cron_deliveries}")
    if not cron_deliveries or any(n != 1 for n in cron_deliveries.values()):
        failures.append(f"cron deliveries by window: {cron_deliveries} (one per window expected)")

    sent = sum(stack.beat.log().count(f"({SWEEP_TASK})") for stack in stacks if stack.beat is not None)
    interval = float(settings.CELERY_BEAT_SCHEDULE["exports-sweep"]["schedule"])
    once = beats_seconds / interval
    print(f"beats: the export sweep sent {sent} times in {beats_seconds:.0f} s (one beat: about {once:.0f})")
    if sent > once * 1.3 + 2:
        failures.append(f"the export sweep was sent {sent} times in {beats_seconds:.0f} s: more than one beat's")
    return failures


if __name__ == "__main__":
    sys.exit(main())
