"""What one account's endpoints on one host cost each other through the circuit breaker, in one run.

    .venv/bin/python bench/breaker_endpoints.py [--endpoints 10] [--rounds 12] [--connect-timeout 1]

Stores an account of its own with ``--endpoints`` web hook queues on one origin, each its own path
(``DATABASE_URL``, default PostgreSQL ``retail_bench``, created when missing and migrated), and sends through
``exports.circuit.deliver`` (the breaker's whole lifecycle: ask, send, classify, record) one delivery per queue per
round, as the queues' workers would, with the default ``BREAKER_FAILURE_THRESHOLD``. Three hosts on 127.0.0.1:

* ``one endpoint answers 503``: a receiver whose first path always answers 503, the others 200. Prints how many
  sends of the healthy endpoints were paused (the requirement: none) and the broken one's requests.
* ``host refuses connections``: nothing listens on the port. Prints the connection attempts and the time until
  every endpoint is paused (failures to connect feed the breaker of the account's connections to the host, which
  every endpoint there asks).
* ``host accepts no connection``: a listener whose accept queue is full, so every connect times out after
  ``--connect-timeout`` seconds (the queues' ``connect_timeout``). The same figures: the worker time a host
  down this way costs the account before all its endpoints are paused.

Beside each it prints what breakers per endpoint alone would have cost (``BREAKER_FAILURE_THRESHOLD`` attempts
per endpoint), the alternative ``docs/breaker.md`` weighs. The account is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness


@contextmanager
def black_hole() -> Iterator[int]:
    """A port on 127.0.0.1 whose accept queue is full: a connection attempt gets no answer (a connect timeout)."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    held = socket.create_connection(("127.0.0.1", port), timeout=2)  # fills the queue; never accepted
    try:
        yield port
    finally:
        held.close()
        listener.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--endpoints", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--connect-timeout", type=float, default=1.0)
    args = parser.parse_args()

    harness.setup_django(
        harness.django_env(OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32", LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    )
    from django.conf import settings
    from django.utils import timezone

    from accounts.models import Account
    from core import breaker
    from exports import circuit
    from exports.models import ExportQueue
    from exports.transforms.base import RenderContext, Rendered
    from tests.support.receivers import closed_port, running_receiver

    threshold = int(settings.BREAKER_FAILURE_THRESHOLD)
    account = Account.objects.create(identifier=f"bench-brk-{uuid.uuid4().hex[:8]}", name="breaker bench")
    rendered = Rendered(content=b'{"id": 1}', content_type="application/json", extension="json")

    def queues(origin: str, **delivery: Any) -> list[ExportQueue]:
        ExportQueue.objects.filter(account=account).delete()
        return [
            ExportQueue.objects.create(
                account=account,
                name=f"endpoint {n}",
                entity_type="sales",
                transform={"type": "identity"},
                delivery={"type": "webhook", "url": f"{origin}/hooks/{n}", **delivery},
            )
            for n in range(args.endpoints)
        ]

    def run(targets: list[ExportQueue]) -> tuple[list[list[str]], float, float]:
        """Each queue's outcomes per round ("sent", "failed", "paused"), the time until every queue was paused
        (or the run's end) and the seconds spent in attempts."""
        outcomes: list[list[str]] = [[] for _ in targets]
        started = time.perf_counter()
        all_open_at = None
        in_attempts = 0.0
        for _ in range(args.rounds):
            for index, queue in enumerate(targets):
                context = RenderContext(
                    queue={"id": queue.pk, "name": queue.name}, account={}, now=timezone.now(), delivery_id="d"
                )
                began = time.perf_counter()
                result = circuit.deliver(rendered, queue=queue, delivery_id=uuid.uuid4().hex, context=context)
                if result.paused_until is None:
                    in_attempts += time.perf_counter() - began
                outcomes[index].append("paused" if result.paused_until else "sent" if result.ok else "failed")
            if all_open_at is None and all(row[-1] == "paused" for row in outcomes):
                all_open_at = time.perf_counter() - started
        return outcomes, all_open_at if all_open_at is not None else time.perf_counter() - started, in_attempts

    def attempts(rows: list[list[str]]) -> int:
        return sum(outcome != "paused" for row in rows for outcome in row)

    n = args.endpoints
    print(f"{n} endpoints of one account on one origin, {args.rounds} rounds, BREAKER_FAILURE_THRESHOLD={threshold}")
    try:
        with running_receiver() as receiver:
            origin = receiver.url.rsplit("/", 1)[0]
            receiver.always["/hooks/0"] = 503
            rows, _, _ = run(queues(origin, read_timeout=5))
            healthy_paused = sum(row.count("paused") for row in rows[1:])
            broken = [got for got in receiver.received if got.path == "/hooks/0"]
            print(
                f"  one endpoint answers 503: healthy endpoints' sends {sum(len(r) for r in rows[1:])}, "
                f"paused {healthy_paused}; the broken one's requests {len(broken)} of {args.rounds} rounds"
            )
        breaker.reset(prefix=f"acct:{account.pk}|")

        rows, until_open, spent = run(queues(f"http://127.0.0.1:{closed_port()}"))
        print(
            f"  host refuses connections: {attempts(rows)} attempts ({attempts(rows) / n:.1f} per endpoint) until "
            f"all {n} endpoints paused after {until_open * 1000:.0f} ms ({spent * 1000:.0f} ms in attempts); "
            f"breakers per endpoint alone: {threshold * n} attempts"
        )
        breaker.reset(prefix=f"acct:{account.pk}|")

        with black_hole() as port:
            rows, until_open, spent = run(
                queues(f"http://127.0.0.1:{port}", connect_timeout=args.connect_timeout, read_timeout=5)
            )
        print(
            f"  host accepts no connection (connect_timeout {args.connect_timeout:g} s): {attempts(rows)} attempts "
            f"until all {n} endpoints paused after {until_open:.1f} s ({spent:.1f} s of worker time in attempts, "
            f"{spent / max(1, attempts(rows)):.2f} s each); breakers per endpoint alone: {threshold * n} attempts, "
            f"{threshold * n * args.connect_timeout:.0f} s"
        )
    finally:
        breaker.reset(prefix=f"acct:{account.pk}|")
        account.delete()
    return 0 if healthy_paused == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
