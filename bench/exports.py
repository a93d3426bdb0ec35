"""Real-time export latency: entities committed at a fixed rate, delivered by a real worker to a local web hook.

    .venv/bin/python bench/exports.py [--entities 5000] [--rate 100] [--producers 2] [--receiver-delay 0.2]
                                      [--workers 2]
                                      [--queue-concurrency N] [--saturated] [--embedded]
    .venv/bin/python bench/exports.py --cron [--sizes 10000,100000]

``--cron`` runs the cron benchmark instead (``bench/export_csv.py``: a daily CSV of 100,000 sales over FTP
beside a plain csv.writer, time ratio and peak memory).

Starts a Celery worker (``WORKER_CONCURRENCY``, default 2) on a queue of its own against ``DATABASE_URL``
(default PostgreSQL ``retail_bench``) and ``CELERY_BROKER_URL`` (default Redis db 14), and a web hook receiver
on 127.0.0.1 in this process. It then creates ``--entities`` outgoing orders to an external system at
``--rate`` per second, each in its own transaction (the export item is written in the same one), and prints
how long until the receiver has every one, and the p50 / p99 / max latency from commit to receipt.
Target: p99 under 1 s at 100 entities/s on this 2-core machine.

``--producers`` processes commit the entities (default 1; several take every ``--producers``-th one on the
common schedule, as the web's processes would: one alone commits about 80 a second on this machine).
``--receiver-delay`` makes the receiver take that many seconds per answer (a partner 200 ms away);
``--workers`` sets the worker's processes (``WORKER_CONCURRENCY``); ``--queue-concurrency`` the queue's own bound
of deliveries sent at once (default: ``EXPORT_QUEUE_CONCURRENCY``). ``--saturated`` creates every entity first
(as fast as it can, the worker not started) and then measures how many deliveries per second the worker sends
from its start: a saturated queue's throughput. ``--embedded`` runs on the embedded default (SQLite and the
embedded broker in a temporary folder, as ``runall`` starts them) instead of ``DATABASE_URL`` /
``CELERY_BROKER_URL``.
"""

from __future__ import annotations

import argparse
import atexit
import json
import multiprocessing
import os
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import export_csv, harness
from ops.embedded_broker import EmbeddedBroker


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=5000)
    parser.add_argument("--rate", type=float, default=100.0, help="entities created per second")
    parser.add_argument("--timeout", type=float, default=120.0, help="after the last one is created, in seconds")
    parser.add_argument("--cron", action="store_true", help="the cron CSV benchmark (bench/export_csv.py)")
    parser.add_argument("--sizes", default="10000,100000", help="with --cron: numbers of sales")
    parser.add_argument("--receiver-delay", type=float, default=0.0, help="seconds the receiver takes per answer")
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default WORKER_CONCURRENCY)")
    parser.add_argument("--queue-concurrency", type=int, default=None, help="the queue's own concurrency bound")
    parser.add_argument("--saturated", action="store_true", help="create everything first, then time the drain")
    parser.add_argument("--embedded", action="store_true", help="SQLite and the embedded broker, as runall")
    parser.add_argument("--producers", type=int, default=1, help="processes committing the entities (as the web's do)")
    parser.add_argument("--latencies", type=Path, help="write each entity's commit time and latency (TSV) here")
    args = parser.parse_args()
    if args.cron:
        sys.argv = [export_csv.__file__, "--sizes", args.sizes]
        return export_csv.main()

    run_id = harness.new_run_id()
    queue_name = f"bench-exports-{run_id}"
    if args.workers is not None:
        os.environ["WORKER_CONCURRENCY"] = str(args.workers)
    if args.embedded:
        os.environ.pop("DATABASE_URL", None)
        folder = Path(tempfile.mkdtemp(prefix=f"bench-exports-embedded-{run_id}-"))
        embedded = EmbeddedBroker(folder / "broker")
        embedded.start()
        atexit.register(embedded.stop)
        env = harness.local_env(
            folder,
            CELERY_BROKER_URL=embedded.url,
            CELERY_TASK_DEFAULT_QUEUE=queue_name,
            TASK_ROUTING="false",
            PYTHONUNBUFFERED="1",
            OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32",
            LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"),
        )
    else:
        env = harness.worker_env(queue_name, OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32")
    harness.migrate(env)
    harness.create_api_key(env, f"bench {run_id}")
    if env["DATABASE_URL"].startswith("postgres"):
        harness.vacuum_analyze(env["DATABASE_URL"])

    import django

    django.setup()
    from django import db
    from django.conf import settings
    from django.db import transaction

    from accounts import services as account_services
    from accounts.models import Account
    from exports import services as export_services
    from exports.models import ExportQueue
    from orders import services as order_services
    from tests.support.receivers import running_receiver

    account = Account.objects.get(identifier=harness.ACCOUNT)
    shop = account_services.ensure_demo_structure(account=account)
    # Queues of earlier runs point at receivers that are gone: without this every new entity would also be
    # exported (and retried) to them.
    ExportQueue.objects.filter(account=account, name__startswith="bench-exports-").delete()

    log_dir = Path(tempfile.mkdtemp(prefix=f"bench-exports-{run_id}-"))
    children = harness.Children(log_dir=log_dir, env=env)
    committed: dict[str, float] = {}
    received: dict[str, float] = {}
    lock = threading.Lock()
    try:
        with harness.stop_on_sigterm(), running_receiver() as receiver:
            receiver.delay = args.receiver_delay
            export_services.create_queue(
                account=account,
                name=queue_name,
                entity_type="outgoing_orders",
                delivery={"type": "webhook", "url": receiver.url},
                concurrency=args.queue_concurrency,
            )

            def start_worker() -> harness.Child:
                started = children.start_worker(queue_name)
                harness.wait_for(
                    lambda: " ready." in started.log(), harness.READY_TIMEOUT_SECONDS, "the worker", [started]
                )
                return started

            worker = None if args.saturated else start_worker()
            print(
                f"run {run_id}: {args.entities} outgoing orders at {args.rate:g}/s "
                f"{'(all before the worker starts) ' if args.saturated else ''}on "
                f"{'the embedded default' if args.embedded else env['DATABASE_URL'].split(':', 1)[0]}; "
                f"{os.environ.get('WORKER_CONCURRENCY', '2')} worker processes, "
                f"receiver delay {args.receiver_delay:g} s, queue concurrency "
                f"{args.queue_concurrency or settings.EXPORT_QUEUE_CONCURRENCY}, send threads "
                f"{settings.EXPORT_SEND_THREADS}; worker logs in {log_dir}"
            )

            def collect() -> None:  # receipt times by element key, as the receiver saw them
                seen = 0
                while True:
                    with receiver.lock:
                        fresh = receiver.received[seen:]
                    for got in fresh:
                        for key in json.loads(got.body):
                            with lock:
                                received.setdefault(key.split(":")[0], got.at)
                    seen += len(fresh)
                    if stop.is_set() and seen == len(receiver.received):
                        return
                    time.sleep(0.01)

            stop = threading.Event()
            collector = threading.Thread(target=collect, daemon=True)
            collector.start()
            start = time.monotonic()

            def produce(first: int, out: Any) -> None:  # every ``--producers``-th entity, on the common schedule
                mine: dict[str, float] = {}
                for n in range(first, args.entities, args.producers):
                    delay = start + n / args.rate - time.monotonic()
                    if delay > 0:
                        time.sleep(delay)
                    identifier = f"{run_id}-{n}"
                    with transaction.atomic():
                        order_services.create_outgoing_order(
                            account=account,
                            stock_location=shop,
                            order={"order_identifier": identifier, "basket": {"line_items": [], "total": n}},
                        )
                    mine[identifier] = time.time()
                db.connections.close_all()
                out.put(mine)

            # Processes of their own, as the web's are: in this one they would hold the interpreter while the
            # receiver takes its receipt times.
            db.connections.close_all()
            fork = multiprocessing.get_context("fork")
            out = fork.Queue()
            producers = [fork.Process(target=produce, args=(i, out), daemon=True) for i in range(args.producers)]
            for process in producers:
                process.start()
            for _ in producers:
                committed.update(out.get(timeout=args.entities / args.rate * 10 + 60))
            for process in producers:
                process.join()
            created_in = time.monotonic() - start
            if worker is None:
                worker = start_worker()
                drain_start = time.time()
            harness.wait_for(lambda: len(received) >= args.entities, args.timeout, "every delivery", [worker])
            all_in = time.monotonic() - start
            stop.set()
            collector.join(timeout=5)
    except RuntimeError as exc:
        print(f"FAILED: {exc}; received {len(received)} of {args.entities}")
        return 1
    finally:
        children.stop_all()
        ExportQueue.objects.filter(account=account, name=queue_name).delete()

    if args.saturated:
        last = max(received.values())
        print(
            f"created {args.entities} in {created_in:.1f} s ({args.entities / created_in:.0f}/s) before the worker "
            f"started; saturated: {args.entities} deliveries in {last - drain_start:.1f} s from the worker's start: "
            f"{args.entities / (last - drain_start):.1f} deliveries/s"
        )
        return 0
    latencies = sorted(received[k] - committed[k] for k in committed if k in received)
    if args.latencies:
        first = min(committed.values())
        args.latencies.write_text(
            "".join(
                f"{committed[k] - first:.3f}\t{received[k] - committed[k]:.3f}\n" for k in committed if k in received
            )
        )
    span = max(received.values()) - min(committed.values())
    print(f"throughput: {len(received) / span:.1f} deliveries/s from the first commit to the last receipt")
    print(
        f"created {args.entities} in {created_in:.1f} s ({args.entities / created_in:.0f}/s); all received after "
        f"{all_in:.1f} s"
    )
    p50, p99 = (harness.percentile(latencies, q) * 1000 for q in (0.5, 0.99))
    print(f"commit -> receipt latency: p50 {p50:.0f} ms, p99 {p99:.0f} ms, max {latencies[-1] * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
