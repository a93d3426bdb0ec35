"""The overhead ``integrations.runtime.call`` adds over calling the integrator directly, in one run.

    .venv/bin/python bench/integrations.py [--calls 2000] [--warmup 100]

Starts the reference integrator of the tests (``tests/support/reference_server.py``) on 127.0.0.1, stores
a ``product_search`` integration for an account of its own (``DATABASE_URL``, default PostgreSQL
``retail_bench``, created when missing and migrated), then times, interleaved so both see the same machine:

* ``service``: ``call(account=..., kind="product_search", values=...)``: the configuration (remembered by the
  process for ``INTEGRATION_CONFIG_MEMO_SECONDS``), templates, the circuit breaker, the SSRF guard, the request
  on the integration's kept-alive session, JSON parsed with Decimals, transform, the call-log row handed to the
  process's writer (``integrations.call_log``, which inserts it after the answer);
* ``direct``: ``requests`` with one kept-alive session, GET of the same URL and query, ``response.json()``.

After each service call its call-log row is written (``call_log.flush()``), untimed: left to the writer thread it
would be inserted during the next direct call and slow that one instead. Its time is printed apart.

It prints p50/p99 of both, the added p50 and service/direct (targets: added p50 at most 1 ms,
service/direct at most 1.4), and checks that the call log got every call. The account is removed at the end.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

VALUES = {"search_term": "sweater", "market": "dk", "currency_code": "DKK", "shop_id": "shop-1", "limit": 20}
TARGET_ADDED_MS = 1.0
TARGET_RATIO = 1.4


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()

    harness.setup_django(
        harness.django_env(OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32", LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    )
    import logging

    logging.getLogger("integrations").setLevel(logging.WARNING)

    from accounts.models import Account
    from integrations import call_log
    from integrations.models import IntegrationCall, RuntimeIntegration
    from integrations.runtime import call
    from tests.support.reference_server import DEFAULTS, running

    method, path, query, _ = DEFAULTS["product_search"]
    account = Account.objects.create(identifier=f"bench-int-{uuid.uuid4().hex[:8]}", name="integrations bench")
    try:
        with running() as reference:
            RuntimeIntegration.objects.create(
                account=account, kind="product_search", method=method, url=reference.url + path, query=query
            )
            direct_url = reference.url + path
            direct_params = {name: template.format(**VALUES) for name, template in query.items()}
            session = requests.Session()

            def service() -> Any:
                return call(account=account, kind="product_search", values=VALUES).data

            def direct() -> Any:
                response = session.get(direct_url, params=direct_params, timeout=5)
                response.raise_for_status()
                return response.json()

            for _ in range(args.warmup):
                service()
                direct()
            timings: dict[str, list[float]] = {"service": [], "direct": []}
            writes: list[float] = []
            for _ in range(args.calls):
                for name, run in (("service", service), ("direct", direct)):
                    started = time.perf_counter()
                    run()
                    timings[name].append((time.perf_counter() - started) * 1000)
                    if name == "service":
                        # The call's row, written here untimed: the writer thread would otherwise insert it
                        # during the direct call and slow that one down.
                        started = time.perf_counter()
                        call_log.flush()
                        writes.append((time.perf_counter() - started) * 1000)
            received = len(reference.requests)
            call_log.flush()  # the rows still pending are written before their account goes
            logged = IntegrationCall.objects.filter(account=account).count()
    finally:
        account.delete()  # its integration and call log go with it

    print(f"{args.calls} calls each, interleaved, against the reference integrator ({received} requests served)")
    p = harness.percentile
    for name, values in timings.items():
        figures = (
            f"p50 {p(values, 0.5):7.3f} ms   p99 {p(values, 0.99):7.3f} ms   mean {statistics.fmean(values):7.3f} ms"
        )
        print(f"  {name:8s} {figures}")
    print(f"  call-log write after each service call (off its path): p50 {p(writes, 0.5):7.3f} ms")
    added = p(timings["service"], 0.5) - p(timings["direct"], 0.5)
    ratio = p(timings["service"], 0.5) / p(timings["direct"], 0.5)
    ok = added <= TARGET_ADDED_MS and ratio <= TARGET_RATIO
    print(
        f"  added p50 {added:.3f} ms, service/direct {ratio:.2f} "
        f"(targets <= {TARGET_ADDED_MS:g} ms, <= {TARGET_RATIO:g}): {'OK' if ok else 'ABOVE TARGET'}"
    )
    every = args.warmup + args.calls
    print(f"  call log: {logged} rows for {every} calls: {'every call' if logged == every else 'CALLS MISSING'}")
    return 0 if ok and logged == every else 1


if __name__ == "__main__":
    sys.exit(main())
