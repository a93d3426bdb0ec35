"""Where to remember a customer's discounts: what one read and one write cost in each candidate store.

    .venv/bin/python bench/pos_cache.py [--reads 2000]

The answer of the ``customer_discounts`` integration is remembered for ``POS_CUSTOMER_DISCOUNTS_CACHE_SECONDS`` so
that the basket changes of a sale ask the integrator once; it must be shared by every web worker, and the
embedded setup must need no server. Against ``DATABASE_URL`` (default: a SQLite file of its own, the embedded
default), same process, interleaved, this times a hit (read one customer's answer: 3 discounts) and a write in:

* ``table``: what the service does, the ``CustomerDiscountsAnswer`` row (one query, joined with the
  configuration to check it is still the one that answered) and its upsert;
* Django's cache framework: ``DatabaseCache`` (same database), ``FileBasedCache`` (shared by the processes of
  one machine only), ``RedisCache`` (``BENCH_REDIS_URL``, default Redis db 12; skipped when unreachable; needs a
  server) and ``LocMemCache`` (not shared between processes: a baseline only).

It prints p50/p99 per store. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--reads", type=int, default=2000)
    args = parser.parse_args()

    folder = Path(tempfile.mkdtemp(prefix="bench-pos-cache-"))
    env = harness.local_env(folder, LOG_LEVEL=os.environ.get("LOG_LEVEL", "WARNING"))
    harness.migrate(env)
    harness.manage(env, "createcachetable", "bench_pos_cache")

    import django

    django.setup()
    from decimal import Decimal

    from django.core.cache.backends.db import DatabaseCache
    from django.core.cache.backends.filebased import FileBasedCache
    from django.core.cache.backends.locmem import LocMemCache
    from django.core.cache.backends.redis import RedisCache
    from django.utils import timezone

    from accounts.models import Account, Market
    from integrations import selectors
    from integrations.models import CustomerDiscountsAnswer, RuntimeIntegration

    account = Account.objects.create(identifier=f"bench-cache-{uuid.uuid4().hex[:8]}", name="cache bench")
    market = Market.objects.create(account=account, identifier="dk", currency="DKK")
    integration = RuntimeIntegration.objects.create(
        account=account, kind="customer_discounts", url="https://erp.example.com/c/{customer_id}/discounts"
    )
    data = [
        {
            "id": f"cd-{n}",
            "type": "new_price_discount-single_product",
            "product_id": f"p-{n}",
            "new_price_per_item": Decimal("79.95"),
            "name": "Customer price",
            "display_name": "Your price",
            "priority": 10,
        }
        for n in range(3)
    ]
    key = {"customer_id": "c-1", "market": market.identifier, "currency_code": market.currency}
    unique = ["account", "customer_id", "market", "currency_code"]

    def table_write() -> None:
        row = CustomerDiscountsAnswer(
            account=account,
            integration=integration,
            integration_updated_at=integration.updated_at,
            data=data,
            fetched_at=timezone.now(),
            **key,
        )
        CustomerDiscountsAnswer.objects.bulk_create(
            [row],
            update_conflicts=True,
            unique_fields=unique,
            update_fields=["integration", "integration_updated_at", "data", "fetched_at"],
        )

    def table_read() -> Any:
        [found] = selectors.fresh_customer_discounts(account=account, max_age_seconds=60, **key)
        return found

    stores: dict[str, tuple[Callable[[], Any], Callable[[], Any]]] = {"table": (table_read, table_write)}
    cache_key = f"customer_discounts:{account.pk}:{integration.pk}:c-1:dk:DKK"
    backends: dict[str, Any] = {
        "DatabaseCache": DatabaseCache("bench_pos_cache", {"OPTIONS": {"MAX_ENTRIES": 100_000}}),
        "FileBasedCache": FileBasedCache(str(folder / "filecache"), {}),
        "LocMemCache (per process)": LocMemCache("bench", {}),
    }
    redis_url = os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/12")
    redis = RedisCache(redis_url, {})
    try:
        redis.set("bench-probe", 1, 5)
        backends["RedisCache"] = redis
    except Exception as exc:  # any failure means no Redis to compare with
        print(f"RedisCache skipped: {type(exc).__name__}")
    for name, backend in backends.items():

        def read(backend: Any = backend) -> Any:
            found = backend.get(cache_key)
            assert found is not None
            return found

        def write(backend: Any = backend) -> None:
            backend.set(cache_key, data, 60)

        stores[name] = (read, write)

    timings: dict[str, dict[str, list[float]]] = {name: {"read": [], "write": []} for name in stores}
    try:
        for _, write in stores.values():
            write()
        for i in range(args.reads):
            for name, (read, write) in stores.items():
                started = time.perf_counter()
                read()
                timings[name]["read"].append((time.perf_counter() - started) * 1000)
                if i % 10 == 0:
                    started = time.perf_counter()
                    write()
                    timings[name]["write"].append((time.perf_counter() - started) * 1000)
    finally:
        account.delete()
        redis.delete(cache_key)

    engine = django.db.connection.vendor
    print(f"{args.reads} reads and {args.reads // 10} writes each, interleaved, database {engine}")
    print(f"  {'store':28s} {'read p50':>9s} {'read p99':>9s} {'write p50':>10s} {'write p99':>10s}")
    p = harness.percentile
    for name, values in timings.items():
        print(
            f"  {name:28s} {p(values['read'], 0.5):7.3f}ms {p(values['read'], 0.99):7.3f}ms "
            f"{p(values['write'], 0.5):8.3f}ms {p(values['write'], 0.99):8.3f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
