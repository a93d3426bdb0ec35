"""What each hostile request of docs/security.md costs the service: its answer, its time, the worker's memory.

    .venv/bin/python bench/hostile.py

Starts one gunicorn worker (sync, the production default) on a SQLite database of its own in a temporary folder
(the embedded default; no broker is needed: nothing here is queued), creates an account with a register, then
sends each attack (oversized, deep and slow bodies; answers that must be JSON; destinations; templates) and
prints its status, the time to its answer and the worker's resident memory after it. Between the attacks a
cheap request (``/health/live``) shows the worker serves the next request at once. A benchmark, not a test: the
tests prove the bounds without a clock.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

import requests

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import harness

MIB = 1024 * 1024


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def attacks() -> list[tuple[str, str, str, bytes, str]]:
    """(name, method, path, body, content type)."""
    basket = '{"market": "dk", "line_items": [{"line_item_id": "l1", "id": "p-1", "quantity": %s, "unit_price": 10}]}'
    numbers = b'{"identifier": "co-x", "payments": [' + b",".join([b"1.5"] * 2_500_000) + b"]}"
    small_numbers = b'{"identifier": "co-x", "payments": [' + b",".join([b"1.5"] * 500_000) + b"]}"
    below_cap = b'{"identifier": "co-x", "payments": [' + b",".join([b"1.5"] * 190_000) + b"]}"
    return [
        (
            "basket quantity 1E+1000000",
            "POST",
            "/api/v1/pos/baskets/price",
            (basket % "1E+1000000").encode(),
            "application/json",
        ),
        (
            "basket quantity 1e999999999",
            "POST",
            "/api/v1/pos/baskets/price",
            (basket % "1e999999999").encode(),
            "application/json",
        ),
        (
            "product retail_price 1e1000000",
            "POST",
            "/api/v1/products/",
            b'{"id": "p-9", "name": "n", "retail_price": 1e1000000}',
            "application/json",
        ),
        (
            "lone surrogate in a product name",
            "POST",
            "/api/v1/products/",
            b'{"id": "p-9", "name": "\\ud800"}',
            "application/json",
        ),
        ("3,000-digit sale id in the path", "GET", "/api/v1/sales/" + "1" * 3000, b"", ""),
        (
            "10 MB checkout of 2.5 million numbers",
            "POST",
            "/api/v1/pos/checkouts",
            numbers,
            "application/json",
        ),
        ("1.5 MB checkout of 500,000 numbers", "POST", "/api/v1/pos/checkouts", small_numbers, "application/json"),
        ("0.6 MB checkout of 190,000 numbers (parsed)", "POST", "/api/v1/pos/checkouts", below_cap, "application/json"),
        ("10 MB import of 2.5 million numbers", "POST", "/imports/incoming_orders", numbers, "application/json"),
        (
            "4 MB import of 990,000 numbers (parsed)",
            "POST",
            "/imports/incoming_orders",
            b'{"orders": [' + b",".join([b"1.5"] * 990_000) + b"]}",
            "application/json",
        ),
        (
            "11 MiB body to /api/v1/markets/",
            "POST",
            "/api/v1/markets/",
            b'{"x": "' + b"a" * (11 * MIB) + b'"}',
            "application/json",
        ),
        ("nesting 100,000 deep", "POST", "/api/v1/pos/checkouts", b"[" * 100_000 + b"]" * 100_000, "application/json"),
        *invalid_configuration_attacks(),
    ]


def _queue(delivery: dict[str, object]) -> bytes:
    body = {"name": "q", "entity_type": "sales", "transform": {"type": "identity"}, "delivery": delivery}
    return json.dumps(body).encode()


def invalid_configuration_attacks() -> list[tuple[str, str, str, bytes, str]]:
    """Requests whose answers must be JSON errors, and destinations the guard refuses."""
    hook = {"type": "webhook", "url": "https://erp.example.com/hook"}
    mail = {"type": "email", "recipients": ["ops@example.com"]}
    many_fields = "&".join(f"f{i}=1" for i in range(1001))
    return [
        (
            "queue web hook URL http://[x]/",
            "POST",
            "/api/v1/export-queues/",
            _queue({**hook, "url": "http://[x]/"}),
            "application/json",
        ),
        (
            "runtime integration URL http://[x]/",
            "POST",
            "/api/v1/runtime-integrations/",
            json.dumps({"kind": "product_search", "url": "http://[x]/"}).encode(),
            "application/json",
        ),
        ("1,001 query fields", "GET", "/api/v1/markets/?" + many_fields, b"", ""),
        (
            "web hook URL of 60 KB",
            "POST",
            "/api/v1/export-queues/",
            _queue({**hook, "url": "https://erp.example.com/" + "a" * 60_000}),
            "application/json",
        ),
        (
            "from-name with a full-width @",
            "POST",
            "/api/v1/export-queues/",
            _queue({**mail, "from_name": "Acme\uff20bank"}),
            "application/json",
        ),
        (
            "attachment name ..\\",
            "POST",
            "/api/v1/export-queues/",
            _queue({**mail, "attachment_name": "..\\{delivery_id}.{ext}"}),
            "application/json",
        ),
        *unbounded_template_attacks(),
    ]


def _templated(transform: dict[str, object], delivery: dict[str, object]) -> bytes:
    body = {"name": "t", "entity_type": "sales", "transform": transform, "delivery": delivery}
    return json.dumps(body).encode()


def unbounded_template_attacks() -> list[tuple[str, str, str, bytes, str]]:
    """Templates that must stay bounded: format widths, and Handlebars compiles charged to the budget."""
    mail = {"type": "email", "recipients": ["ops@example.com"]}
    identity = {"type": "identity"}
    many_long_paths = ("{{" + ".".join(["ab"] * 18) + "}}\n") * 1000
    one_long_tag = "{{" + ".".join(["a"] * 30_000) + "}}"
    costly_helpers = '{{date a.b "%Y-%m-%d" "Europe/Copenhagen"}}' * 1000
    queues = "/api/v1/export-queues/"
    return [
        (
            "subject {date:>400000000}",
            "POST",
            queues,
            _templated(identity, {**mail, "subject": "{date:>400000000}"}),
            "application/json",
        ),
        (
            "subject width 10**12",
            "POST",
            queues,
            _templated(identity, {**mail, "subject": "{date:>1000000000000}"}),
            "application/json",
        ),
        (
            "Handlebars 1,000 tags of 18 segments",
            "POST",
            queues,
            _templated({"type": "handlebars", "template": many_long_paths}, mail),
            "application/json",
        ),
        (
            "Handlebars one tag of 30,000 segments",
            "POST",
            queues,
            _templated({"type": "handlebars", "template": one_long_tag}, mail),
            "application/json",
        ),
        (
            "Handlebars 1,000 helper calls within the caps",
            "POST",
            queues,
            _templated({"type": "handlebars", "template": costly_helpers}, mail),
            "application/json",
        ),
    ]


def main() -> int:
    folder = Path(tempfile.mkdtemp(prefix="bench-hostile-"))
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{folder / 'db.sqlite3'}",
        "CELERY_BROKER_URL": f"filesystem://{folder / 'broker'}",
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "LOG_LEVEL": "ERROR",
        "VAR_DIR": str(folder),
    }
    harness.manage(env, "migrate", "--noinput")
    key = harness.create_api_key(env, "hostile", "--scope", "pos", "--scope", "admin", "--scope", "imports")
    harness.ensure_demo_structure(env)
    children = harness.Children(log_dir=folder, env=env)
    port = harness.free_port()
    base = f"http://127.0.0.1:{port}"
    query = urlencode({"account": "bench", "integration": "webshop", "apikey": key, "stock_location": "shop-1"})
    try:
        web = children.start_gunicorn(port, 1, "--timeout", "900")
        harness.wait_for(lambda: harness.answers(f"{base}/health/live"), 60, "gunicorn", [web])
        session = requests.Session()
        session.get(f"{base}/api/v1/markets/?{query}")  # the worker's first request loads the application
        worker_pid = int(Path(f"/proc/{web.process.pid}/task/{web.process.pid}/children").read_text().split()[0])
        print(f"one gunicorn worker (pid {worker_pid}), idle RSS {rss_mib(worker_pid):.0f} MiB\n")
        print(f"{'attack':<54} {'status':>6} {'answer':>9} {'RSS':>8} {'next request':>13}")
        for name, method, path, body, content_type in attacks():
            headers = {"Content-Type": content_type} if content_type else {}
            started = time.perf_counter()
            joined = f"{base}{path}{'&' if '?' in path else '?'}{query}"
            response = session.request(method, joined, data=body or None, headers=headers)
            took = time.perf_counter() - started
            started = time.perf_counter()
            session.get(f"{base}/health/live")
            after = time.perf_counter() - started
            print(
                f"{name:<54} {response.status_code:>6} {took * 1000:>7.0f}ms {rss_mib(worker_pid):>6.0f}MiB "
                f"{after * 1000:>11.1f}ms"
            )
    finally:
        children.stop_all()
    return 0


if __name__ == "__main__":
    sys.exit(main())
