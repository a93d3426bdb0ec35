"""The overhead ``integrations.runtime.call`` adds over calling the integrator directly, in one run.

    .venv/bin/python bench/integrations.py [--calls 2000] [--warmup 100]

Starts the reference integrator of the tests (``tests/integrations/reference_server.py``) on 127.0.0.1, stores
a ``product_search`` integration for an account of its own (``DATABASE_URL``, default PostgreSQL
``retail_bench``, created when missing and migrated), then times, interleaved so both see the same machine:

* ``service``: ``call(account=..., kind="product_search", values=...)``: configuration read, templates, the
  SSRF guard, the request on the integration's kept-alive session, JSON parsed with Decimals, transform, the
  call-log insert;
* ``direct``: ``requests`` with one kept-alive session, GET of the same URL and query, ``response.json()``.

It prints p50/p99 of both and the added p50 (issue 6's target: under 3 ms on this machine). The account is
removed at the end.
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
TARGET_MS = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=100)
    args = parser.parse_args()

    harness.migrate(
        harness.django_env(OUTBOUND_ALLOWED_NETWORKS="127.0.0.1/32", LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    )

    import django

    django.setup()
    import logging

    logging.getLogger("integrations").setLevel(logging.WARNING)

    from accounts.models import Account
    from integrations.models import RuntimeIntegration
    from integrations.runtime import call
    from tests.integrations.reference_server import DEFAULTS, running

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
            for _ in range(args.calls):
                for name, run in (("service", service), ("direct", direct)):
                    started = time.perf_counter()
                    run()
                    timings[name].append((time.perf_counter() - started) * 1000)
            received = len(reference.requests)
    finally:
        account.delete()  # its integration and call log go with it

    print(f"{args.calls} calls each, interleaved, against the reference integrator ({received} requests served)")
    p = harness.percentile
    for name, values in timings.items():
        figures = (
            f"p50 {p(values, 0.5):7.3f} ms   p99 {p(values, 0.99):7.3f} ms   mean {statistics.fmean(values):7.3f} ms"
        )
        print(f"  {name:8s} {figures}")
    added = p(timings["service"], 0.5) - p(timings["direct"], 0.5)
    verdict = "OK" if added < TARGET_MS else "ABOVE TARGET"
    print(f"  added p50 {added:.3f} ms (target < {TARGET_MS:g} ms): {verdict}")
    return 0 if added < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main())
