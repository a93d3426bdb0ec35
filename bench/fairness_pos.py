"""POS fairness: basket pricing p99 for account B while account A's customer-discount integrator hangs,
beside the same with A's integrator healthy, in one run against a real gunicorn.

    .venv/bin/python bench/fairness_pos.py [--seconds 5] [--rounds 6] [--a-clients 10] [--b-clients 4]

gunicorn runs with the project's ``config/gunicorn.conf.py`` as deployed (``WEB_CONCURRENCY`` unset: 2 x CPUs + 1
workers; worker class, threads and preload as configured; ``GUNICORN_WORKER_CLASS`` / ``GUNICORN_THREADS`` or
``--worker-class`` / ``--threads`` compare others) on a database of its own (SQLite, the embedded default, unless
``DATABASE_URL``). Two reference integrators run on 127.0.0.1: B's always answers; A's answers in the healthy
phases and, in the hanging phases, accepts every request and never answers.

The tills: ``--a-clients`` of A, each pricing a basket for a new customer every ``--a-interval`` seconds (so
each of A's requests asks A's integrator: nothing is remembered; the default, 2 s, is the POS budget, so A sends
as many requests in both conditions, and while it hangs every A till holds a request open all the time), and
``--b-clients`` of B, each pricing the basket changes of a sale (``--changes`` per customer: the first asks B's
integrator, the rest are remembered) with ``--b-interval`` seconds between them. The tills of a tenant start
spread over one interval. Each round runs a healthy phase, then a hanging one, ``--seconds`` each.

It prints B's p50/p99 per condition, A's, and the ratio p99(B, A hanging) / p99(B, A healthy) (target: at most
1.5). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import itertools
import runpy
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness
from bench import pos_setup as setup

TARGET_RATIO = 1.5


@dataclass
class Samples:
    latencies: list[float] = field(default_factory=list)  # ms
    warned: int = 0
    failed: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, ms: float, response: requests.Response | None) -> None:
        with self.lock:
            self.latencies.append(ms)
            if response is None or response.status_code != 200:
                self.failed += 1
            elif "warnings" in response.json():
                self.warned += 1


def till(
    base: str,
    tenant: str,
    key: str,
    customers: itertools.count,
    changes: int,
    interval: float,
    offset: float,
    stop: threading.Event,
) -> Samples:
    """One client: a sale of ``changes`` basket changes per customer, ``interval`` seconds apart at the least,
    starting after ``offset`` seconds (the tills of a tenant do not ask in step)."""
    samples = Samples()
    stop.wait(offset)
    with requests.Session() as session:
        while not stop.is_set():
            customer = f"{tenant}-{next(customers)}"
            for _ in range(changes):
                if stop.is_set():
                    break
                started = time.perf_counter()
                try:
                    response: requests.Response | None = setup.price(session, base, tenant, key, customer)
                except requests.RequestException:
                    response = None
                took = time.perf_counter() - started
                samples.add(took * 1000, response)
                stop.wait(max(0.0, interval - took))
    return samples


def phase(args: argparse.Namespace, base: str, keys: dict[str, str], customers: itertools.count) -> dict[str, Samples]:
    stop = threading.Event()
    results: dict[str, list[Samples]] = {"a": [], "b": []}
    threads = []
    for tenant, clients, changes, interval in (
        ("a", args.a_clients, 1, args.a_interval),
        ("b", args.b_clients, args.changes, args.b_interval),
    ):
        for n in range(clients):

            def run(
                tenant: str = tenant,
                changes: int = changes,
                interval: float = interval,
                offset: float = interval * n / clients,
            ) -> None:
                results[tenant].append(till(base, tenant, keys[tenant], customers, changes, interval, offset, stop))

            threads.append(threading.Thread(target=run, daemon=True))
    for thread in threads:
        thread.start()
    time.sleep(args.seconds)
    stop.set()
    for thread in threads:
        thread.join()
    merged: dict[str, Samples] = {}
    for tenant, parts in results.items():
        merged[tenant] = Samples(
            latencies=[ms for part in parts for ms in part.latencies],
            warned=sum(part.warned for part in parts),
            failed=sum(part.failed for part in parts),
        )
    return merged


def describe(samples: Samples) -> str:
    values = samples.latencies
    p50, p99 = harness.percentile(values, 0.5), harness.percentile(values, 0.99)
    return (
        f"n={len(values):5d}  p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  warned {samples.warned:4d}  failed {samples.failed}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    harness.phase_arguments(
        parser,
        seconds=5.0,
        rounds=6,
        phases="healthy + hanging phases, alternating: short phases spread the machine's other load evenly",
    )
    parser.add_argument("--a-clients", type=int, default=10)
    parser.add_argument("--b-clients", type=int, default=4)
    parser.add_argument(
        "--a-interval",
        type=float,
        default=2.0,
        help="seconds between an A till's baskets (default: the POS budget, so A sends as many requests hanging as "
        "healthy)",
    )
    parser.add_argument("--b-interval", type=float, default=0.05, help="seconds between a B till's changes")
    parser.add_argument("--changes", type=int, default=5, help="basket changes per B customer")
    parser.add_argument("--worker-class", default="", help="GUNICORN_WORKER_CLASS for this run")
    parser.add_argument("--threads", default="", help="GUNICORN_THREADS for this run")
    parser.add_argument("--root", type=Path, default=harness.ROOT, help="the checkout whose code gunicorn runs")
    args = parser.parse_args()

    from tests.support.reference_server import running

    root = args.root.resolve()
    extra = {"GUNICORN_WORKER_CLASS": args.worker_class, "GUNICORN_THREADS": args.threads}
    extra = {name: value for name, value in extra.items() if value}
    folder = Path(tempfile.mkdtemp(prefix="bench-fairness-pos-"))
    env = setup.environment(folder)
    env.pop("WEB_CONCURRENCY", None)  # the configuration's own default, as deployed
    conf = runpy.run_path(str(root / "config" / "gunicorn.conf.py"))
    workers = int(conf["workers"])
    children = harness.Children(log_dir=folder, env=env)
    healthy: dict[str, Samples] = {"a": Samples(), "b": Samples()}
    hanging: dict[str, Samples] = {"a": Samples(), "b": Samples()}
    with running() as reference_a, running() as reference_b:
        keys = setup.prepare(env, {"a": reference_a.url, "b": reference_b.url})
        port = harness.free_port()
        base = f"http://127.0.0.1:{port}"
        try:
            web = setup.start_gunicorn(children, env, folder, root, port, extra)
            setup.wait_ready(folder, workers, web)
            customers = itertools.count()
            warm = argparse.Namespace(**{**vars(args), "seconds": 2.0})
            phase(warm, base, keys, customers)  # every worker has served: connections, indexes
            for _ in range(args.rounds):
                for condition, into in (("healthy", healthy), ("hanging", hanging)):
                    if condition == "hanging":
                        reference_a.always["*"] = ("hang", None)
                    else:
                        reference_a.always.pop("*", None)
                    for tenant, samples in phase(args, base, keys, customers).items():
                        into[tenant].latencies += samples.latencies
                        into[tenant].warned += samples.warned
                        into[tenant].failed += samples.failed
                    web.check_alive()
        finally:
            children.stop_all()

    worker_class = extra.get("GUNICORN_WORKER_CLASS", conf.get("worker_class", "sync"))
    threads = extra.get("GUNICORN_THREADS", conf.get("threads", 1))
    print(
        f"gunicorn {workers} workers, {worker_class}, {threads} threads, preload {conf.get('preload_app', False)}; "
        f"{args.a_clients} A tills, {args.b_clients} B tills; {args.rounds} x {args.seconds:g} s per condition"
    )
    for condition, results in (("A healthy", healthy), ("A hanging", hanging)):
        print(f"  {condition:10s} B: {describe(results['b'])}")
        print(f"  {'':10s} A: {describe(results['a'])}")
    p99_healthy = harness.percentile(healthy["b"].latencies, 0.99)
    p99_hanging = harness.percentile(hanging["b"].latencies, 0.99)
    ratio = p99_hanging / p99_healthy
    verdict = "OK" if ratio <= TARGET_RATIO else "ABOVE TARGET"
    print(f"  B p99: {p99_healthy:.1f} ms with A healthy, {p99_hanging:.1f} ms with A hanging")
    print(f"  ratio {ratio:.2f} (target <= {TARGET_RATIO:g}): {verdict}")
    return 0 if ratio <= TARGET_RATIO else 1


if __name__ == "__main__":
    sys.exit(main())
