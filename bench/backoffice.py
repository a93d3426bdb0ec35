"""The back-office's pages on a large account: p50 and p99 of the dashboard, the export queues, a queue and the
export log (first page, a filtered page, a deep page) with ``--rows`` export log rows.

    .venv/bin/python bench/backoffice.py [--rows 100000] [--requests 100]

Against ``DATABASE_URL`` (default PostgreSQL ``retail_bench``), migrated. An account ``bench-backoffice`` gets
one disabled web hook queue (nothing is sent) and ``--rows`` export items, each with its delivery and one attempt
(80 % delivered, 15 % failed with a reason, 5 % waiting), inserted in bulk once and kept for the next run, and an
owner member. gunicorn (2 workers) serves; a client signs in through ``/backoffice/login/`` as a person would and
asks each page ``--requests`` times after a warm-up. A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

ACCOUNT = "bench-backoffice"
EMAIL = "owner@bench-backoffice.example"
PASSWORD = "bench-Backoffice-9"  # noqa: S105 - a benchmark member of a benchmark database
BATCH = 5000


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=100)
    args = parser.parse_args()

    env = harness.django_env()
    harness.setup_django(env)
    from django.utils import timezone

    from accounts import services as account_services
    from accounts.models import Account
    from exports.models import ExportAttempt, ExportDelivery, ExportItem, ExportQueue, ExportStatus

    account, _ = Account.objects.get_or_create(identifier=ACCOUNT)
    account_services.add_member(account=account, email=EMAIL, role="owner", password=PASSWORD)
    queue, _ = ExportQueue.objects.get_or_create(
        account=account,
        name="bench orders",
        defaults={
            "entity_type": "outgoing_orders",
            "enabled": False,
            "transform": {"type": "identity"},
            "delivery": {"type": "webhook", "url": "https://example.com/hook"},
        },
    )
    have = ExportItem.objects.filter(queue=queue).count()
    own = {"account": account, "queue": queue}
    now = timezone.now()
    started = time.monotonic()
    for first in range(have, args.rows, BATCH):
        count = min(BATCH, args.rows - first)
        kinds = [
            ExportStatus.SUCCESS if n % 20 < 16 else ExportStatus.FAILURE if n % 20 < 19 else ExportStatus.PENDING
            for n in range(first, first + count)
        ]
        at = [now - timedelta(seconds=(args.rows - n) * 0.5) for n in range(first, first + count)]
        deliveries = ExportDelivery.objects.bulk_create(
            [
                ExportDelivery(
                    **own,
                    delivery_id=f"bench-{first + i}-{time.time_ns()}",
                    status=kind,
                    attempts=1,
                    next_attempt_at=at[i],
                    status_code=200 if kind == ExportStatus.SUCCESS else 503,
                    error="" if kind == ExportStatus.SUCCESS else "HTTP 503: the partner is down",
                )
                for i, kind in enumerate(kinds)
            ]
        )
        ExportItem.objects.bulk_create(
            [
                ExportItem(
                    **own,
                    entity_type="outgoing_orders",
                    object_id=first + i,
                    element_key=f"order-{first + i}:{first + i}",
                    status=kind,
                    delivery=delivery,
                    message="" if kind != ExportStatus.FAILURE else "HTTP 503: the partner is down",
                )
                for i, (kind, delivery) in enumerate(zip(kinds, deliveries, strict=True))
            ]
        )
        ExportAttempt.objects.bulk_create(
            [
                ExportAttempt(
                    account=account,
                    delivery=delivery,
                    number=1,
                    ok=kind == ExportStatus.SUCCESS,
                    status_code=200 if kind == ExportStatus.SUCCESS else 503,
                    duration_ms=40,
                    started_at=at[i],
                )
                for i, (kind, delivery) in enumerate(zip(kinds, deliveries, strict=True))
                if kind != ExportStatus.PENDING
            ]
        )
    if have < args.rows:
        print(f"inserted {args.rows - have} export log rows in {time.monotonic() - started:.0f} s")
        if env["DATABASE_URL"].startswith("postgres"):
            harness.vacuum_analyze(env["DATABASE_URL"])
    deep = ExportItem.objects.filter(queue=queue).order_by("pk").values_list("pk", flat=True)[args.rows // 2]

    folder = Path(tempfile.mkdtemp(prefix="bench-backoffice-"))
    children = harness.Children(log_dir=folder, env=env)
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    pages = {
        "dashboard": "/backoffice/",
        "export queues": "/backoffice/exports/queues/",
        "one queue": f"/backoffice/exports/queues/{queue.pk}/",
        "export log": "/backoffice/exports/log/",
        "export log, failed only": "/backoffice/exports/log/?status=failure",
        "export log, a page half-way": f"/backoffice/exports/log/?before={deep}",
    }
    try:
        web = children.start_gunicorn(port, 2)
        harness.wait_for(lambda: harness.answers(f"{base}/health/live"), 60, "gunicorn", [web])
        session = requests.Session()
        form = session.get(f"{base}/backoffice/login/", timeout=30)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert token is not None, form.text[:500]
        signed = session.post(
            f"{base}/backoffice/login/",
            data={"username": EMAIL, "password": PASSWORD, "csrfmiddlewaretoken": token.group(1)},
            headers={"Referer": f"{base}/backoffice/login/"},
            timeout=30,
        )
        assert signed.ok and signed.url.endswith("/backoffice/"), (signed.status_code, signed.url)
        print(f"{args.rows} export log rows on {harness.redacted(env['DATABASE_URL'])}; gunicorn 2 workers:")
        for name, path in pages.items():
            for _ in range(5):
                session.get(base + path, timeout=60).raise_for_status()
            times = []
            for _ in range(args.requests):
                clock = time.perf_counter()
                answer = session.get(base + path, timeout=60)
                times.append(time.perf_counter() - clock)
                answer.raise_for_status()
            times.sort()
            p50, p99 = (harness.percentile(times, q) * 1000 for q in (0.5, 0.99))
            print(f"  {name:<30} p50 {p50:6.1f} ms   p99 {p99:6.1f} ms")
    finally:
        children.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
