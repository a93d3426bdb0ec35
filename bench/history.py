"""Cost as history grows: each figure on an empty database beside the same after the growing tables were
filled to ``--rows`` rows, in one run.

    .venv/bin/python bench/history.py [--rows 5000000] [--database retail_history] [--samples 20]
    .venv/bin/python bench/history.py --explain [--explain-rows 1000000]

PostgreSQL only, in a database of its own (``--database``, dropped and created afresh, on the server of
``DATABASE_URL`` when that is PostgreSQL, else ``postgres://postgres@127.0.0.1:5432``), with ``CELERY_BROKER_URL``
(default Redis db 14) and a Celery queue of this run. It starts gunicorn (``config/gunicorn.conf.py``, as deployed)
and a Celery worker, and a web hook receiver on 127.0.0.1, then measures (the median of ``--samples``):

* ``/metrics`` (the ops selectors' aggregates);
* the admin's change list of each growing model, as a logged-in superuser;
* the import path: a batch of ``--batch-size`` orders posted to ``/imports/incoming_orders``, until every item is
  materialised (``success``);
* real-time export: a checkout posted to the POS API, from its answer (the commit) until the receiver has its sale.

The "empty" database holds ``--baseline-rows`` rows (default 10,000: an admin page, 100 rows, in the smallest
table), so that a list page renders as many rows in both runs and the ratio is what history costs. Then it fills
the tables that only grow (import items, incoming orders and their state changes, export items,
deliveries and attempts, integration calls, checkouts and sales; ``--rows`` in all, spread as a year of a retailer
spreads them, timestamps over the last 365 days) with ``COPY`` (psycopg 3 ``cursor.copy``), refreshes the planner's
statistics, measures again and prints each figure beside its empty-database figure and their ratio (target: at
most 1.2 at 5 million rows).

``--explain``: instead, ``--explain-rows`` rows into each of ExportItem, ExportAttempt, IntegrationCall and Checkout
(``generate_series``, the last day's share as in a year of history), and the plan (``EXPLAIN ANALYZE``) of every
query of ``ops/selectors.py`` that reads them, without the indexes of migrations exports 0006, integrations 0005 and
ledger 0005 (dropped inside a transaction rolled back afterwards) and with them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests


def _load(name: str, file: str) -> Any:
    """A sibling script as a module (by path: a module named "imports" is the Django app); once per process."""
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(file))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


setup = _load("bench_pos_setup", "pos_setup.py")  # the POS benchmarks' database, tenants and gunicorn
harness = setup.harness
make_order = _load("bench_imports", "imports.py").make_order  # bench/imports.py's orders

ACCOUNT = "bench"
ADMIN = ("history-admin", "history-admin-password")
YEAR = timedelta(days=365)
# Of ``--rows``: how a year of a retailer spreads over the growing tables (orders arrive as import items, then
# change state about twice; most entities go out through one export queue or two; a delivery carries about two
# items and is tried 1.1 times; runtime integration calls come with sales and gift cards).
SHARES = {
    "import_items": 0.20,
    "orders": 0.16,
    "state_changes": 0.30,
    "export_items": 0.14,
    "deliveries": 0.07,
    "attempts": 0.075,
    "integration_calls": 0.035,
    "checkouts": 0.01,
    "sales": 0.01,
}
ADMIN_LISTS = {
    "import items": "/admin/imports/importitem/",
    "incoming orders": "/admin/orders/incomingorder/",
    "order state changes": "/admin/orders/orderstatechange/",
    "export log": "/admin/exports/exportitem/",
    "export deliveries": "/admin/exports/exportdelivery/",
    "integration calls": "/admin/integrations/integrationcall/",
    "checkouts": "/admin/ledger/checkout/",
    "sales": "/admin/ledger/sale/",
}
# The indexes /metrics and the dashboard read through (migrations exports 0006, integrations 0005).
# /metrics reads the rows of its window (METRICS_WINDOW_SECONDS, 900 s by default): this run's processes use a
# minute, and the filled database is probed once the empty run's probes have left it, so that both readings see
# the same recent traffic (their own run's last minute) and the ratio is what history costs. With the default
# window the filled reading also counted the empty run's 400 imports and their deliveries.
METRICS_WINDOW_SECONDS = 60

METRICS_INDEXES = (
    "export_item_created",
    "export_item_pending",
    "export_attempt_started",
    "integration_call_time",
    "checkout_created",
)

SETUP = """
import json
from datetime import timedelta
from django.contrib.auth import get_user_model
from django.utils import timezone
from accounts import services
from accounts.models import Register, Scope
from exports.models import ExportQueue
from ledger.models import RegisterPeriod

account, integration = services.ensure_account_and_integration(
    account_identifier=%(account)r, integration_identifier="webshop"
)
shop = services.ensure_demo_structure(account=account)
_, key = services.create_api_key(
    account=account, integration=integration, scopes=[Scope.IMPORTS, Scope.POS, Scope.ADMIN]
)
queue = ExportQueue.objects.create(
    account=account, name="sales to the ERP", entity_type="sales", trigger="realtime",
    transform={"type": "identity"}, delivery={"type": "webhook", "url": %(hook)r},
)
history = Register.objects.create(account=account, identifier="reg-history", name="History", stock_location=shop)
period = RegisterPeriod.objects.create(
    account=account, register=history, sequence_number=1, opened_at=timezone.now() - timedelta(days=366),
    closed_at=timezone.now() - timedelta(days=1), cash_total_at_open=0,
)
get_user_model().objects.create_superuser(%(user)r, "admin@example.com", %(password)r)
print(json.dumps({"key": key, "account": account.pk, "integration": integration.pk, "shop": shop.pk,
                  "queue": queue.pk, "register": history.pk, "period": period.pk}))
"""


# --- The database ------------------------------------------------------------------------------------------------


def database_url(name: str) -> str:
    current = os.environ.get("DATABASE_URL", "")
    parts = urlsplit(current if urlsplit(current).scheme in ("postgres", "postgresql", "pgsql") else "")
    netloc = parts.netloc or "postgres@127.0.0.1:5432"
    return urlunsplit(("postgres", netloc, f"/{name}", "", ""))


def recreate(url: str) -> None:
    import psycopg
    from psycopg import sql

    parts = urlsplit(url)
    maintenance = urlunsplit(("postgresql", parts.netloc, "/postgres", "", ""))
    with psycopg.connect(maintenance, autocommit=True) as conn:
        name = sql.Identifier(parts.path.lstrip("/"))
        conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(name))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(name))


# --- Filling: COPY -----------------------------------------------------------------------------------------------


def _spread(n: int, now: datetime) -> Iterator[tuple[int, datetime]]:
    """``n`` moments evenly over the last year, oldest first."""
    step = YEAR / max(n, 1)
    start = now - YEAR
    for i in range(n):
        yield i, start + step * i


def _next_id(cursor: Any, table: str) -> int:
    from psycopg import sql

    cursor.execute(sql.SQL("SELECT COALESCE(MAX(id), 0) + 1 FROM {}").format(sql.Identifier(table)))
    return int(cursor.fetchone()[0])


def _copy(cursor: Any, table: str, columns: tuple[str, ...], rows: Iterator[tuple[Any, ...]]) -> int:
    from psycopg import sql

    n = 0
    names = sql.SQL(", ").join(map(sql.Identifier, columns))
    with cursor.copy(sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table), names)) as copy:
        for row in rows:
            copy.write_row(row)
            n += 1
    cursor.execute(
        sql.SQL("SELECT setval(pg_get_serial_sequence(%s, 'id'), (SELECT MAX(id) FROM {}))").format(
            sql.Identifier(table)
        ),
        [table],
    )
    return n


IMPORT_ITEM = "id account_id integration_id kind request_id index identifier stock_location_id markets status message"
ORDER = "id account_id state created_at last_change_at stock_location_id order_identifier currency basket handling_type"
STATE_CHANGE = "account_id incoming_order_id state previous_state comment source created_at"
CHECKOUT = "id account_id register_id stock_location_id period_id identifier voided timestamp body_hash document"
SALE = "id account_id checkout_id register_id stock_location_id period_id identifier sequence_number kind voided"
DELIVERY = "id account_id queue_id delivery_id window status attempts next_attempt_at handed_off_at status_code error"
EXPORT_ITEM = "account_id queue_id entity_type object_id element_key status delivery_id message created_at"
ATTEMPT = "account_id delivery_id number ok status_code error duration_ms started_at"
CALL = "account_id kind ok status_code duration_ms error created_at"
STATES = ("completed", "ready", "processing", "created")
KINDS = ("customer_discounts", "customer_lookup", "giftcard_read", "product_lookup")


def fill(url: str, rows: int, ids: dict[str, int], tag: str) -> dict[str, int]:
    """``rows`` rows over the growing tables (``SHARES``) with COPY, identifiers starting with ``tag``; the count
    written into each."""
    import psycopg

    now, second = datetime.now(UTC), timedelta(seconds=1)
    n = {name: int(rows * share) for name, share in SHARES.items()}
    account, shop, queue = ids["account"], ids["shop"], ids["queue"]
    till = (ids["register"], shop, ids["period"])
    basket = json.dumps({"currency": "DKK", "line_items": [{"product_identifier": "sku-1", "quantity": 2}]})
    document = json.dumps({"identifier": "h", "source": {"register_id": "reg-history"}, "voided": False})
    written: dict[str, int] = {}
    with psycopg.connect(url.replace("postgres://", "postgresql://", 1)) as conn, conn.cursor() as cursor:

        def copy(table: str, columns: str, share: str, row: Callable[[int, datetime], tuple[Any, ...]]) -> int:
            """The next ids of ``table``, as many rows as ``share`` of ``rows``; its first id."""
            first = _next_id(cursor, table)
            spread = _spread(n[share], now)
            written[table] = _copy(cursor, table, tuple(columns.split()), (row(first + i, at) for i, at in spread))
            return first

        copy(
            "imports_importitem",
            IMPORT_ITEM + " errors attempts created_at processed_at",
            "import_items",
            lambda i, at: (
                (i, account, ids["integration"], "incoming_order", uuid.UUID(int=i // 50 + 1), i % 50)  # noqa: RUF005
                + (f"{tag}{i}", shop, "[]", "success" if i % 100 else "failure", "", "[]", 1, at, at + second)
            ),
        )
        order = copy(
            "orders_incomingorder",
            ORDER,
            "orders",
            lambda i, at: (i, account, STATES[i % 4], at, at, shop, f"{tag}{i}", "DKK", basket, "ship_from_store"),
        )
        orders = max(n["orders"], 1)
        copy(
            "orders_orderstatechange",
            "id " + STATE_CHANGE,
            "state_changes",
            lambda i, at: (i, account, order + i % orders, STATES[i % 3], STATES[i % 3 + 1], "", "pos", at),
        )
        checkout = copy(
            "ledger_checkout",
            CHECKOUT + " warnings created_at",
            "checkouts",
            lambda i, at: (i, account, *till, f"{tag}c{i}", False, at, f"{i:064x}", document, "[]", at),
        )
        copy(
            "ledger_sale",
            SALE + " base_currency_code total timestamp document warnings created_at",
            "sales",
            lambda i, at: (
                (i, account, checkout + i % max(n["checkouts"], 1), *till, f"{tag}s{i}", i, "sale", False)  # noqa: RUF005
                + ("DKK", "299.90", at, document, "[]", at)
            ),
        )
        delivery = copy(
            "exports_exportdelivery",
            DELIVERY + " duration_ms pause_reason created_at finished_at",
            "deliveries",
            lambda i, at: (
                (i, account, queue, f"msg_{tag}{i:031x}", "", "success" if i % 50 else "failure", 1, at)  # noqa: RUF005
                + (at, 200, "", 40, "", at, at + second)
            ),
        )
        deliveries = max(n["deliveries"], 1)
        copy(
            "exports_exportitem",
            "id " + EXPORT_ITEM,
            "export_items",
            lambda i, at: (i, account, queue, "sales", i, f"{tag}s{i}", "success", delivery + i % deliveries, "", at),
        )
        copy(
            "exports_exportattempt",
            "id " + ATTEMPT,
            "attempts",
            lambda i, at: (i, account, delivery + i % deliveries, 1 + (i % 10 == 9), i % 10 != 8, 200, "", 20, at),
        )
        copy(
            "integrations_integrationcall",
            "id " + CALL,
            "integration_calls",
            lambda i, at: (i, account, KINDS[i % 4], i % 40 != 0, 200 if i % 40 else 500, 5 + i % 300, "", at),
        )
        conn.commit()
    return written


# --- Probes ------------------------------------------------------------------------------------------------------


def median_ms(samples: int, run: Callable[[], float | None]) -> float:
    """The median of ``samples`` runs of ``run``, which times itself (milliseconds) or returns None to be timed."""
    values = []
    for _ in range(samples):
        started = time.perf_counter()
        took = run()
        values.append(took if took is not None else (time.perf_counter() - started) * 1000)
    return statistics.median(values)


def admin_session(base: str) -> requests.Session:
    session = requests.Session()
    session.get(f"{base}/admin/login/", timeout=30)
    answer = session.post(
        f"{base}/admin/login/?next=/admin/",
        data={"username": ADMIN[0], "password": ADMIN[1], "csrfmiddlewaretoken": session.cookies["csrftoken"]},
        headers={"Referer": f"{base}/admin/login/"},
        timeout=30,
    )
    if answer.status_code != 200 or "log out" not in answer.text.lower():
        raise RuntimeError(f"admin login failed: {answer.status_code}")
    return session


def probes(base: str, key: str, receiver: Any, samples: int, batch_size: int, label: str) -> dict[str, float]:
    """Every figure of the run (milliseconds, the median of ``samples``)."""
    from imports.models import ImportItem, ImportStatus

    auth = {"account": ACCOUNT, "integration": "webshop", "apikey": key}
    figures: dict[str, float] = {}
    session = requests.Session()

    def get(url: str, client: requests.Session = session) -> None:
        answer = client.get(url, timeout=120)
        if answer.status_code != 200:
            raise RuntimeError(f"{url}: {answer.status_code} {answer.text[:300]}")

    figures["/metrics"] = 0.0  # measured last, printed first
    admin = admin_session(base)
    for name, path in ADMIN_LISTS.items():
        get(f"{base}{path}", admin)
        figures[f"admin: {name}"] = median_ms(samples, lambda path=path: get(f"{base}{path}", admin))

    batches = iter(range(10**6))

    def one_import() -> float:
        n = next(batches)
        prefix = f"{label}-{n}"
        orders = [make_order(random.Random(n), f"{prefix}-{i}") for i in range(batch_size)]
        # The batch's items by their ids (the primary key's index): a look-up by identifier would scan the
        # table and measure this probe instead of the import path.
        after = ImportItem.objects.order_by("-id").values_list("id", flat=True).first() or 0
        started = time.perf_counter()
        answer = session.post(
            f"{base}/imports/incoming_orders",
            params={**auth, "stock_location": "shop-1"},
            data=json.dumps({"orders": orders}),
            headers={"Content-Type": "application/json"},
            timeout=120,
        )
        if answer.status_code != 200:
            raise RuntimeError(f"import: {answer.status_code} {answer.text[:300]}")
        items = ImportItem.objects.filter(id__gt=after, identifier__startswith=prefix, status=ImportStatus.SUCCESS)
        deadline = started + 120
        while items.count() < batch_size:  # polled every 5 ms: the figure is about 100 ms
            if time.perf_counter() > deadline:
                raise RuntimeError("the import batch was not materialised within 120 s")
            time.sleep(0.005)
        return (time.perf_counter() - started) * 1000

    one_import()
    figures[f"import: {batch_size} orders until materialised"] = median_ms(samples, one_import)

    from tests.support.checkouts import checkout_body

    checkouts = iter(range(10**6))

    def one_export() -> float:
        n = next(checkouts)
        body = checkout_body(identifier=f"{label}-co-{n}", lines=[("sku-0001", "tops", 1, "49.95")])
        body["timing"]["timestamp"] = int(time.time())
        before = len(receiver.received)
        answer = session.post(
            f"{base}/api/v1/pos/checkouts",
            params=auth,
            data=json.dumps(body),
            headers={"Content-Type": "application/json"},
            timeout=60,
        )
        committed = time.time()
        if answer.status_code != 201:
            raise RuntimeError(f"checkout: {answer.status_code} {answer.text[:300]}")
        harness.wait_for(lambda: len(receiver.received) > before, 60, "the sale's web hook", [])
        return (receiver.received[before].at - committed) * 1000

    one_export()
    figures["export: checkout commit -> web hook received"] = median_ms(samples, one_export)

    # Last: by now the web workers have served every kind of request of the run, in both runs alike, so /metrics
    # renders as many request series in each (a worker's own registry, which grows with the routes it has served:
    # read first, the empty run's reading would hold only /metrics' own and come out 1.1-1.6x faster) and its window
    # holds this run's last minute of probes in each.
    get(f"{base}/metrics")  # warm: connections, caches
    figures["/metrics"] = median_ms(samples, lambda: get(f"{base}/metrics"))
    return figures


# --- EXPLAIN -----------------------------------------------------------------------------------------------------


def explain(url: str, rows: int, ids: dict[str, int]) -> None:
    """``rows`` rows into each table /metrics and the dashboard scan, and the plan of every ops selector query
    without the metrics indexes and with them."""
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from ops import selectors

    with connection.cursor() as cursor:
        cursor.execute(
            'INSERT INTO exports_exportdelivery (account_id, queue_id, delivery_id, "window", status, attempts,'
            " next_attempt_at, handed_off_at, error, pause_reason, created_at) SELECT %s, %s, 'msg_x' || g, '',"
            " 'success', 1, now(), now(), '', '', now() FROM generate_series(1, 1000) g",
            [ids["account"], ids["queue"]],
        )
        cursor.execute("SELECT MIN(id) FROM exports_exportdelivery")
        delivery = cursor.fetchone()[0]
        # Timestamps over a year, oldest first, as history accumulates: the last day holds 1/365 of the rows.
        cursor.execute(
            "INSERT INTO exports_exportitem (account_id, queue_id, entity_type, object_id, element_key, status,"
            " message, created_at) SELECT %s, %s, 'sales', g, 'k' || g, 'success', '',"
            " now() - interval '365 days' + g * interval '365 days' / %s FROM generate_series(1, %s) g",
            [ids["account"], ids["queue"], rows, rows],
        )
        cursor.execute(
            "INSERT INTO exports_exportattempt (account_id, delivery_id, number, ok, status_code, error, duration_ms,"
            " started_at) SELECT %s, %s, 1 + (g %% 10 = 0)::int, g %% 20 <> 0, 200, '', g %% 300,"
            " now() - interval '365 days' + g * interval '365 days' / %s FROM generate_series(1, %s) g",
            [ids["account"], delivery, rows, rows],
        )
        cursor.execute(
            "INSERT INTO integrations_integrationcall (account_id, kind, ok, status_code, duration_ms, error,"
            " created_at) SELECT %s, (ARRAY['customer_discounts', 'customer_lookup', 'giftcard_read'])[1 + g %% 3],"
            " g %% 40 <> 0, 200, g %% 300, '', now() - interval '365 days' + g * interval '365 days' / %s"
            " FROM generate_series(1, %s) g",
            [ids["account"], rows, rows],
        )
        cursor.execute(
            "INSERT INTO ledger_checkout (account_id, register_id, stock_location_id, period_id, identifier, voided,"
            " \"timestamp\", body_hash, document, warnings, created_at) SELECT %s, %s, %s, %s, 'x' || g, false, now(),"
            " md5(g::text), '{}', (CASE WHEN g %% 50 = 0 THEN '[{\"code\": \"odd\"}]' ELSE '[]' END)::jsonb,"
            " now() - interval '365 days' + g * interval '365 days' / %s FROM generate_series(1, %s) g",
            [ids["account"], ids["register"], ids["shop"], ids["period"], rows, rows],
        )
        cursor.execute("ANALYZE")
    now = timezone.now()
    calls: dict[str, Callable[[], Any]] = {
        "export_backlog": selectors.export_backlog,
        "export_items_by_queue": lambda: selectors.export_items_by_queue(since=now - timedelta(minutes=15)),
        "export_retries": lambda: selectors.export_retries(since=now - timedelta(minutes=15)),
        "delivery_latency": lambda: selectors.delivery_latency(since=now - timedelta(minutes=15)),
        "integration_latency": lambda: selectors.integration_latency(since=now - timedelta(minutes=15)),
        "failed_export_attempts": lambda: selectors.failed_export_attempts(since=now - timedelta(hours=24)),
        "slowest_integrations": lambda: selectors.slowest_integrations(since=now - timedelta(hours=24)),
        "checkout_warnings_by_code": lambda: selectors.checkout_warnings_by_code(since=now - timedelta(minutes=15)),
    }
    scanned = ("exports_exportitem", "exports_exportattempt", "integrations_integrationcall", "ledger_checkout")
    for name, call in calls.items():
        with CaptureQueriesContext(connection) as queries:
            call()
        for query in queries.captured_queries:
            if not any(table in query["sql"] for table in scanned):
                continue
            for indexed in (False, True):
                with transaction.atomic(), connection.cursor() as cursor:
                    if not indexed:
                        for index in METRICS_INDEXES:
                            cursor.execute(f'DROP INDEX IF EXISTS "{index}"')
                    select = query["sql"].split(" CURSOR WITH HOLD FOR ", 1)[-1]  # a server-side cursor's query
                    cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF) {select}")
                    plan = [row[0] for row in cursor.fetchall()]
                    transaction.set_rollback(True)
                print(f"--- {name}, {'with' if indexed else 'without'} the indexes: {query['sql'][:160]}")
                print("\n".join(f"    {line}" for line in plan))


# --- The run -----------------------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=5_000_000, help="rows written into the growing tables in all")
    parser.add_argument("--database", default="retail_history", help="dropped and created afresh")
    parser.add_argument("--baseline-rows", type=int, default=10_000, help="rows of the 'empty' database")
    parser.add_argument("--samples", type=int, default=20, help="of each figure; the median counts")
    parser.add_argument("--batch-size", type=int, default=20, help="orders per import request")
    parser.add_argument("--explain", action="store_true", help="print the plans of ops/selectors.py's queries")
    parser.add_argument("--explain-rows", type=int, default=1_000_000)
    args = parser.parse_args()

    from tests.support.receivers import running_receiver

    url = database_url(args.database)
    folder = Path(tempfile.mkdtemp(prefix="bench-history-"))
    queue = f"bench-history-{uuid.uuid4().hex[:8]}"
    env = {
        **setup.environment(folder),
        "DATABASE_URL": url,
        "CELERY_BROKER_URL": os.environ.get("CELERY_BROKER_URL", harness.DEFAULT_BROKER_URL),
        "CELERY_TASK_DEFAULT_QUEUE": queue,
        "TASK_ROUTING": "false",  # every task on this run's queue
        "PYTHONUNBUFFERED": "1",
        "METRICS_WINDOW_SECONDS": str(METRICS_WINDOW_SECONDS),
    }
    recreate(url)
    harness.manage(env, "migrate", "--noinput")
    with running_receiver() as receiver:
        script = SETUP % {"account": ACCOUNT, "hook": receiver.url, "user": ADMIN[0], "password": ADMIN[1]}
        ids = json.loads(harness.manage(env, "shell", "-c", script).strip().splitlines()[-1])
        os.environ.update(env)
        import django

        django.setup()
        if args.explain:
            explain(url, args.explain_rows, ids)
            return 0
        return run(args, env, folder, queue, url, ids, receiver)


def run(
    args: argparse.Namespace,
    env: dict[str, str],
    folder: Path,
    queue: str,
    url: str,
    ids: dict[str, Any],
    receiver: Any,
) -> int:
    children = harness.Children(log_dir=folder, env=env)
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    workers = int(__import__("runpy").run_path(str(harness.ROOT / "config" / "gunicorn.conf.py"))["workers"])
    celery = "-m celery -A config worker --loglevel=INFO --concurrency 2 --without-gossip --without-mingle"
    print(f"database {url.split('@')[-1]}, broker {env['CELERY_BROKER_URL'].split('@')[-1]}, logs in {folder}")
    try:
        argv = [sys.executable, *celery.split(), "--without-heartbeat", "--queues", queue, "--hostname", f"{queue}@%h"]
        worker = children.start("worker", argv)
        web = setup.start_gunicorn(children, env, folder, harness.ROOT, port)
        setup.wait_ready(folder, workers, web)
        harness.wait_for(lambda: " ready." in worker.log(), 60, "the Celery worker", [worker])
        baseline = fill(url, args.baseline_rows, ids, "b")
        harness.vacuum_analyze(url, checkpoint=True)
        empty = probes(base, ids["key"], receiver, args.samples, args.batch_size, "empty")
        probed = started = time.perf_counter()
        written = fill(url, args.rows - args.baseline_rows, ids, "h")
        filled_in = time.perf_counter() - started
        # A year-old database has its history on disk, not in the write-back queue: the fill's dirty pages are
        # written before the probes, not while they run.
        harness.vacuum_analyze(url, checkpoint=True)
        # The empty run's own imports, checkouts and deliveries out of /metrics' window before it is read again.
        time.sleep(max(0.0, METRICS_WINDOW_SECONDS + 1 - (time.perf_counter() - probed)))
        print(
            f"filled {sum(written.values()):,} rows in {filled_in:.0f} s with COPY, then VACUUM ANALYZE and a "
            "CHECKPOINT: " + ", ".join(f"{table} {n + baseline[table]:,}" for table, n in written.items())
        )
        full = probes(base, ids["key"], receiver, args.samples, args.batch_size, "full")
    finally:
        children.stop_all()
    print(f"{'figure (median of ' + str(args.samples) + ', ms)':52s} {'empty':>9s} {'filled':>9s} {'ratio':>6s}")
    worst = 0.0
    for name, before in empty.items():
        ratio = full[name] / before
        worst = max(worst, ratio)
        print(f"{name:52s} {before:9.1f} {full[name]:9.1f} {ratio:6.2f}")
    total = sum(written.values()) + sum(baseline.values())
    print(f"worst ratio {worst:.2f} at {total:,} rows (target: at most 1.2 at 5,000,000)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
